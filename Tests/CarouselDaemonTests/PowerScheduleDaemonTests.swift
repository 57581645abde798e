// [power] schedule on the offscreen display, a manual clock and a manual
// week: the display goes off when an on-time ends and on when one begins,
// the loop sleeps in between, a touch at night wakes it for a while.

import CarouselControl
import CarouselCore
import CarouselPlatform
import Foundation
import Testing
@testable import CarouselDaemon
import CarouselLoop
@testable import CarouselServices

/// A week on the loop's clock: loop time `origin` is minute `start` of the
/// week, and the week's minutes pass as the loop's do; `jump` moves the
/// wall clock (a clock set by NTP or by hand).
final class ManualWeek: @unchecked Sendable {
    let origin: Int64
    var start: Int
    init(start: Int, origin: Int64 = 1_000_000_000) {
        self.start = start
        self.origin = origin
    }

    static func minute(_ day: Int, _ h: Int, _ m: Int = 0) -> Int { day * 1440 + h * 60 + m }

    /// The loop time at which the week shows `minute` (the first such after `origin`).
    func loopTime(of minute: Int) -> Int64 {
        var ahead = minute - start
        while ahead < 0 { ahead += PowerSchedule.minutesPerWeek }
        return origin + Int64(ahead) * 60_000_000
    }

    var clock: LocalClock {
        LocalClock(
            weekMinute: { now in (self.start + Int((now - self.origin) / 60_000_000)) % PowerSchedule.minutesPerWeek },
            instant: { minutes, now in self.origin + ((now - self.origin) / 60_000_000 + Int64(minutes)) * 60_000_000 })
    }
}

private func field(_ d: OffscreenDaemon, _ key: String) -> JSONValue? {
    guard case let .object(display)? = d.daemon.status()["display"] else { return nil }
    return display[key]
}

@Suite("[power] schedule, manual clock and week") struct PowerScheduleDaemonTests {
    func daemon(_ week: ManualWeek, ini: String = "") throws -> OffscreenDaemon {
        try OffscreenDaemon(ini: "[power]\nschedule = mon-fri 07:00-22:00, sat,sun 09:00-23:00\n" + ini, localClock: week.clock)
    }

    /// Moves the loop to `minute` of the week, in one pass.
    func advance(_ d: OffscreenDaemon, _ week: ManualWeek, to minute: Int) {
        d.advance(ms: (week.loopTime(of: minute) - d.now) / 1000)
    }

    @Test func theDisplayFollowsTheScheduleAndTheLoopSleepsBetweenChanges() throws {
        let week = ManualWeek(start: ManualWeek.minute(0, 21, 58))   // Monday 21:58
        let d = try daemon(week)
        d.showFirstPicture()
        #expect(d.backend.isPoweredOn)
        #expect(field(d, "schedule") == .string("on"))
        let picture = d.screenDigest
        // Nothing moves: the one deadline is 22:00.
        #expect(d.daemon.nextWake(now: d.now) == week.loopTime(of: ManualWeek.minute(0, 22)))
        advance(d, week, to: ManualWeek.minute(0, 22))
        #expect(!d.backend.isPoweredOn)
        #expect(d.daemon.displayIsOff)
        #expect(field(d, "schedule") == .string("off"))
        // Off for the night: the loop's next wake is Tuesday 07:00, nothing before.
        let morning = week.loopTime(of: ManualWeek.minute(1, 7))
        #expect(d.daemon.nextWake(now: d.now) == morning)
        #expect(field(d, "schedule_change_ms") != .null)
        advance(d, week, to: ManualWeek.minute(1, 7))
        #expect(d.backend.isPoweredOn)
        for _ in 0..<5 { d.advance(ms: 20) }
        #expect(d.screenDigest == picture, "the morning shows the picture of the evening")
        #expect(d.daemon.nextWake(now: d.now) == week.loopTime(of: ManualWeek.minute(1, 22)))
    }

    @Test func aTouchAtNightWakesTheDisplayForFiveMinutes() throws {
        let week = ManualWeek(start: ManualWeek.minute(4, 21, 59))   // Friday 21:59
        let d = try daemon(week)
        d.showFirstPicture()
        advance(d, week, to: ManualWeek.minute(4, 22))
        #expect(!d.backend.isPoweredOn)
        d.advance(ms: 3_600_000)
        d.tap()
        #expect(d.backend.isPoweredOn, "a touch wakes it at night")
        d.advance(ms: 4 * 60_000)
        #expect(d.backend.isPoweredOn)
        d.advance(ms: 61_000)
        #expect(!d.backend.isPoweredOn, "five minutes after the touch the night goes on")
        // Saturday's on-time begins at 09:00.
        #expect(d.daemon.nextWake(now: d.now) == week.loopTime(of: ManualWeek.minute(5, 9)))
    }

    @Test func displayOnHoldsThroughTheNightUntilDisplayAuto() throws {
        let week = ManualWeek(start: ManualWeek.minute(2, 21, 59))   // Wednesday 21:59
        let d = try daemon(week)
        d.showFirstPicture()
        _ = d.answer("display on")
        advance(d, week, to: ManualWeek.minute(2, 23))
        #expect(d.backend.isPoweredOn, "display on holds against the schedule")
        _ = d.answer("display auto")
        #expect(!d.backend.isPoweredOn, "auto: the schedule's word holds at once")
        // display off holds through the morning's on-edge too.
        _ = d.answer("display off")
        advance(d, week, to: ManualWeek.minute(3, 7, 1))
        #expect(!d.backend.isPoweredOn)
        _ = d.answer("display auto")
        #expect(d.backend.isPoweredOn)
    }

    @Test func startedAtNightItShowsItsPictureThenGoesDark() throws {
        let week = ManualWeek(start: ManualWeek.minute(1, 3))   // Tuesday 03:00
        let d = try daemon(week)
        d.advance(ms: 0)
        #expect(d.backend.isPoweredOn, "not dark before the first picture")
        d.showFirstPicture()
        d.advance(ms: 20)
        #expect(d.daemon.frames.firstFrameShown)
        #expect(!d.backend.isPoweredOn)
    }

    @Test func aReloadOrAClockSetLooksAgain() throws {
        let week = ManualWeek(start: ManualWeek.minute(0, 23))   // Monday 23:00
        let d = try daemon(week)
        d.showFirstPicture()
        d.advance(ms: 20)
        #expect(!d.backend.isPoweredOn)
        // The wall clock is set forward to Tuesday 08:00 (an NTP step after a
        // power cut): the schedule is looked at again at once.
        week.start = ManualWeek.minute(1, 8) - Int((d.now - week.origin) / 60_000_000)
        d.daemon.applySchedule(now: d.now, recompute: true)
        #expect(d.backend.isPoweredOn)
        for _ in 0..<5 { d.advance(ms: 20) }   // the frame of the wake drawn
        #expect(d.daemon.nextWake(now: d.now) == week.loopTime(of: ManualWeek.minute(1, 22)))
        // Back to 23:00 by the clock, then a reload that drops the schedule:
        // on again at once, and no schedule deadline.
        week.start = ManualWeek.minute(1, 23) - Int((d.now - week.origin) / 60_000_000)
        d.daemon.applySchedule(now: d.now, recompute: true)
        #expect(!d.backend.isPoweredOn)
        let path = d.folder.appendingPathComponent("c.ini").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        try text.replacingOccurrences(of: "schedule = mon-fri 07:00-22:00, sat,sun 09:00-23:00\n", with: "")
            .write(toFile: path, atomically: true, encoding: .utf8)
        _ = d.daemon.reload()
        #expect(d.backend.isPoweredOn)
        #expect(field(d, "schedule") == .null)
        #expect(d.daemon.nextWake(now: d.now) != week.loopTime(of: ManualWeek.minute(2, 7)))
    }

    @Test func aBadScheduleIsRefusedAtStart() throws {
        #expect(throws: (any Error).self) { try OffscreenDaemon(ini: "[power]\nschedule = 07:00-22:00\n") }
        #expect(throws: (any Error).self) { try OffscreenDaemon(ini: "[power]\nschedule = mon-fri 7-22\n") }
    }
}

@Suite("[power] wake: the picture a display wakes on") struct WakePictureTests {
    func daemon(wake: String) throws -> OffscreenDaemon {
        let d = try OffscreenDaemon(ini: "[power]\nwake = \(wake)\n")
        for (key, value) in [("autoplay.interval", "2"), ("autoplay.resume_delay", "2"), ("autoplay.enabled", "true")] {
            _ = d.daemon.answer(.set(key: key, value: value), grant: .controlSocket)
        }
        d.showFirstPicture()
        return d
    }

    @Test func nextWakesOnTheNextPictureAfterAnIntervalOff() throws {
        let d = try daemon(wake: "next")
        _ = d.answer("display off")
        d.advance(ms: 10_000)
        d.tap()   // wakes, swallowed
        for _ in 0..<5 { d.advance(ms: 20) }
        #expect(d.index == .int(1))
        // Off for less than the interval: autoplay would not have moved.
        _ = d.answer("display off")
        d.advance(ms: 1_000)
        _ = d.answer("display on")
        for _ in 0..<5 { d.advance(ms: 20) }
        #expect(d.index == .int(1))
        // Paused by the user: nothing would have moved either.
        _ = d.answer("pause")
        _ = d.answer("display off")
        d.advance(ms: 10_000)
        _ = d.answer("display on")
        for _ in 0..<5 { d.advance(ms: 20) }
        #expect(d.index == .int(1))
    }

    /// `[autoplay] enabled = false`: a night off moves nothing; autoplay
    /// turned on with `resume` (Home Assistant's switch), it moves on as a
    /// frame left on would have.
    @Test func nextFollowsAutoplayAsResumeTurnedItOn() throws {
        let d = try OffscreenDaemon(ini: "[power]\nwake = next\n")
        _ = d.daemon.answer(.set(key: "autoplay.interval", value: "2"), grant: .controlSocket)
        d.showFirstPicture()
        func night() {
            _ = d.answer("display off")
            d.advance(ms: 10_000)
            _ = d.answer("display on")
            for _ in 0..<5 { d.advance(ms: 20) }
        }
        night()
        #expect(d.index == .int(0))
        _ = d.answer("resume")
        night()
        #expect(d.index == .int(1))
    }

    @Test func resumeWakesOnThePictureItShowed() throws {
        let d = try daemon(wake: "resume")
        _ = d.answer("display off")
        d.advance(ms: 10_000)
        d.tap()
        for _ in 0..<5 { d.advance(ms: 20) }
        #expect(d.index == .int(0))
    }

    /// A pass compares deadlines with the instant it began; a schedule due at
    /// once must not be put at the clock's reading when asked, which a real
    /// clock has already passed (the VM caught this: the schedule was never
    /// applied at start outside its on-time).
    @Test func aScheduleDueAtOnceIsAppliedOnAClockThatRunsBetweenReadings() throws {
        let week = ManualWeek(start: ManualWeek.minute(0, 23))   // Monday 23:00: off-time
        let d = try OffscreenDaemon(ini: "[power]\nschedule = mon-fri 07:00-22:00, sat,sun 09:00-23:00\n",
                                    localClock: week.clock, runningClock: true)
        d.showFirstPicture()
        for _ in 0..<5 { d.advance(ms: 20) }
        #expect(d.daemon.displayIsOff, "the schedule's first word was never taken")
        #expect(field(d, "schedule") == .string("off"))
    }
}
