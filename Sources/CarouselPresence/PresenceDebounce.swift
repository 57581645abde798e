/// A GPIO line's debounce in software, with no I/O and no clock: each edge
/// (at the kernel's time stamp, µs CLOCK_MONOTONIC) moves the instant the
/// line counts as settled; at that instant the service reads the line's
/// level once. A contact that bounces, or a glitch shorter than the
/// interval, changes presence at most once, and no timer runs at rest.
public struct PresenceDebounce: Equatable, Sendable {
    /// µs the line must hold still; 0: read at every batch of edges.
    public var interval: Int64
    /// When the line counts as settled, if an edge is pending (µs).
    public private(set) var settlesAt: Int64?
    /// The last edge's time stamp (µs): the instant presence is said to change.
    public private(set) var lastEdge: Int64?

    public init(seconds: Double) {
        interval = Int64((seconds * 1_000_000).rounded())
    }

    /// An edge at `time`. Returns true when the level is to be read at
    /// once (no debounce).
    public mutating func edge(at time: Int64) -> Bool {
        lastEdge = max(lastEdge ?? time, time)
        if interval <= 0 {
            settlesAt = nil
            return true
        }
        settlesAt = lastEdge! + interval
        return false
    }

    /// The deadline came at `now`: the edge time to report the level read
    /// now with, once the line has settled; nil while it has not.
    public mutating func due(now: Int64) -> Int64? {
        guard let settles = settlesAt, now >= settles else { return nil }
        settlesAt = nil
        return lastEdge
    }

    /// The line was closed: nothing pending.
    public mutating func reset() {
        settlesAt = nil
        lastEdge = nil
    }
}
