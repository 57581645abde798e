// Presence in the screen's power policy, on a manual clock: a sensor wakes
// the display without a touch, holds it on and lit, the idle and dim rules
// count from when presence ends, and at night the schedule wins unless
// `presence_at_night = wake`.

import CarouselControl
import CarouselCore
import CarouselDaemon
import Testing

private let minute: Int64 = 60_000_000
private let start: Int64 = 1_000_000_000

private func policy(idleOff: Double = 2, dimAfter: Double = 0, lit: Int? = nil, atNight wake: Bool = false) -> ScreenPowerPolicy {
    var p = ScreenPowerPolicy(rules: .init(idleOffMinutes: idleOff, dimAfterMinutes: dimAfter, dimLevel: 10,
                                           presenceWakesAtNight: wake), at: start)
    p.backlight(litAt: lit)
    return p
}

/// The display gone dark by the idle rule at `at`.
private func darkened(_ p: inout ScreenPowerPolicy, at time: Int64) {
    p.switched(on: false, by: .idle, at: time)
}

@Suite("Presence in the screen power policy, manual clock") struct PresencePolicyTests {
    @Test func presenceWakesADarkDisplayAndSwallowsNoTouch() {
        var p = policy()
        darkened(&p, at: start + 2 * minute)
        #expect(p.presence(true, at: start + 3 * minute) == .on(.presence))
        p.switched(on: true, by: .presence, at: start + 3 * minute)
        // The next touch is the model's: nobody touched to wake it.
        #expect(p.touch(.down(id: 0, at: Point(x: 1, y: 1)), at: start + 3 * minute + 1) == .model)
    }

    @Test func presenceHoldsTheDisplayOnAndIdleOffCountsFromItsEnd() {
        var p = policy(idleOff: 2)
        #expect(p.presence(true, at: start) == nil, "on already: nothing to switch")
        #expect(p.idleOffDeadline == nil && p.deadline(now: start) == nil, "held on: no deadline, no wake-up")
        #expect(p.due(now: start + 60 * minute) == [])
        #expect(p.presence(false, at: start + 60 * minute) == nil)
        #expect(p.idleOffDeadline == start + 62 * minute)
        #expect(p.due(now: start + 62 * minute - 1) == [])
        #expect(p.due(now: start + 62 * minute) == [.off(.idle)])
    }

    @Test func presenceHoldsTheBacklightLitAndLightsADimmedOne() {
        var p = policy(idleOff: 0, dimAfter: 1, lit: 80)
        #expect(p.due(now: start + minute) == [.dim])
        _ = p.presence(true, at: start + 2 * minute)
        #expect(p.deadline(now: start + 2 * minute) == start + 2 * minute, "lit again at once")
        #expect(p.due(now: start + 2 * minute) == [.undim])
        #expect(p.dimDeadline == nil && p.due(now: start + 30 * minute) == [])
        _ = p.presence(false, at: start + 30 * minute)
        #expect(p.dimDeadline == start + 31 * minute)
    }

    @Test func theSameWordTwiceChangesNothing() {
        var p = policy()
        _ = p.presence(true, at: start)
        #expect(p.presenceChanged == start)
        #expect(p.presence(true, at: start + minute) == nil)
        #expect(p.presenceChanged == start)
        _ = p.presence(false, at: start + 2 * minute)
        #expect(p.presence(false, at: start + 3 * minute) == nil)
        #expect(p.idleOffDeadline == start + 4 * minute, "counts from the first word of leaving")
    }

    @Test func atNightTheScheduleWinsUnlessPresenceAtNightIsWake() {
        var sleep = policy()
        #expect(sleep.schedule(off: true, nextChange: nil, now: start) == .off(.schedule))
        sleep.switched(on: false, by: .schedule, at: start)
        #expect(sleep.presence(true, at: start + minute) == nil, "the schedule wins")
        #expect(sleep.presenceReasserted() == nil)

        var wake = policy(atNight: true)
        #expect(wake.schedule(off: true, nextChange: nil, now: start) == .off(.schedule))
        wake.switched(on: false, by: .schedule, at: start)
        #expect(wake.presence(true, at: start + minute) == .on(.presence))
        wake.switched(on: true, by: .presence, at: start + minute)
        #expect(wake.idleOffDeadline == nil, "held while someone is there")
        _ = wake.presence(false, at: start + 10 * minute)
        #expect(wake.due(now: start + 12 * minute) == [.off(.idle)])
    }

    @Test func atNightWithoutIdleOffAWokenDisplayStaysForTheNightWakeMinutes() {
        var p = policy(idleOff: 0, atNight: true)
        _ = p.schedule(off: true, nextChange: nil, now: start)
        p.switched(on: false, by: .schedule, at: start)
        _ = p.presence(true, at: start + minute)
        p.switched(on: true, by: .presence, at: start + minute)
        _ = p.presence(false, at: start + 2 * minute)
        #expect(p.idleOffDeadline == start + 2 * minute + Int64(ScreenPowerPolicy.nightWakeMinutes) * minute)
    }

    @Test func someoneThereAsTheNightBeginsKeepsItOnOnlyWithWake() {
        var sleep = policy()
        _ = sleep.presence(true, at: start)
        #expect(sleep.schedule(off: true, nextChange: nil, now: start + minute) == .off(.schedule))

        var wake = policy(atNight: true)
        _ = wake.presence(true, at: start)
        #expect(wake.schedule(off: true, nextChange: nil, now: start + minute) == nil)
        _ = wake.presence(false, at: start + 5 * minute)
        #expect(wake.due(now: start + 7 * minute) == [.off(.idle)])
    }

    @Test func presenceNeverOverridesDisplayOffButDisplayAutoGivesItBack() {
        var p = policy()
        p.set(.off, at: start)
        p.switched(on: false, by: .command, at: start)
        #expect(p.presence(true, at: start + minute) == nil, "display off holds")
        p.set(.auto, at: start + 2 * minute)
        #expect(p.presenceReasserted() == .on(.presence))
    }

    @Test func aTouchAtNightIsStillSwallowedAndWakesWhilePresenceSleeps() {
        var p = policy()
        _ = p.schedule(off: true, nextChange: nil, now: start)
        p.switched(on: false, by: .schedule, at: start)
        _ = p.presence(true, at: start + minute)
        #expect(p.touch(.down(id: 0, at: Point(x: 1, y: 1)), at: start + minute) == .wakes)
        p.switched(on: true, by: .touch, at: start + minute)
        #expect(p.idleOffDeadline == start + 3 * minute, "the schedule wins: presence does not hold it at night")
    }

    @Test func aRemovedSensorLeavesNobodyThere() {
        var p = policy()
        _ = p.presence(true, at: start)
        p.presenceRemoved(at: start + 10 * minute)
        #expect(!p.present && p.idleOffDeadline == start + 12 * minute)
    }
}
