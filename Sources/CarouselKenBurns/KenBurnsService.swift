import CarouselConfig
import CarouselCore
import CarouselImaging
import CarouselKenBurnsWords
import CarouselLoop
import CarouselPlatform
import CarouselRender
import Dispatch

/// `[ken_burns]`: the picture at rest moves slowly, drawn by the house's
/// zoom path (a scaled copy of its picture each frame, at most `fps` a
/// second). It only says how each page's picture is framed
/// (`LoopAsk.framing`) and when a frame is due (`LoopAsk.frame`):
///
/// * at rest, the page on screen moves from where it was shown to where its
///   move ends (`KenBurnsPlan`), over the rest autoplay gives it, or for
///   ever slowing to a stop;
/// * a finger, a slide or a zoom stops it where it is: the house keeps
///   drawing it so (a swipe carries it), and the pages that may come in are
///   shown where their moves start, so that a page comes to rest where its
///   move begins;
/// * the next rest starts a new move.
///
/// The facts a move is planned from (the picture's size and faces) are read
/// off the loop, for the page on screen and its neighbours.
public final class KenBurnsService: LoopService {
    public let name = "ken burns"
    public var subscriptions: LoopHappening.Kinds { [.configured, .laidOut, .modelChanged] }

    private let context: ServiceContext
    private let queue = DispatchQueue(label: "carouseld.ken-burns", qos: .utility)
    /// Facts read, for the pages around the one on screen (bounded: see `forgetFacts`).
    private var facts: [PageKey: PictureFacts] = [:]
    private var reading: Set<PageKey> = []
    /// How the house is asked to draw each page now (a page not here: whole).
    private var shown: [PageKey: Framing] = [:]
    /// The largest scale each was shown with (what its decode is asked for).
    private var shownScale: [PageKey: Double] = [:]

    private struct Rest {
        var key: PageKey
        var move: KenBurnsMove
        var start: Int64
        /// Seconds the rest lasts (autoplay's next advance); nil: for ever.
        var duration: Double?
        /// The advance the duration was read from.
        var until: Int64?
    }
    private var rest: Rest?
    private var nextTick: Int64?
    private var frames = 0
    private var dropped = 0

    public init(context: ServiceContext) {
        self.context = context
        sync(now: context.now)
    }

    public var deadline: Int64? { nextTick }

    public func observe(_ happening: LoopHappening, now: Int64) {
        switch happening {
        case .configured(let old):
            // New settings or a new layout: moves are planned again (the
            // pictures' facts stay: they are the files').
            if old[KenBurnsSettings.self] != context.view.config[KenBurnsSettings.self] { rest = nil }
        case .laidOut:
            rest = nil
        default:
            break
        }
        sync(now: now)
    }

    public func due(now: Int64) { tick(now: now) }

    public func status(now: Int64) -> [String: JSONValue] {
        guard let rest, let framing = shown[rest.key] else { return ["ken_burns": .null] }
        return ["ken_burns": .object(["move": .string(rest.move.kind.rawValue),
                                      "scale": .double((framing.scale * 1000).rounded() / 1000),
                                      "faces": .int(rest.move.faces), "frames": .int(frames), "dropped": .int(dropped),
                                      "fps": .double(framePeriod > 0 ? (1e7 / Double(framePeriod)).rounded() / 10 : 0)])]
    }

    // MARK: - The policy

    private var settings: KenBurnsSettings { context.view.config[KenBurnsSettings.self] }

    /// Looks at the carousel: starts, carries on or stops the move.
    private func sync(now: Int64) {
        let view = context.view
        let settings = self.settings
        guard settings.enabled, view.pageCount > 0 else {
            stopAll()
            return
        }
        let model = view.model
        let time = Timestamp(microseconds: now)
        let count = view.pageCount
        let current = model.currentItemIndex(at: time)
        func key(_ i: Int) -> PageKey? { view.pageKey(((i % count) + count) % count) }
        var near = [current, current + 1, current - 1].compactMap(key)
        if let heading = model.restingOffset, let k = key(model.lattice.itemIndex(at: heading)) { near.append(k) }
        for k in near { readFacts(k) }
        forgetFacts(keeping: Set(near))

        // The pages that may come in wait where their moves start (shown so
        // already at rest: the house draws them once, before a finger lands).
        for k in near.dropFirst() where shown[k] == nil {
            if let m = plannedMove(k) { show(k, m.from, largestScale: m.largestScale) }
        }
        let atRest = !model.isMoving && model.motionState == .idle && model.zoomView(at: time) == nil
        guard atRest, !view.displayIsOff, let page = key(current) else {
            // Stopped where it is. A frame now (a finger landed, a slide
            // began) has the house draw the still framing once, before the
            // finger's first move needs it.
            if rest != nil { context.ask(.frame) }
            rest = nil
            nextTick = nil
            return
        }
        let until = model.autoplayStatus.next?.microseconds
        if var r = rest, r.key == page {
            // Autoplay's schedule changed (paused, resumed): the move goes on
            // from where it is, over what the rest has left.
            if r.until != until, let at = shown[page] {
                r.move = r.move.starting(at: at)
                r.start = now
                r.until = until
                r.duration = until.map { Double(max($0 - now, 0)) / 1e6 }
                rest = r
                if nextTick == nil { nextTick = now }
            }
            return
        }
        // A new rest.
        for k in Array(shown.keys) where k != page && !near.contains(k) { show(k, nil, largestScale: 1) }
        guard !isClip(page), let planned = plannedMove(page) else {
            rest = nil
            nextTick = nil
            if shown[page] != nil { show(page, nil, largestScale: 1) }
            return
        }
        let move: KenBurnsMove
        if let at = shown[page] {
            move = planned.starting(at: at)
        } else {
            // Not shown framed on its way in: from the whole picture, to the
            // end of its move farther from it.
            let box = boxSize
            let far = planned.from.distance(to: .whole, width: box.w, height: box.h)
                > planned.to.distance(to: .whole, width: box.w, height: box.h) ? planned.from : planned.to
            move = KenBurnsMove(kind: planned.kind, from: .whole, to: far, faces: planned.faces)
        }
        rest = Rest(key: page, move: move, start: now, duration: until.map { Double(max($0 - now, 0)) / 1e6 }, until: until)
        nextTick = nil
        tick(now: now)
    }

    /// Draws the move where it is now and says when the next frame is due.
    private func tick(now: Int64) {
        guard let r = rest else {
            nextTick = nil
            return
        }
        let period = Self.period(fps: settings.fps, frameCost: context.view.framedFrameCost)
        framePeriod = period
        let seconds = Double(now - r.start) / 1e6
        let progress = KenBurnsPlan.progress(at: seconds, duration: r.duration)
        // Done at the rest's end; for ever, once what is left of the move is
        // less than half a pixel: then it shows where the move ends.
        let box = boxSize
        var framing = r.move.framing(at: progress)
        let end = r.move.framing(at: 1)
        let done = progress >= 1 || framing.distance(to: end, width: box.w, height: box.h) < 0.5
        if done { framing = end }
        // The sharper decode is asked for once the picture has rested a
        // while: pages swiped past quickly cost no decode each (on one core
        // it would compete with the next swipe), and the first second of a
        // move magnifies little.
        show(r.key, framing, largestScale: now - r.start >= Self.sharpAfter ? r.move.largestScale : 1)
        if done {
            nextTick = nil
            return
        }
        if let scheduled = nextTick {
            let following = scheduled + period
            if following <= now {
                // The loop came late (a slow board, a busy pass): frames are
                // skipped, never queued.
                dropped += Int((now - scheduled) / period)
                nextTick = now + period
            } else {
                nextTick = following
            }
        } else {
            nextTick = now + period
        }
    }

    /// The share of the loop's time Ken Burns may take at most: the rest is
    /// for a finger landing, which then waits at most for one of its frames.
    static let loopShare: Int64 = 4

    /// The time between frames: the `fps` cap, or longer on a board where a
    /// frame costs more than a quarter of it (the move is drawn less often,
    /// never the carousel's response to a finger).
    static func period(fps: Int, frameCost: Int64) -> Int64 {
        max(Int64(1_000_000 / max(1, fps)), loopShare * max(frameCost, 0))
    }

    /// The period the move is drawn at now (for `status`).
    private var framePeriod: Int64 = 0

    private var boxSize: (w: Double, h: Double) {
        let item = context.view.pictureSettings.itemSize
        return (Double(max(item.width, 1)), Double(max(item.height, 1)))
    }

    private func plannedMove(_ key: PageKey) -> KenBurnsMove? {
        guard let facts = facts[key], !isClip(key) else { return nil }
        let picture = context.view.pictureSettings
        return KenBurnsPlan.move(for: key, facts: facts, settings: settings, box: picture.itemSize, fit: picture.fit)
    }

    private func isClip(_ key: PageKey) -> Bool { !key.isPair && ClipName.isClip(key.first) }

    /// How long a picture rests (µs) before its sharper decode is asked for.
    static let sharpAfter: Int64 = 1_000_000

    private func show(_ key: PageKey, _ framing: Framing?, largestScale: Double) {
        guard shown[key] != framing || shownScale[key] != largestScale else { return }
        shownScale[key] = framing == nil ? nil : largestScale
        if shown[key] != framing, framing != nil { frames += 1 }
        shown[key] = framing
        context.ask(.framing(key: key, framing, largestScale: largestScale))
        context.ask(.frame)
    }

    private func stopAll() {
        rest = nil
        nextTick = nil
        for k in Array(shown.keys) { show(k, nil, largestScale: 1) }
    }

    // MARK: - Facts, off the loop

    private func readFacts(_ key: PageKey) {
        guard facts[key] == nil, !reading.contains(key), !isClip(key) else { return }
        reading.insert(key)
        context.run(on: queue, { PictureFacts.read(key) }, then: { [weak self] read in
            guard let self else { return }
            self.reading.remove(key)
            self.facts[key] = read
            self.sync(now: self.context.now)
        })
    }

    /// Keeps the facts of the pages around the one on screen, and a few more.
    private func forgetFacts(keeping near: Set<PageKey>) {
        guard facts.count > 16 else { return }
        for k in Array(facts.keys) where !near.contains(k) { facts[k] = nil }
    }
}
