// The screen's power as a pure policy on a manual clock: no daemon, no
// display, no backlight. What the daemon does with the actions is pinned by
// DisplayPowerTests, BacklightTests and PowerScheduleDaemonTests.

import CarouselControl
import CarouselCore
import CarouselDaemon
import Testing

private let minute: Int64 = 60_000_000
private let start: Int64 = 1_000_000_000

private func policy(idleOff: Double = 0, dimAfter: Double = 0, dimLevel: Int = 10, lit: Int? = nil) -> ScreenPowerPolicy {
    var p = ScreenPowerPolicy(rules: .init(idleOffMinutes: idleOff, dimAfterMinutes: dimAfter, dimLevel: dimLevel), at: start)
    p.backlight(litAt: lit)
    return p
}

private func down(_ id: Int) -> TouchInput { .down(id: id, at: Point(x: 10, y: 10)) }

@Suite("Screen power policy, manual clock") struct ScreenPowerPolicyTests {
    @Test func idleOffComesAfterTheMinutesWithoutUseAndEachUseMovesIt() {
        var p = policy(idleOff: 2)
        #expect(p.deadline(now: start) == start + 2 * minute)
        #expect(p.due(now: start + 2 * minute - 1) == [])
        p.used(at: start + minute)
        #expect(p.deadline(now: start + minute) == start + 3 * minute)
        #expect(p.due(now: start + 2 * minute) == [])
        #expect(p.due(now: start + 3 * minute) == [.off(.idle)])
        p.switched(on: false, by: .idle, at: start + 3 * minute)
        #expect(p.isOff && p.offSince == start + 3 * minute)
        #expect(p.deadline(now: start + 3 * minute) == nil, "off: nothing more to do until something happens")
    }

    @Test func aFingerRestingOnTheScreenIsUseAndPostponesTheRules() {
        var p = policy(idleOff: 1, dimAfter: 1, lit: 80)
        #expect(p.touch(down(0), at: start) == .model)
        p.modelSaw(down(0))
        #expect(p.due(now: start + minute) == [], "a resting finger keeps the display on and lit")
        #expect(p.idleOffDeadline == start + 2 * minute)
        p.modelSaw(.up(id: 0))
        #expect(p.due(now: start + 2 * minute) == [.off(.idle)])
    }

    @Test func theBacklightDimsAfterItsMinutesAndIsLitAgainAtTheNextUse() {
        var p = policy(dimAfter: 1, dimLevel: 20, lit: 90)
        #expect(p.dimDeadline == start + minute)
        #expect(p.due(now: start + minute) == [.dim])
        #expect(p.dimmed && p.deadline(now: start + minute) == nil)
        p.used(at: start + 2 * minute)
        #expect(p.deadline(now: start + 2 * minute) == start + 2 * minute, "lit again at once")
        #expect(p.due(now: start + 2 * minute) == [.undim])
        #expect(!p.dimmed && p.dimDeadline == start + 3 * minute)
    }

    @Test func noBacklightOrALevelNotBelowTheLitOneNeverDims() {
        var none = policy(dimAfter: 1)
        #expect(none.dimDeadline == nil)
        #expect(none.due(now: start + 10 * minute) == [])
        var bright = policy(dimAfter: 1, dimLevel: 50, lit: 40)
        #expect(bright.dimDeadline == nil)
        #expect(bright.due(now: start + 10 * minute) == [])
    }

    @Test func theScheduleSwitchesAtItsChangesOnlyAndTheMorningIsUse() {
        var p = policy(idleOff: 30)
        #expect(p.scheduleDue(now: start, recompute: false), "the first look is due at once")
        #expect(p.schedule(off: true, nextChange: start + 60 * minute, now: start) == .off(.schedule))
        p.switched(on: false, by: .schedule, at: start)
        #expect(!p.scheduleDue(now: start + minute, recompute: false))
        #expect(p.deadline(now: start + minute) == start + 60 * minute)
        #expect(p.schedule(off: true, nextChange: start + 60 * minute, now: start + minute) == nil, "no change, no switch")
        #expect(p.scheduleDue(now: start + 60 * minute, recompute: false))
        #expect(p.schedule(off: false, nextChange: start + 600 * minute, now: start + 60 * minute) == .on(.schedule))
        p.switched(on: true, by: .schedule, at: start + 60 * minute)
        #expect(p.idleOffDeadline == start + 90 * minute, "idle_off counts from the morning")
    }

    @Test func aTouchAtNightKeepsTheDisplayOnForAFewMinutesWhereIdleOffIsNever() {
        var p = policy()
        _ = p.schedule(off: true, nextChange: nil, now: start)
        p.switched(on: false, by: .schedule, at: start)
        #expect(p.touch(down(0), at: start + minute) == .wakes)
        p.switched(on: true, by: .touch, at: start + minute)
        #expect(p.idleOffDeadline == start + minute + Int64(ScreenPowerPolicy.nightWakeMinutes) * minute)
        #expect(p.scheduleRemoved() == nil, "on: nothing to switch")
        #expect(p.idleOffDeadline == nil, "without a schedule, idle_off 0 is never")
    }

    @Test func theTouchThatWakesTheDisplayIsSwallowedFromDownToUpWithTheFingersThatJoinIt() {
        var p = policy(idleOff: 1)
        p.switched(on: false, by: .command, at: start)
        #expect(p.touch(down(3), at: start + 1) == .wakes)
        p.switched(on: true, by: .touch, at: start + 1)
        #expect(p.touch(.move(id: 3, to: Point(x: 50, y: 10)), at: start + 2) == .swallowed)
        #expect(p.touch(down(4), at: start + 3) == .swallowed, "a finger joining the waking touch belongs to it")
        #expect(p.touch(.up(id: 3), at: start + 4) == .swallowed)
        #expect(p.touch(.up(id: 4), at: start + 5) == .swallowed)
        #expect(p.touch(down(5), at: start + 6) == .model, "the next touch is the carousel's")
        #expect(p.lastActivity == start + 6)
    }

    @Test func aKeyWakesAnOffDisplayAndIsUseOtherwise() {
        var p = policy(idleOff: 1)
        let wokeOn = p.key(at: start + 5)
        #expect(!wokeOn)
        #expect(p.lastActivity == start + 5)
        p.switched(on: false, by: .idle, at: start + minute)
        let wokeOff = p.key(at: start + 2 * minute)
        #expect(wokeOff)
    }

    @Test func displayOnHoldsUntilAutoAndAWakingTouchGivesItBack() {
        var p = policy(idleOff: 1)
        p.set(.on, at: start)
        #expect(p.idleOffDeadline == nil)
        #expect(p.due(now: start + 10 * minute) == [])
        p.set(.auto, at: start + 10 * minute)
        #expect(p.idleOffDeadline == start + 11 * minute)
        p.set(.off, at: start + 11 * minute)
        p.switched(on: false, by: .command, at: start + 11 * minute)
        #expect(p.schedule(off: false, nextChange: nil, now: start + 12 * minute) == nil, "off by command: the schedule waits")
        p.switched(on: true, by: .touch, at: start + 13 * minute)
        #expect(p.mode == .auto)
    }

    @Test func aRefusedSwitchIsTriedAgainAfterAnotherSpellNotAtOnce() {
        var p = policy(idleOff: 1)
        #expect(p.due(now: start + minute) == [.off(.idle)])
        p.refused(at: start + minute)
        #expect(p.deadline(now: start + minute) == start + 2 * minute)
    }

    @Test func goingOffReturnsTheFingersTheModelIsToSeeCancelled() {
        var p = policy()
        for id in [2, 0] {
            _ = p.touch(down(id), at: start)
            p.modelSaw(down(id))
        }
        #expect(p.switched(on: false, by: .command, at: start + 1) == [0, 2])
    }

    @Test func goingOffWhileDimmedEndsTheDimAndWakingIsUse() {
        var p = policy(idleOff: 2, dimAfter: 1, lit: 70)
        #expect(p.due(now: start + minute) == [.dim])
        #expect(p.due(now: start + 2 * minute) == [.off(.idle)], "off: the dim rule waits")
        p.switched(on: false, by: .idle, at: start + 2 * minute)
        #expect(!p.dimmed, "dark: powered down, not dimmed")
        #expect(p.deadline(now: start + 2 * minute) == nil)
        #expect(p.touch(down(1), at: start + 3 * minute) == .wakes)
        p.switched(on: true, by: .touch, at: start + 3 * minute)
        #expect(!p.dimmed)
        #expect(p.dimDeadline == start + 4 * minute, "waking is use")
    }
}
