import CarouselCore
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// Local wall-clock time for `[power] schedule`, on the loop's own clock
/// (µs of CLOCK_MONOTONIC). Tests put a manual week in its place.
public struct LocalClock: Sendable {
    /// The minute of the week (0 = Monday 00:00, local time) at loop time `now`.
    public var weekMinute: @Sendable (_ now: Int64) -> Int
    /// The loop time at which the local clock shows the start of the minute
    /// `minutes` after the one it shows at `now` (wall-clock minutes: across
    /// a daylight-saving change the real time between differs).
    public var instant: @Sendable (_ minutes: Int, _ now: Int64) -> Int64

    public init(weekMinute: @escaping @Sendable (Int64) -> Int, instant: @escaping @Sendable (Int, Int64) -> Int64) {
        self.weekMinute = weekMinute
        self.instant = instant
    }

    /// The system's time zone and wall clock, related to the loop's clock
    /// as they are at the moment of asking (so a clock that was set since
    /// is taken as it is now).
    public static let system = LocalClock(
        weekMinute: { now in LocalTime.weekMinute(at: Int((now + realtimeOffset()) / 1_000_000)).minute },
        instant: { minutes, now in
            let offset = realtimeOffset()
            let epoch = LocalTime.instant(minutes: minutes, afterMinuteOf: Int((now + offset) / 1_000_000))
            return Int64(epoch) * 1_000_000 - offset
        })

    /// CLOCK_REALTIME minus CLOCK_MONOTONIC, µs.
    static func realtimeOffset() -> Int64 {
        var real = timespec(), mono = timespec()
        clock_gettime(CLOCK_REALTIME, &real)
        clock_gettime(CLOCK_MONOTONIC, &mono)
        return (Int64(real.tv_sec) - Int64(mono.tv_sec)) * 1_000_000 + (Int64(real.tv_nsec) - Int64(mono.tv_nsec)) / 1000
    }
}

extension Daemon {
    /// The schedule at `now`: the display is switched off when an on-time
    /// ends and on when one begins (while `display auto` decides), and the
    /// next change is the screen power's deadline. `recompute` looks again
    /// before the deadline (a reload, the wall clock set); `reassert` also
    /// makes the display what the schedule says now (`display auto`). Only
    /// once the first picture is on screen (or there is none to wait for): a
    /// daemon started at night shows it, and tells systemd it is ready,
    /// before it goes dark. A picture that never decodes holds this up 30 s at most.
    func applySchedule(now: Int64, recompute: Bool = false, reassert: Bool = false) {
        guard scheduleMayApply(now: now) else { return }
        guard let schedule = config.power.schedule else {
            if let action = power.scheduleRemoved() { carryOut(action, at: now) }
            return
        }
        // Between changes (or with none to come) there is nothing to look at.
        guard power.scheduleDue(now: now, recompute: recompute || reassert) else { return }
        let minute = localClock.weekMinute(now)
        let next = schedule.minutesToNextChange(after: minute).map { localClock.instant($0, now) }
        if let action = power.schedule(off: !schedule.isOn(weekMinute: minute), nextChange: next, now: now, reassert: reassert) {
            carryOut(action, at: now)
        }
    }

    private func scheduleMayApply(now: Int64) -> Bool {
        frames.firstFrameShown && (frames.pictureShown || album.isEmpty || now - startTime > Self.scheduleWaitMicroseconds)
    }

    /// How long the schedule's first word waits for the start picture.
    static let scheduleWaitMicroseconds: Int64 = 30_000_000

    /// When the schedule is first to be applied (µs), while it has not been:
    /// at once once the start picture is on screen, else when the wait for
    /// it ends; nil before the first frame (each pass looks again).
    func scheduleFirstDue(now: Int64) -> Int64? {
        guard config.power.schedule != nil, !power.scheduleApplied, frames.firstFrameShown else { return nil }
        return scheduleMayApply(now: now) ? now : startTime + Self.scheduleWaitMicroseconds
    }
}
