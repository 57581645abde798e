import CarouselPlatform
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Local time through a POSIX TZ rule (Central Europe: summer time from the
/// last Sunday of March 02:00 to the last Sunday of October 03:00), so the
/// test needs no zoneinfo files. Nothing else in carouseld reads local time.
@Suite(.serialized) struct LocalTimeTests {
    init() {
        setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1)
        tzset()
    }

    // 2026-03-27 is a Friday; summer time begins on Sunday 2026-03-29 at
    // 02:00 CET (01:00 UTC) and ends on Sunday 2026-10-25 at 03:00 CEST (01:00 UTC).
    static let friday20260327Noon = 1_774_609_200   // 11:00 UTC = 12:00 CET

    @Test func theMinuteOfTheWeekIsLocal() {
        let (minute, second) = LocalTime.weekMinute(at: Self.friday20260327Noon + 42)
        #expect(minute == 4 * 1440 + 12 * 60)
        #expect(second == 42)
    }

    @Test func aNightOverTheSpringChangeHasEightRealHours() {
        // Saturday 2026-03-28 22:00 CET to Sunday 07:00 CEST: nine on the wall, eight real.
        let saturday22 = Self.friday20260327Noon + 34 * 3600
        #expect(LocalTime.weekMinute(at: saturday22).minute == 5 * 1440 + 22 * 60)
        let sunday7 = LocalTime.instant(minutes: 9 * 60, afterMinuteOf: saturday22)
        #expect(sunday7 - saturday22 == 8 * 3600)
        #expect(LocalTime.weekMinute(at: sunday7).minute == 6 * 1440 + 7 * 60)
        // 02:30 does not exist that night: the moment after the jump (03:30 CEST = 01:30 UTC).
        let half = LocalTime.instant(minutes: 4 * 60 + 30, afterMinuteOf: saturday22)
        #expect(LocalTime.weekMinute(at: half).minute == 6 * 1440 + 3 * 60 + 30)
    }

    @Test func aNightOverTheAutumnChangeHasTenRealHours() {
        // Saturday 2026-10-24 22:00 CEST (20:00 UTC) to Sunday 07:00 CET (06:00 UTC).
        let saturday22 = 1_792_872_000
        #expect(LocalTime.weekMinute(at: saturday22).minute == 5 * 1440 + 22 * 60)
        let sunday7 = LocalTime.instant(minutes: 9 * 60, afterMinuteOf: saturday22)
        #expect(sunday7 - saturday22 == 10 * 3600)
    }

    @Test func secondsIntoTheMinuteAreNotCounted() {
        let t = Self.friday20260327Noon + 59
        #expect(LocalTime.instant(minutes: 1, afterMinuteOf: t) == Self.friday20260327Noon + 60)
    }
}
