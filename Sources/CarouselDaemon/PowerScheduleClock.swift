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
    /// How long a display woken by a touch outside the schedule's on-times
    /// stays on when `[power] idle_off` is 0 (never): without it the first
    /// touch of the night would light the room until the morning.
    static let nightWakeMinutes = 5.0

    /// The schedule at `now`: the display is switched off when an on-time
    /// ends and on when one begins (while `display auto` decides), and the
    /// next change is the loop's deadline. `recompute` looks again before
    /// the deadline (a reload, the wall clock set); `reassert` also makes the
    /// display what the schedule says now (`display auto`). Only once the
    /// first picture is on screen (or there is none to wait for): a daemon
    /// started at night shows it, and tells systemd it is ready, before it
    /// goes dark. A picture that never decodes holds this up 30 s at most.
    func applySchedule(now: Int64, recompute: Bool = false, reassert: Bool = false) {
        guard firstFrameShown, pictureShown || album.isEmpty || now - startTime > 30_000_000 else { return }
        guard let schedule = config.power.schedule else {
            if power.scheduledOff, power.mode == .auto, power.isOff { setDisplayPower(on: true, by: .schedule, at: now) }
            power.scheduledOff = false
            power.nextScheduleChange = nil
            return
        }
        let first = !power.scheduleApplied
        // Between changes (or with none to come) there is nothing to look at.
        if !recompute, !reassert, !first, power.nextScheduleChange.map({ now < $0 }) ?? true { return }
        let minute = localClock.weekMinute(now)
        let off = !schedule.isOn(weekMinute: minute)
        power.nextScheduleChange = schedule.minutesToNextChange(after: minute).map { localClock.instant($0, now) }
        let changed = off != power.scheduledOff || first
        power.scheduledOff = off
        power.scheduleApplied = true
        guard changed || reassert, power.mode == .auto else { return }
        if !off, power.isOff { power.lastActivity = now }   // the idle rule counts from the morning
        setDisplayPower(on: !off, by: .schedule, at: now)
    }
}
