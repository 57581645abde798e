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
