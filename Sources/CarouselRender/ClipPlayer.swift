import CarouselCore
import CarouselImaging
import CarouselPlatform
import CarouselText
import CarouselVideo
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One clip playing: a thread of its own decodes its frames (FFmpeg,
/// `VideoDecoder`) and prepares each as the decode cache prepares a
/// picture (the item's size, its fit, the blurred fill and the caption of
/// the clip's first frame, turned to the panel), into a queue of at most
/// `queueLength` frames; the loop takes them when they are due
/// (`take(upTo:)`). Memory is the queue's frames, a few reused buffers and
/// the decoder's own, whatever the clip's length.
///
/// Timing is the loop's: it says where the clip stands (`position(at:)`
/// from `play(from:at:)` and `pause`), and the thread drops a frame that is
/// already late (by the loop's clock when it last took frames) when it
/// comes out of the decoder rather than preparing it
/// (a clip the board cannot decode in real time drops frames; it never
/// plays slower).
public final class ClipPlayer: @unchecked Sendable {
    /// A frame prepared for the screen and its time in the clip (seconds).
    public struct Frame: Sendable {
        public let picture: DecodedImage
        public let time: Double
    }

    /// What the loop finds in the queue.
    public enum Output: Sendable {
        case frame(Frame)
        /// The clip's end, after its last frame (whose time + one frame's duration is `time`).
        case end(time: Double)
        /// The clip cannot go on (a stream that errors midway): why, for one log line.
        case failed(String)
    }

    /// Frames prepared ahead at most: a clip of any length or size holds
    /// this many (each frame is the item's size, 8 MB at 1920x1080). One:
    /// the thread prepares the next frame while one shows, so it has a
    /// frame's time for each, as a player that keeps time must anyway; a
    /// second frame ahead would only absorb a frame slower than that, for a
    /// screen's worth of memory (the peer benchmark's peak RSS was 1.05 to
    /// 1.09x mpv's with two).
    public static let queueLength = 1

    public let path: String
    private let settings: ItemCache.Settings
    private let hardware: Bool
    private let maxPixels: Int
    private let onReady: @Sendable () -> Void

    private struct Shared {
        var queue: [Output] = []
        var stopped = false
        var rewind = false
        /// µs of the loop's clock at which the clip's time 0 was (or would
        /// have been) on screen while it plays; nil while paused.
        var anchor: Int64?
        var info: VideoInfo?
        /// Frames the thread dropped because they were late.
        var droppedLate = 0
        var ended = false
        /// The loop's clock when it last looked (µs), and the monotonic
        /// clock then: the thread's idea of "now" is the one moved on by the
        /// other's time since (the same clock on the daemon; a manual one in tests).
        var loopNow: Int64 = 0
        var loopNowTaken: Int64 = 0
        /// The thread decodes or prepares a frame (false: it waits, or it ended).
        var busy = true
    }

    private let shared = Mutex(Shared())
    /// Rung whenever the thread may have something to do (it looks again).
    private let wake = DispatchSemaphore(value: 0)
    /// The clip's own thread (a queue of its own: it blocks on `wake`).
    private let queue = DispatchQueue(label: "carouseld.clip", qos: .userInitiated)

    /// Reads a monotonic clock (µs): time passing since the loop last
    /// looked, and how long preparing a frame takes. `{ 0 }` for a loop on a
    /// manual clock: lateness is then judged by the loop's readings alone.
    private let elapsed: @Sendable () -> Int64

    public init(path: String, settings: ItemCache.Settings, hardware: Bool, maxPixels: Int,
                elapsed: @escaping @Sendable () -> Int64 = MonotonicClock.now,
                onReady: @escaping @Sendable () -> Void) {
        self.elapsed = elapsed
        self.path = path
        self.settings = settings
        self.hardware = hardware
        self.maxPixels = maxPixels
        self.onReady = onReady
    }

    /// Starts decoding (paused: the first frames are prepared, and wait).
    public func start() {
        queue.async { [self] in run() }
    }

    /// The clip plays on, its time `position` now (`now`, the loop's µs).
    public func play(from position: Double, at now: Int64) {
        shared.withLock {
            $0.anchor = now - Int64(position * 1_000_000)
            $0.loopNow = now
            $0.loopNowTaken = elapsed()
        }
        signal()
    }

    /// Frames stop being dropped for lateness; the queue fills and waits.
    public func pause() {
        shared.withLock { $0.anchor = nil }
        signal()
    }

    /// Back to the clip's start (loop): what is queued goes.
    public func rewind() {
        shared.withLock {
            $0.queue.removeAll()
            $0.rewind = true
            $0.ended = false
            $0.busy = true
        }
        signal()
    }

    /// The thread ends (soon: after the frame it prepares); nothing more is queued.
    public func stop() {
        shared.withLock {
            $0.stopped = true
            $0.queue.removeAll()
        }
        signal()
    }

    /// Where the clip stands at `now` while it plays.
    public func position(at now: Int64) -> Double? {
        shared.withLock { s in s.anchor.map { Double(now - $0) / 1_000_000 } }
    }

    /// The clip's facts, once the decoder opened it.
    public var info: VideoInfo? { shared.withLock { $0.info } }

    /// Frames dropped by the thread (late out of the decoder) so far.
    public var droppedLate: Int { shared.withLock { $0.droppedLate } }

    /// When the head of the queue is due (the loop's µs), if it plays and
    /// something is queued: a frame at its time, the end after the last
    /// frame, a failure at once.
    public func nextDue() -> Int64? {
        shared.withLock { s in
            guard let anchor = s.anchor, let head = s.queue.first else { return nil }
            switch head {
            case .frame(let f): return anchor + Int64(f.time * 1_000_000)
            case .end(let t): return anchor + Int64(t * 1_000_000)
            case .failed: return .min
            }
        }
    }

    /// Whether a frame is queued (a paused clip's first frame after a start).
    public var peek: Output? { shared.withLock { $0.queue.first } }

    /// Takes everything due by `now` (µs): the newest frame among them (the
    /// older ones are dropped: they would be late on screen), how many were
    /// dropped, and the end or failure if that came due. While paused,
    /// nothing is due but, with `first`, the first frame queued (a start
    /// shows it at once, and the clip's clock starts from it).
    public func take(upTo now: Int64, first: Bool = false) -> (frame: Frame?, dropped: Int, last: Output?) {
        let result = shared.withLock { s -> (Frame?, Int, Output?) in
            var frame: Frame?
            var dropped = 0
            let anchor = s.anchor
            if now > s.loopNow {
                s.loopNow = now
                s.loopNowTaken = elapsed()
            }
            while let head = s.queue.first {
                switch head {
                case .frame(let f):
                    if let anchor {
                        guard anchor + Int64(f.time * 1_000_000) <= now else { return (frame, dropped, nil) }
                    } else if !first || frame != nil {
                        return (frame, dropped, nil)
                    }
                    if frame != nil { dropped += 1 }
                    frame = f
                    s.queue.removeFirst()
                    // Room in the queue: the thread has work (until it says it waits).
                    if !s.ended { s.busy = true }
                case .end(let t):
                    guard let anchor, anchor + Int64(t * 1_000_000) <= now else { return (frame, dropped, nil) }
                    s.queue.removeFirst()
                    return (frame, dropped, head)
                case .failed:
                    s.queue.removeFirst()
                    return (frame, dropped, head)
                }
            }
            return (frame, dropped, nil)
        }
        signal()
        return result
    }

    // MARK: - The thread

    private func signal() { wake.signal() }

    /// Waits until `ready` holds (checked under the shared lock) or the
    /// player stops. A ring that came while it worked is a look more, never
    /// a look less.
    private func wait(until ready: (Shared) -> Bool) {
        while !shared.withLock({ s in
            let go = s.stopped || ready(s)
            s.busy = go
            return go
        }) {
            wake.wait()
        }
    }

    /// Blocks until the thread waits (its queue full, the clip's end
    /// reached) or ended: for tests and tools on a manual clock, never on the loop.
    public func waitUntilIdle() {
        while shared.withLock({ $0.busy }) { usleep(500) }
    }

    private func push(_ output: Output) {
        shared.withLock { s in
            guard !s.stopped else { return }
            s.queue.append(output)
            if case .end = output { s.ended = true }
        }
        onReady()
    }

    private func run() {
        defer {
            shared.withLock { $0.busy = false }
            signal()
        }
        let decoder: VideoDecoder
        do {
            decoder = try VideoDecoder(path: path, hardware: hardware, maxPixels: maxPixels)
        } catch {
            push(.failed(error.reason))
            return
        }
        shared.withLock { $0.info = decoder.info }
        var canvas: ClipCanvas
        do {
            canvas = try ClipCanvas(decoder: decoder, path: path, settings: settings)
        } catch {
            push(.failed("\(error)"))
            return
        }
        // The frame's duration by the clip's rate (a late frame is one later than this).
        let period = 1 / max(1, min(240, decoder.info.frameRate ?? 30))
        var lastTime = 0.0
        var preparing = 0.0
        // The clip's time of the last frame prepared: when the decoder falls
        // behind the clip, one is prepared every half second of the clip,
        // so a board that decodes slower than real time still shows it move.
        var lastPrepared = -Double.infinity
        while true {
            wait { s in s.rewind || (!s.ended && s.queue.filter { if case .frame = $0 { true } else { false } }.count < Self.queueLength) }
            let (stopped, rewind) = shared.withLock { s in
                defer { s.rewind = false }
                return (s.stopped, s.rewind)
            }
            if stopped { return }
            if rewind {
                do { try decoder.rewind() } catch {
                    push(.failed(error.reason))
                    return
                }
            }
            let time: Double?
            do {
                time = try decoder.next()
            } catch {
                push(.failed(error.reason))
                return
            }
            guard let time else {
                push(.end(time: lastTime + period))
                continue
            }
            lastTime = time
            // Late already, or late by the time it would be prepared (the
            // loop's clock past its time by a frame): dropped here, before
            // the costly part, unless it is the first (a start shows something).
            let late = shared.withLock { s -> Bool in
                guard let anchor = s.anchor, decoder.framesDecoded > 1 else { return false }
                let loopNow = s.loopNow + (elapsed() - s.loopNowTaken)
                let position = Double(loopNow - anchor) / 1_000_000
                // Behind already: the decoder itself cannot keep up; one
                // frame every half second of the clip is shown anyway.
                if time + period < position, time - lastPrepared >= 0.5 { return false }
                if time + period < position + preparing {
                    s.droppedLate += 1
                    return true
                }
                return false
            }
            if late { continue }
            do {
                let started = elapsed()
                let picture = try canvas.frame(from: decoder)
                lastPrepared = time
                // How long preparing a frame takes here (a moving average).
                preparing += (Double(elapsed() - started) / 1_000_000 - preparing) / 4
                push(.frame(Frame(picture: picture, time: time)))
            } catch {
                push(.failed("\(error)"))
                return
            }
        }
    }
}

/// How a clip's frames are prepared for the screen: what stays of its
/// prepared first frame around the frame (the blurred fill, the
/// background), where the frame goes, its caption, and a few reused buffers.
struct ClipCanvas {
    /// What shows around the frame (the first frame prepared, without its
    /// caption); nil when the frame covers the item and nothing shows.
    let template: DecodedImage?
    let size: PixelSize
    let placement: PixelRect
    let caption: (sprite: DecodedImage, x: Int, y: Int)?
    let rotation: Rotation
    /// Buffers of frames handed out; one nothing else holds any more is written again.
    private var pool: [DecodedImage] = []
    /// The frame covers the item: nothing of the template shows.
    let covers: Bool

    init(decoder: VideoDecoder, path: String, settings: ItemCache.Settings) throws {
        let box = settings.itemSize
        let upright = decoder.info.uprightSize
        placement = ImageScaler.placement(of: upright, in: box, fit: settings.fit)
        covers = placement.x <= 0 && placement.y <= 0 && placement.x + placement.width >= box.width
            && placement.y + placement.height >= box.height
        size = box
        rotation = settings.rotation
        if let captioning = settings.caption, captioning.kind != .none, let text = Captioner.sprite(for: path, in: box, captioning) {
            caption = (text.sprite, text.x, text.y)
        } else {
            caption = nil
        }
        // What shows around the frames: the first frame as the cache
        // prepares it, without its caption. Not made (nor kept: a screen's
        // worth of memory) when the frames cover the item.
        if covers {
            template = nil
            return
        }
        guard try decoder.next() != nil else { throw VideoError(path: path, reason: "no frame to show") }
        let first = try DecodedImage(width: upright.width, height: upright.height, format: .xrgb8888) { pixels, stride in
            try? decoder.draw(into: pixels.baseAddress!, width: upright.width, height: upright.height, stride: stride,
                              rect: PixelRect(x: 0, y: 0, width: upright.width, height: upright.height))
        }
        template = try ImageScaler.scale(first, to: box, fit: settings.fit, background: settings.background, blur: settings.blur)
        try decoder.rewind()
    }

    /// The decoder's current frame prepared for the screen.
    mutating func frame(from decoder: VideoDecoder) throws -> DecodedImage {
        let picture = try buffer(for: decoder)
        if let template { picture.copyOutside(placement, from: template) }
        var failure: Error?
        picture.withUnsafeMutableBytes { pixels in
            do throws(VideoError) {
                try decoder.draw(into: pixels.baseAddress!, width: picture.width, height: picture.height,
                                 stride: picture.stride, rect: placement)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        if let caption { try picture.drawOver(caption.sprite, x: caption.x, y: caption.y) }
        return rotation == .none ? picture : try picture.turned(rotation)
    }

    /// A buffer of the item's size: one from the pool nothing else holds,
    /// under a new identity, or a new one.
    private mutating func buffer(for decoder: VideoDecoder) throws -> DecodedImage {
        for i in pool.indices where isKnownUniquelyReferenced(&pool[i]) {
            pool[i] = pool[i].reissued()
            return pool[i]
        }
        let fresh = try DecodedImage(width: size.width, height: size.height, format: .xrgb8888) { _, _ in }
        // Kept: the queue's, the frame on screen and the one the screen's
        // scene still holds until the next frame is drawn (a screenshot's,
        // rarely, is a buffer more for a while, not kept).
        if pool.count < ClipPlayer.queueLength + 2 {
            // The pool's buffers are memory the decoding helper shares: it
            // writes each frame there itself, so this process copies no
            // more than when FFmpeg ran in it. They live as long as the
            // canvas, hence as long as the decoder. (A buffer not kept costs
            // a copy from the helper's scratch memory.)
            try decoder.share(fresh)
            pool.append(fresh)
        }
        return fresh
    }
}
