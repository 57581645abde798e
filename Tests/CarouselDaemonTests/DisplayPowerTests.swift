// The display switched off and on (`display off|on`, a waking touch or
// key) on the offscreen display with a manual clock. The real kernel's side
// (the connector's DPMS state, a black capture) is Tests/VM/e2e_power.py.

import CarouselControl
import CarouselPlatform
import CarouselCore
import CarouselDisplay
import CarouselImaging
import Foundation
import Testing
import CarouselDaemon


private func isOK(_ reply: ControlReply) -> Bool {
    if case .ok = reply { return true }
    return false
}

private func displayField(_ d: OffscreenDaemon, _ key: String) -> JSONValue? {
    guard case let .object(display)? = d.daemon.status()["display"] else { return nil }
    return display[key]
}

private func pausedBy(_ d: OffscreenDaemon) -> [JSONValue] {
    guard case let .object(autoplay)? = d.daemon.status()["autoplay"], case let .array(reasons)? = autoplay["paused_by"]
    else { return [] }
    return reasons
}

@Suite("Display power: off, on, and the touch that wakes it") struct DisplayPowerTests {
    @Test func offDrawsNothingAndOnShowsTheSamePictureAgain() throws {
        let d = try OffscreenDaemon()
        d.showFirstPicture()
        let before = d.screenDigest
        let drawn = d.backend.presented
        #expect(drawn > 0)
        #expect(displayField(d, "power") == .string("on"))

        #expect(isOK(d.answer("display off")))
        #expect(!d.backend.isPoweredOn)
        #expect(d.daemon.displayIsOff)
        #expect(displayField(d, "power") == .string("off"))
        #expect(pausedBy(d).contains(.string("display")))
        // Something that would draw (a decode finishing) draws nothing now,
        // and the loop has no reason to wake by itself.
        d.daemon.settleDecodes()
        for _ in 0..<50 { d.advance(ms: 100) }
        #expect(d.backend.presented == drawn)
        #expect(d.daemon.nextWake(now: d.now) == nil)
        // Asking again changes nothing.
        #expect(isOK(d.answer("display off")))
        #expect(d.backend.powerSwitches == 1)

        #expect(isOK(d.answer("display on")))
        #expect(d.backend.isPoweredOn)
        #expect(!pausedBy(d).contains(.string("display")))
        d.advance(ms: 20)
        #expect(d.backend.presented > drawn)
        #expect(d.index == .int(0))
        #expect(d.screenDigest == before)
    }

    @Test func autoplayDoesNotAdvanceWhileOffAndResumesAfter() throws {
        let d = try OffscreenDaemon()
        for (key, value) in [("autoplay.interval", "1"), ("autoplay.resume_delay", "1"), ("autoplay.enabled", "true")] {
            #expect(isOK(d.daemon.answer(.set(key: key, value: value), grant: .controlSocket)), "\(key)")
        }
        d.showFirstPicture()
        #expect(d.daemon.nextWake(now: d.now) != nil, "autoplay has a deadline")
        #expect(isOK(d.answer("display off")))
        // No deadline, not even one that would find autoplay paused.
        #expect(d.daemon.nextWake(now: d.now) == nil)
        for _ in 0..<100 { d.advance(ms: 100) }
        #expect(d.index == .int(0))
        #expect(d.daemon.nextWake(now: d.now) == nil)

        #expect(isOK(d.answer("display on")))
        #expect(d.daemon.nextWake(now: d.now) != nil)
        for _ in 0..<40 { d.advance(ms: 100) }
        #expect(d.index != .int(0), "autoplay runs again once the display is on")
    }

    @Test func aSwipeThatWakesTheDisplayDoesNotPage() throws {
        let d = try OffscreenDaemon()
        d.showFirstPicture()
        let before = d.screenDigest
        #expect(isOK(d.answer("display off")))
        d.swipe()
        #expect(d.backend.isPoweredOn)
        #expect(!d.daemon.displayIsOff)
        for _ in 0..<40 { d.advance(ms: 50) }
        #expect(d.index == .int(0))
        #expect(d.screenDigest == before)
        // The same swipe with the display on pages: the one above was swallowed.
        d.swipe()
        for _ in 0..<40 { d.advance(ms: 50) }
        #expect(d.index == .int(1))
    }

    @Test func aTapThatWakesTheDisplayDoesNotSelect() throws {
        let d = try OffscreenDaemon()
        var selected: [Int] = []
        d.daemon.onEvent = { e in
            if case let .didSelectItem(i) = e.kind { selected.append(i) }
        }
        d.showFirstPicture()
        #expect(isOK(d.answer("display off")))
        d.tap()
        #expect(d.backend.isPoweredOn)
        for _ in 0..<10 { d.advance(ms: 50) }
        #expect(selected.isEmpty)
        d.tap()
        for _ in 0..<10 { d.advance(ms: 50) }
        #expect(selected == [0])
    }

    @Test func aKeyWakesTheDisplayAndDoesNothingElse() throws {
        let d = try OffscreenDaemon()
        d.showFirstPicture()
        #expect(isOK(d.answer("display off")))
        d.daemon.carryOut(.command(.next))
        #expect(d.backend.isPoweredOn)
        for _ in 0..<40 { d.advance(ms: 50) }
        #expect(d.index == .int(0))
        d.daemon.carryOut(.command(.next))
        for _ in 0..<40 { d.advance(ms: 50) }
        #expect(d.index == .int(1))
    }

    @Test func aFingerOnTheScreenWhenItGoesOffIsCancelled() throws {
        let d = try OffscreenDaemon()
        d.showFirstPicture()
        var t = d.now
        d.daemon.carryOut(.touch(.down(id: 0, at: .init(x: 250, y: 100)), time: t))
        t += 16_000
        d.daemon.carryOut(.touch(.move(id: 0, to: .init(x: 210, y: 100)), time: t))
        #expect(pausedBy(d).contains(.string("touch")))
        d.now = t
        #expect(isOK(d.answer("display off")))
        #expect(!pausedBy(d).contains(.string("touch")))
        for k in 2...5 {
            t += 16_000
            d.daemon.carryOut(.touch(.move(id: 0, to: .init(x: 250 - Double(k) * 40, y: 100)), time: t))
        }
        d.daemon.carryOut(.touch(.up(id: 0), time: t))
        d.now = t
        // The rest of that touch neither moved the carousel nor woke the display.
        #expect(d.daemon.displayIsOff)
        for _ in 0..<40 { d.advance(ms: 50) }
        #expect(d.index == .int(0))
    }

    @Test func aRefusedSwitchIsOneErrorAndTheCarouselRunsOn() throws {
        let d = try OffscreenDaemon()
        d.showFirstPicture()
        d.backend.failNextPowerSwitch = DisplayError("drmModeAtomicCommit (ACTIVE = 0 on CRTC 38): Invalid argument")
        let reply = d.answer("display off")
        guard case let .error(message) = reply else {
            Issue.record("display off was not refused: \(reply)")
            return
        }
        #expect(message.contains("Invalid argument"))
        #expect(d.backend.isPoweredOn)
        #expect(!d.daemon.displayIsOff)
        #expect(displayField(d, "power") == .string("on"))
        let drawn = d.backend.presented
        #expect(d.daemon.perform(.next) == nil)
        for _ in 0..<40 { d.advance(ms: 50) }
        #expect(d.index == .int(1))
        #expect(d.backend.presented > drawn)

        // A refused wake leaves it off; the next touch tries again.
        #expect(isOK(d.answer("display off")))
        d.backend.failNextPowerSwitch = DisplayError("drmModeAtomicCommit (ACTIVE = 1): Device or resource busy")
        d.tap()
        #expect(d.daemon.displayIsOff)
        d.tap()
        #expect(!d.daemon.displayIsOff)
        #expect(d.index == .int(1))
    }
}

@Suite("Display power while the display's device is away") struct DisplayPowerAwayTests {
    @Test func aDisplayThatComesBackWhileOffIsSwitchedOff() throws {
        let fresh = OffscreenBackend(size: PixelSize(width: 320, height: 200))
        nonisolated(unsafe) let handOut = fresh
        let d = try OffscreenDaemon(reopen: { _ in handOut })
        d.showFirstPicture()
        #expect(isOK(d.answer("display off")))
        d.daemon.displayWentAway("its card was removed")
        d.daemon.displayMayBeBack()
        #expect(!d.daemon.displayIsAway)
        #expect(!fresh.isPoweredOn, "it came back lit; it was switched off")
        for _ in 0..<20 { d.advance(ms: 50) }
        #expect(fresh.presented == 0)
        #expect(isOK(d.answer("display on")))
        d.daemon.settleDecodes()
        d.advance(ms: 20)
        #expect(fresh.isPoweredOn)
        #expect(fresh.presented > 0)
    }
}

@Suite("[power] idle_off and display auto, manual clock") struct IdleOffTests {
    /// Runs the loop for `seconds`, a pass every second.
    func idle(_ d: OffscreenDaemon, seconds: Int) {
        for _ in 0..<seconds { d.advance(ms: 1000) }
    }

    @Test func theDisplayGoesOffAfterIdleMinutesAndEachUseMovesTheDeadline() throws {
        let d = try OffscreenDaemon(ini: "[power]\nidle_off = 1\n")
        d.showFirstPicture()
        let start = d.now
        // The loop's one timer is armed for the deadline: a minute after start.
        #expect(d.daemon.nextWake(now: d.now) == d.daemon.startTime + 60_000_000)
        idle(d, seconds: 30)
        d.tap()
        idle(d, seconds: 40)
        #expect(d.backend.isPoweredOn, "a minute since start, but only 40 s since the tap")
        _ = d.answer("next")  // a command is use too
        idle(d, seconds: 30)
        // Reading is not: the minute still counts from `next`.
        _ = d.answer("status")
        _ = d.answer("list")
        idle(d, seconds: 29)
        #expect(d.backend.isPoweredOn)
        idle(d, seconds: 2)
        #expect(!d.backend.isPoweredOn)
        #expect(d.daemon.displayIsOff)
        #expect(d.now - start > 120_000_000)
        #expect(displayField(d, "power_mode") == .string("auto"))
        // Off, nothing is due: the loop sleeps until input.
        #expect(d.daemon.nextWake(now: d.now) == nil)

        // A touch wakes it (swallowed) and the minute starts again.
        d.tap()
        #expect(d.backend.isPoweredOn)
        idle(d, seconds: 58)
        #expect(d.backend.isPoweredOn)
        idle(d, seconds: 3)
        #expect(!d.backend.isPoweredOn)
    }

    @Test func displayOnHoldsUntilDisplayAuto() throws {
        let d = try OffscreenDaemon(ini: "[power]\nidle_off = 1\n")
        d.showFirstPicture()
        #expect(isOK(d.answer("display on")))
        #expect(displayField(d, "power_mode") == .string("on"))
        #expect(displayField(d, "idle_off_ms") == .null)
        idle(d, seconds: 180)
        #expect(d.backend.isPoweredOn, "display on holds against the idle rule")
        #expect(isOK(d.answer("display auto")))
        #expect(displayField(d, "power_mode") == .string("auto"))
        idle(d, seconds: 59)
        #expect(d.backend.isPoweredOn, "the minute counts from display auto")
        idle(d, seconds: 2)
        #expect(!d.backend.isPoweredOn)
    }

    @Test func displayAutoLeavesAnOffDisplayOffAndZeroMeansNever() throws {
        let d = try OffscreenDaemon()
        d.showFirstPicture()
        #expect(d.daemon.config.power.idleOff == 0)
        idle(d, seconds: 3600)
        #expect(d.backend.isPoweredOn, "idle_off = 0: never")
        #expect(d.daemon.nextWake(now: d.now) == nil)
        #expect(isOK(d.answer("display off")))
        #expect(isOK(d.answer("display auto")))
        #expect(!d.backend.isPoweredOn)
        // set changes the rule while running.
        #expect(isOK(d.daemon.answer(.set(key: "power.idle_off", value: "0.5"), grant: .controlSocket)))
        #expect(isOK(d.answer("display on")))
        #expect(isOK(d.answer("display auto")))
        idle(d, seconds: 31)
        #expect(!d.backend.isPoweredOn)
    }

    @Test func aRefusedIdleSwitchIsTriedAgainAfterAnotherIdleSpellNotAtOnce() throws {
        let d = try OffscreenDaemon(ini: "[power]\nidle_off = 1\n")
        d.showFirstPicture()
        d.backend.failNextPowerSwitch = DisplayError("drmModeAtomicCommit: Invalid argument")
        idle(d, seconds: 61)
        #expect(d.backend.isPoweredOn)
        #expect(d.backend.failNextPowerSwitch == nil, "it was tried")
        // The loop would spin on a deadline in the past.
        #expect((d.daemon.nextWake(now: d.now) ?? 0) > d.now + 50_000_000)
        idle(d, seconds: 60)
        #expect(!d.backend.isPoweredOn)
    }

    @Test func aFingerHeldPastTheDeadlineKeepsTheDisplayOn() throws {
        let d = try OffscreenDaemon(ini: "[power]\nidle_off = 1\n")
        d.showFirstPicture()
        d.daemon.carryOut(.touch(.down(id: 1, at: .init(x: 160, y: 100)), time: d.now))
        idle(d, seconds: 90)
        #expect(d.backend.isPoweredOn)
        d.daemon.carryOut(.touch(.up(id: 1), time: d.now))
        idle(d, seconds: 61)
        #expect(!d.backend.isPoweredOn)
    }
}
