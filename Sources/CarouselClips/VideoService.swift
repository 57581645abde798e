import CarouselClipsWords
import CarouselConfig
import CarouselCore
import CarouselImaging
import CarouselLoop
import CarouselPlatform
import CarouselRender
import CarouselVideo

/// Clips on the loop (`[video]`): when the carousel rests on a clip it
/// plays (`ClipPlayback` decides, a `ClipPlayer` decodes on a thread of its
/// own); its frames replace the clip's first frame in what the screen
/// shows (`LoopAsk.picture`), each when its time comes, paced by the
/// display (a frame due while the display still shows the last one waits
/// for the flip; a newer one due by then replaces it: dropped, never slow
/// motion). The model hears whether a clip plays (autoplay waits) and
/// when it ended (autoplay moves on).
public final class VideoService: LoopService {
    public let name = "video"
    public let subscriptions: LoopHappening.Kinds = [.configured, .laidOut, .modelChanged]
    private let context: ServiceContext
    private var playback: ClipPlayback
    private var player: ClipPlayer?
    /// What the player's frames are made for (the decode cache's settings when it started).
    private var playerSettings: ItemCache.Settings?
    /// The clip's item, while a player is there.
    private var item = 0
    /// The frame on screen in place of the clip's first frame.
    private var current: ClipPlayer.Frame?
    /// Where the clip stood when it paused (seconds).
    private var pausedAt = 0.0
    /// The clip plays and its clock has not started: it starts with the first frame.
    private var awaitingFirstFrame = false
    /// Frames shown and dropped of this clip.
    private var shown = 0
    private var droppedOnLoop = 0
    /// Frames the display had been given when the frame on screen was taken.
    private var takenAtPresented = 0
    /// The clip was said to be too heavy for the board (once per clip).
    public private(set) var heavyLogged = false
    private var startLogged = false
    private var bell: LoopExecutor.Doorbell!
    /// The last item key asked whether it is a clip, and the answer: every
    /// model change asks for the current item (each frame of a slide), and
    /// the name's extension need not be parsed again for the same key.
    private var lastAsked: (key: PageKey, isClip: Bool)?

    public init(context: ServiceContext) {
        self.context = context
        playback = ClipPlayback(settings: Self.settings(context.view.config))
        bell = context.doorbell { [unowned self] in self.pump(now: self.context.now) }
    }

    private static func settings(_ config: Configuration) -> ClipPlayback.Settings {
        ClipPlayback.Settings(loop: config.video.loop, maxSeconds: config.video.maxSeconds)
    }

    public var deadline: Int64? {
        var earliest = player?.nextDue()
        if let cap = playback.deadline?.microseconds { earliest = min(earliest ?? cap, cap) }
        return earliest
    }

    public func due(now: Int64) { pump(now: now) }

    public func observe(_ happening: LoopHappening, now: Int64) {
        switch happening {
        case .configured(let old):
            let config = context.view.config
            playback.settings = Self.settings(config)
            // A clip plays on under new settings (`loop`, `max_seconds`)
            // unless how its frames are made changed.
            if old.video.hardware != config.video.hardware || old.video.maxPixels != config.video.maxPixels {
                restart(now: now)
            }
            sync(now: now)
        case .laidOut, .modelChanged:
            sync(now: now)
        default:
            break
        }
    }

    public func stop() { player?.stop() }

    // MARK: - The policy

    private func view(at now: Int64) -> ClipPlayback.View {
        let view = context.view
        return ClipPlayback.View(of: view.model, at: Timestamp(microseconds: now), displayOn: !view.displayIsOff) { i in
            guard let key = view.pageKey(i) else { return false }
            return isClip(key)
        }
    }

    private func isClip(_ key: PageKey) -> Bool {
        if let lastAsked, lastAsked.key == key { return lastAsked.isClip }
        let answer = !key.isPair && ClipName.isClip(key.first)
        lastAsked = (key, answer)
        return answer
    }

    /// Looks at the carousel and carries out what the policy says. What it
    /// tells the model comes back as `modelChanged` once it has returned.
    private func sync(now: Int64) {
        let pages = context.view
        // Frames are made for the item's size, fit, fill, caption and
        // the panel's turn: a new layout or style starts the clip again.
        if player != nil, playerSettings != pages.pictureSettings { restart(now: now) }
        // The album changed under the clip: it plays on under its new
        // index, or stops if it left.
        if let player, pages.pageKey(item) != PageKey(player.path) {
            if let moved = (0..<pages.pageCount).first(where: { pages.pageKey($0) == PageKey(player.path) }) {
                item = moved
                playback.renumber(to: moved)
            } else {
                restart(now: now)
            }
        }
        let v = view(at: now)
        carryOut(playback.update(v, at: Timestamp(microseconds: now)), now: now)
        let presence = playback.presence(clipOnPage: v.clip != nil)
        if pages.model.video != presence { context.ask(.model(.video(presence))) }
    }

    private func carryOut(_ actions: [ClipPlayback.Action], now: Int64) {
        for action in actions {
            switch action {
            case .start(let item):
                start(item: item, now: now)
            case .pause:
                guard let player else { break }
                pausedAt = player.position(at: now) ?? pausedAt
                player.pause()
            case .resume:
                player?.play(from: pausedAt, at: now)
            case .stop:
                stopPlayer(now: now)
            case .restart:
                guard let player else { break }
                player.rewind()
                pausedAt = 0
                awaitingFirstFrame = true
                player.pause()
            case .finish:
                finish(now: now)
            }
        }
    }

    private func start(item: Int, now: Int64) {
        stopPlayer(now: now)
        guard let key = context.view.pageKey(item) else { return }
        let config = context.view.config
        let bell = self.bell!
        let elapsed: @Sendable () -> Int64
        if context.view.realTime {
            elapsed = { MonotonicClock.now() }
        } else {
            elapsed = { 0 }
        }
        playerSettings = context.view.pictureSettings
        // A clip is always alone on its page.
        let player = ClipPlayer(path: key.first, settings: playerSettings!,
                                hardware: config.video.hardware == .auto, maxPixels: config.video.maxPixels,
                                elapsed: elapsed) { bell.ring() }
        self.player = player
        self.item = item
        pausedAt = 0
        awaitingFirstFrame = true
        shown = 0
        droppedOnLoop = 0
        heavyLogged = false
        startLogged = false
        player.start()
    }

    /// Lets the clip go; the next look starts it afresh if the carousel rests on it.
    private func restart(now: Int64) {
        stopPlayer(now: now)
        playback.forget()
    }

    private func stopPlayer(now: Int64) {
        guard let player else { return }
        player.stop()
        self.player = nil
        if current != nil {
            current = nil
            context.ask(.picture(key: PageKey(player.path), nil))
        }
    }

    /// The clip is over (its end, the cap, or a failure): its last frame stays, autoplay may move on.
    private func finish(now: Int64) {
        guard let player else { return }
        pausedAt = player.position(at: now) ?? pausedAt
        player.pause()
        let dropped = droppedOnLoop + player.droppedLate
        log(.info, "video: ended \(item) (\(player.path)) after \(shown) frames, \(dropped) dropped")
        context.ask(.event(LoopEvent(.didEndVideo, ["index": .int(item), "image": .string(player.path),
                                                     "frames": .int(shown), "dropped": .int(dropped)])))
        context.ask(.model(.videoEnded))
    }

    // MARK: - Frames

    /// Takes what is due from the player: a frame to show, its end, a failure.
    private func pump(now: Int64) {
        guard let player else { return }
        if let due = playback.deadline, due.microseconds <= now {
            carryOut(playback.fire(at: Timestamp(microseconds: now)), now: now)
        }
        let taken = player.take(upTo: now, first: awaitingFirstFrame)
        if let frame = taken.frame {
            // The frame before it never reached the screen (no frame was
            // presented since it was taken): dropped too, not shown.
            if current != nil, takenAtPresented == context.view.framesPresented, shown > 0 {
                shown -= 1
                droppedOnLoop += 1
            }
            current = frame
            takenAtPresented = context.view.framesPresented
            shown += 1
            droppedOnLoop += taken.dropped
            context.ask(.picture(key: PageKey(player.path), frame.picture))
            if awaitingFirstFrame {
                awaitingFirstFrame = false
                if case .playing = playback.state { player.play(from: frame.time, at: now) } else { pausedAt = frame.time }
                announce(player)
            }
            noteRate(player, now: now)
        }
        switch taken.last {
        case .end?:
            carryOut(playback.clipEnded(view(at: now), at: Timestamp(microseconds: now)), now: now)
        case .failed(let why)?:
            log(.warning, "video: \(player.path): \(why); moving on")
            carryOut(playback.clipFailed(view(at: now), at: Timestamp(microseconds: now)), now: now)
        default:
            break
        }
    }

    /// Once per clip, with its first frame: what plays.
    private func announce(_ player: ClipPlayer) {
        guard !startLogged else { return }
        startLogged = true
        let info = player.info
        let size = info.map { "\($0.uprightSize)" } ?? "?"
        let seconds = info?.duration.map { "\(Self.tenths($0)) s" } ?? "length unknown"
        log(.info, "video: playing \(item) (\(player.path)), \(size) \(info?.decoder ?? "?"), \(seconds)")
        context.ask(.event(LoopEvent(.didStartVideo, ["index": .int(item), "image": .string(player.path),
                                                       "duration": info?.duration.map { .double($0) } ?? .null])))
    }

    /// A clip the board cannot decode in real time: said once, with the rate reached.
    private func noteRate(_ player: ClipPlayer, now: Int64) {
        guard !heavyLogged, let rate = player.info?.frameRate, let position = player.position(at: now), position >= 2 else { return }
        let dropped = droppedOnLoop + player.droppedLate
        let reached = Double(shown) / position
        guard dropped > 0, reached < rate * 0.9 else { return }
        heavyLogged = true
        // Decoding, preparing or drawing: whichever of them the board cannot keep up with.
        log(.warning, "video: \(player.path): this board shows \(Self.tenths(reached)) of \(Self.tenths(rate)) frames a second"
            + " of it; dropping frames to keep time")
    }

    /// Waits for the player's thread to catch up, then takes what is due:
    /// for tests on a manual clock (never on the loop). What it asks is
    /// carried out at the loop's next pass.
    public func settle() {
        // As the loop does on each ring: take, and look again once the
        // thread made the next (a frame already due is taken at once).
        while let player {
            player.waitUntilIdle()
            let before = (shown, droppedOnLoop, player.peek == nil)
            pump(now: context.now)
            if (shown, droppedOnLoop, player.peek == nil) == before || player.nextDue().map({ $0 > context.now }) ?? true {
                break
            }
        }
    }

    /// `x` to a tenth, as a log line says it (12.3).
    static func tenths(_ x: Double) -> String {
        let t = Int((x * 10).rounded())
        return "\(t / 10).\(abs(t % 10))"
    }

    // MARK: - Status

    /// `status`'s `video`: the clip on the page, if one is.
    public func status(now: Int64) -> [String: JSONValue] { ["video": status(at: now)] }

    private func status(at now: Int64) -> JSONValue {
        guard let player else { return .null }
        let state: String
        switch playback.state {
        case .playing: state = "playing"
        case .paused: state = "paused"
        case .ended: state = "ended"
        case .idle: return .null
        }
        let position = player.position(at: now) ?? pausedAt
        return .object([
            "image": .string(player.path), "index": .int(item), "state": .string(state),
            "position": .double((position * 1000).rounded() / 1000),
            "duration": player.info?.duration.map { .double($0) } ?? .null,
            "frames": .int(shown), "dropped": .int(droppedOnLoop + player.droppedLate),
            "decoder": player.info.map { .string($0.decoder) } ?? .null,
        ])
    }
}

extension LoopEvent.Name {
    /// A clip on the page started playing (its first frame is on its way to the screen).
    public static let didStartVideo = LoopEvent.Name(ClipsWords.didStartVideo)
    /// A clip stopped at its end, at `[video] max_seconds`, or on a failure.
    public static let didEndVideo = LoopEvent.Name(ClipsWords.didEndVideo)
}

extension Configuration {
    /// `[video]`, the settings this room declared (`ClipsWords`).
    var video: VideoSettings { self[VideoSettings.self] }
}
