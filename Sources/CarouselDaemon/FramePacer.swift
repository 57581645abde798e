/// When frames may be drawn: never faster than the panel refreshes, never
/// while a presented frame is still on its way to the screen (one frame in
/// flight, STYLE.md's page-flip discipline). A value on the loop's clock
/// (µs), so tests drive it with a manual one.
public struct FramePacer: Sendable {
    /// The panel's refresh period, µs.
    public var period: Int64
    /// A frame was presented and its flip has not completed.
    public private(set) var framePending = false
    public private(set) var framesPresented = 0
    /// When the last frame was presented (µs; meaningful once one was).
    public private(set) var lastFrameTime: Int64 = 0
    private var intervals = (count: 0, sum: Int64(0), max: Int64(0))
    /// The earliest finger movement no frame has shown yet (µs, its own
    /// time stamp), and how long moves waited for the frame that showed
    /// them: the carousel's response to a finger, whatever else draws.
    private var moveWaiting: Int64?
    private var moveToFrame = (count: 0, sum: Int64(0), max: Int64(0))
    /// A move older than this when a frame comes was not what the frame is
    /// for (one under the drag threshold): not counted.
    static let moveHorizon: Int64 = 500_000

    /// A finger moved at `time` (its event's stamp).
    public mutating func fingerMoved(at time: Int64) {
        if moveWaiting == nil { moveWaiting = time }
    }

    /// Slack for timer jitter: a frame due within 1 ms counts as due.
    static let slack: Int64 = 1000
    /// A gap longer than this between two frames starts a new motion (not
    /// counted as a frame interval).
    static let motionGap: Int64 = 100_000

    public init(period: Int64) { self.period = period }

    /// When presenting last failed (µs): the next try waits `retryDelay`.
    private var failedAt: Int64?
    /// How long a failed present waits before the next try.
    public static let retryDelay: Int64 = 1_000_000

    /// The earliest instant the next frame may be drawn, ignoring a flip in flight.
    private var earliest: Int64 {
        var t = framesPresented == 0 ? Int64.min : lastFrameTime + period - Self.slack
        if let failedAt { t = max(t, failedAt + Self.retryDelay) }
        return t
    }

    /// Whether a frame may be drawn at `now`.
    public func mayDraw(at now: Int64) -> Bool { !framePending && now >= earliest }

    /// When the loop should wake for the next frame while something moves;
    /// nil while a flip is in flight (its event wakes the loop).
    public func nextFrame(after now: Int64) -> Int64? { framePending ? nil : max(earliest, now) }

    /// Presenting failed at `now`: the frame stays due, and is tried again
    /// `retryDelay` later rather than on every pass of the loop.
    public mutating func presentFailed(at now: Int64) { failedAt = now }

    /// A frame was presented at `now`; `onScreenLater` when its flip
    /// completes later (a flip event), else it is on screen at once.
    public mutating func presented(at now: Int64, onScreenLater: Bool) {
        failedAt = nil
        if framesPresented > 0, now - lastFrameTime < Self.motionGap {
            intervals.count += 1
            intervals.sum += now - lastFrameTime
            intervals.max = max(intervals.max, now - lastFrameTime)
        }
        if let moved = moveWaiting {
            let wait = now - moved
            if wait >= 0, wait < Self.moveHorizon {
                moveToFrame.count += 1
                moveToFrame.sum += wait
                moveToFrame.max = max(moveToFrame.max, wait)
            }
            moveWaiting = nil
        }
        framePending = onScreenLater
        lastFrameTime = now
        framesPresented += 1
    }

    /// The flip of the frame in flight completed: a buffer is free again.
    public mutating func flipCompleted() { framePending = false }

    /// The display was set up anew: a flip in flight was completed or
    /// dropped by the backend, and no event will come for it.
    public mutating func displayReset() { framePending = false }

    /// One line about frame pacing while moving, for the log at exit.
    public var summary: String {
        guard intervals.count > 0 else { return "presented \(framesPresented) frames" }
        let mean = Double(intervals.sum) / Double(intervals.count) / 1000
        var line = "presented \(framesPresented) frames; while moving, one every \((mean * 10).rounded() / 10) ms on average, "
            + "the longest gap \(Double(intervals.max / 100) / 10) ms"
        if moveToFrame.count > 0 {
            let wait = Double(moveToFrame.sum) / Double(moveToFrame.count) / 1000
            line += "; a finger's move to the frame showing it \((wait * 10).rounded() / 10) ms on average, "
                + "the longest \(Double(moveToFrame.max / 100) / 10) ms (\(moveToFrame.count) frames)"
        }
        return line
    }
}
