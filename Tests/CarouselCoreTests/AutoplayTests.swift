import Testing
import CarouselCore

/// SPEC.md section 4 and the NSTimer pattern of section 7, on a manual clock.
@Suite struct AutoplayTests {
    func autoplay(_ f: (inout AutoplaySettings) -> Void = { _ in }) -> AutoplaySettings {
        var a = AutoplaySettings()
        f(&a)
        return a
    }

    func settings(_ f: (inout CarouselSettings) -> Void = { _ in }) -> CarouselSettings {
        var s = CarouselSettings()
        f(&s)
        return s
    }

    @Test func firstAdvanceAfterTheIntervalByDefault() {
        var rig = Rig(autoplay: autoplay())
        #expect(rig.snapshot.autoplay == AutoplayStatus(enabled: true, running: true, pausedBy: [], next: .seconds(3)))
        rig.at(2999.999)
        #expect(rig.snapshot.state == .idle)
        rig.at(3000.001)
        #expect(rig.snapshot.state == .animating)
        rig.at(3500)
        #expect(rig.events.last?.kind == .didEndScrollingAnimation)
        #expect(rig.events.last?.time == .seconds(3.5))
        #expect(rig.offset == 1)
        // Then every interval, counted from rest.
        #expect(rig.snapshot.autoplay.next == .seconds(6.5))
    }

    @Test func startDelayAppliesToTheFirstAdvanceOnly() {
        var rig = Rig(autoplay: autoplay { $0.startDelay = 0.5; $0.interval = 2; $0.transition = 0.25 })
        #expect(rig.snapshot.autoplay.next == .seconds(0.5))
        rig.at(750)
        #expect(rig.offset == 1)
        #expect(rig.snapshot.autoplay.next == .seconds(2.75))
    }

    @Test func transitionUsesTheEaseInOutCurve() {
        var rig = Rig(autoplay: autoplay { $0.interval = 1; $0.transition = 1 })
        for (t, expected) in [(0.25, 0.0625), (0.5, 0.5), (0.75, 0.9375)] {
            rig.at(1000 + t * 1000)
            #expect(abs(rig.offset - expected) < 1e-9)
        }
    }

    @Test func wrapsSeamlesslyFromLastToFirst() {
        var rig = Rig(settings: settings { $0.startIndex = 4 }, autoplay: autoplay { $0.interval = 1; $0.transition = 1 })
        rig.at(1500)
        #expect(abs(rig.offset - 4.5) < 1e-9)
        rig.at(1750)
        #expect(abs(rig.offset - 4.9375) < 1e-9)
        rig.at(2000)
        #expect(rig.offset == 0)
        #expect(rig.snapshot.index == 0)
        #expect(rig.events(named: "currentItemIndexDidChange").map(\.kind) == [.currentItemIndexDidChange(index: 0)])
    }

    @Test func aDragPausesAtOnceAndResumesResumeDelayAfterRest() {
        var rig = Rig(autoplay: autoplay { $0.interval = 3; $0.resumeDelay = 2 })
        rig.at(1000)
        rig.down(800, 300)
        #expect(rig.snapshot.autoplay == AutoplayStatus(enabled: true, running: false, pausedBy: [.touch], next: nil))
        // Hold far past the interval: the timer does not count during the drag.
        for i in 1...50 {
            rig.at(1000 + Double(i) * 100)
            rig.move(800 - Double(i) * 11, 300)
        }
        rig.at(6060); rig.up()
        #expect(rig.snapshot.state == .settling)
        #expect(rig.snapshot.autoplay.next == nil)
        rig.settle()
        let rest = rig.events(named: "didEndDecelerating")[0].time
        #expect(rig.snapshot.autoplay.next == rest.adding(seconds: 2))
        rig.at(rest.adding(seconds: 2).milliseconds - 0.001)
        #expect(rig.snapshot.state == .idle)
        rig.at(rest.adding(seconds: 2).milliseconds + 0.001)
        #expect(rig.snapshot.state == .animating)
    }

    @Test func aTapIsAnInteractionToo() {
        var rig = Rig(autoplay: autoplay { $0.interval = 3; $0.resumeDelay = 2 })
        rig.at(2900); rig.down(500, 300)
        rig.at(3100)
        #expect(rig.snapshot.state == .tracking)   // the interval passed: it waits
        rig.up()
        #expect(rig.snapshot.autoplay.next == .seconds(5.1))
    }

    @Test func pauseAndResumeFromTheSocketCombineWithTouch() {
        var rig = Rig(autoplay: autoplay { $0.resumeDelay = 2 })
        rig.at(100)
        #expect(rig.command(.pause) == nil)
        #expect(rig.snapshot.autoplay == AutoplayStatus(enabled: false, running: false, pausedBy: [.command], next: nil))
        rig.at(200); rig.down(500, 300)
        #expect(rig.snapshot.autoplay.pausedBy == [.touch, .command])
        rig.at(300); rig.command(.resume)
        #expect(rig.snapshot.autoplay.pausedBy == [.touch])
        rig.at(400); rig.up()
        #expect(rig.snapshot.autoplay == AutoplayStatus(enabled: true, running: true, pausedBy: [], next: .seconds(2.4)))
        rig.at(10_000)
        #expect(rig.events(named: "didEndScrollingAnimation").count >= 2)
    }

    @Test func togglePauseFlips() {
        var rig = Rig(autoplay: autoplay())
        rig.command(.togglePause)
        #expect(rig.snapshot.autoplay.pausedBy == [.command])
        rig.at(50); rig.command(.togglePause)
        #expect(rig.snapshot.autoplay.next == .seconds(2.05))
    }

    @Test func zoomIsAPauseSourceOfItsOwn() {
        var rig = Rig(autoplay: autoplay(), zoom: ZoomSettings())
        rig.at(10); rig.command(.zoom(scale: 2))
        #expect(rig.model.autoplayStatus.pausedBy == [.zoom])
        rig.at(20); rig.command(.zoom(scale: 1))
        // The zoom is a real one now: autoplay counts resume_delay from the
        // instant the picture is back at scale 1, not from the request.
        rig.settle()
        while rig.model.isZoomMoving { rig.run(for: 16) }
        let back = rig.events.last { $0.kind == .didEndZooming(scale: 1) }!.time
        #expect(rig.model.autoplayStatus.next == back.adding(seconds: 2))
    }

    @Test func backwardDirection() {
        var rig = Rig(autoplay: autoplay { $0.interval = 1; $0.direction = .backward })
        rig.at(1600)
        #expect(rig.offset == 4)
    }

    @Test func rewindAtTheEndWithoutWrap() {
        var rig = Rig(settings: settings { $0.wrap = false; $0.startIndex = 3 },
                      autoplay: autoplay { $0.interval = 1; $0.transition = 0.5 })
        rig.at(1600)
        #expect(rig.offset == 4)
        rig.at(3100)
        #expect(rig.offset == 0)                 // animated back to the first
        #expect(rig.events(named: "didEndScrollingAnimation").count == 2)
    }

    @Test func stopAtTheEndWithoutWrap() {
        var rig = Rig(settings: settings { $0.wrap = false; $0.startIndex = 3 },
                      autoplay: autoplay { $0.interval = 1; $0.atEnd = .stop })
        rig.at(10_000)
        #expect(rig.offset == 4)
        #expect(rig.snapshot.autoplay.next == nil)
        // An interaction tries again; back from the end it plays on.
        rig.command(.previous)
        rig.at(10_500)
        #expect(rig.offset == 3)
        rig.at(13_100)
        #expect(rig.offset == 4)
    }

    @Test func noImagesIsAPauseReason() {
        let rig = Rig(autoplay: autoplay(), count: 0)
        #expect(rig.snapshot.autoplay == AutoplayStatus(enabled: true, running: false, pausedBy: [.noImages], next: nil))
        #expect(rig.snapshot.index == 0)
    }

    @Test func aSingleImageNeverAdvances() {
        var rig = Rig(autoplay: autoplay(), count: 1)
        #expect(rig.snapshot.autoplay.next == nil)
        rig.at(20_000)
        #expect(rig.events.isEmpty)
    }

    @Test func disabledAutoplayNeverRuns() {
        var rig = Rig(count: 5)
        #expect(rig.snapshot.autoplay == AutoplayStatus(enabled: false, running: false, pausedBy: [], next: nil))
        rig.at(60_000)
        #expect(rig.events.isEmpty)
        #expect(rig.model.nextDeadline == nil)   // nothing to wake up for at rest
    }

    /// `[autoplay] enabled = false` and then `resume` (Home Assistant's
    /// Autoplay switch turned on): the pictures move, as the user asked.
    @Test func resumeTurnsOnAutoplayTheConfigurationKeepsOff() {
        var rig = Rig(autoplay: autoplay { $0.enabled = false; $0.resumeDelay = 2 })
        rig.at(100)
        #expect(rig.command(.resume) == nil)
        #expect(rig.snapshot.autoplay == AutoplayStatus(enabled: true, running: true, pausedBy: [], next: .seconds(2.1)))
        rig.at(2600)
        #expect(rig.offset == 1)
        rig.at(2700); rig.command(.pause)
        #expect(rig.snapshot.autoplay == AutoplayStatus(enabled: false, running: false, pausedBy: [.command], next: nil))
        rig.at(20_000)
        #expect(rig.offset == 1)
        // A pause lifted: on again, though the configuration says off.
        rig.command(.resume)
        #expect(rig.snapshot.autoplay == AutoplayStatus(enabled: true, running: true, pausedBy: [], next: .seconds(22)))
    }

    @Test func togglePauseFollowsWhatTheUserSees() {
        var rig = Rig(autoplay: autoplay { $0.enabled = false })
        #expect(!rig.snapshot.autoplay.enabled)
        rig.at(50); rig.command(.togglePause)
        #expect(rig.snapshot.autoplay.enabled && rig.snapshot.autoplay.running)
        rig.at(100); rig.command(.togglePause)
        #expect(rig.snapshot.autoplay == AutoplayStatus(enabled: false, running: false, pausedBy: [.command], next: nil))
    }

    /// Held for a while (a finger), autoplay is still on: the switch does not flicker.
    @Test func aFingerHoldsAutoplayWithoutTurningItOff() {
        var rig = Rig(autoplay: autoplay())
        rig.at(100); rig.down(500, 300)
        #expect(rig.snapshot.autoplay == AutoplayStatus(enabled: true, running: false, pausedBy: [.touch], next: nil))
    }

    @Test func autoscrollDriftsStopsWhileTouchedAndContinues() {
        var rig = Rig(settings: settings { $0.autoscroll = 0.5; $0.paging = false }, autoplay: autoplay())
        #expect(rig.snapshot.autoplay.pausedBy == [.autoscroll])
        rig.at(1000)
        #expect(abs(rig.offset - 0.5) < 1e-9)
        rig.down(500, 300)
        rig.at(2000)
        #expect(abs(rig.offset - 0.5) < 1e-9)
        rig.up()
        rig.at(3000)
        #expect(abs(rig.offset - 1.0) < 1e-9)
    }

    @Test func autoscrollStopsAtTheEndWithoutWrap() {
        var rig = Rig(settings: settings { $0.autoscroll = 1; $0.wrap = false; $0.paging = false })
        rig.at(10_000)
        #expect(rig.offset == 4)
        #expect(!rig.model.isMoving)
    }
}

@Suite struct ProgrammaticScrollTests {
    @Test func nextPrevAndGotoUseTheTransition() {
        var a = AutoplaySettings()
        a.enabled = false
        a.transition = 0.4
        var rig = Rig(autoplay: a)
        #expect(rig.command(.next) == nil)
        rig.at(400)
        #expect(rig.offset == 1)
        #expect(rig.events(named: "didEndScrollingAnimation").map(\.time) == [.milliseconds(400)])
        rig.command(.previous)
        rig.at(800)
        #expect(rig.offset == 0)
        rig.command(.goto(index: 3, duration: nil))
        rig.at(1200)
        #expect(rig.offset == 3)
        rig.command(.goto(index: 1, duration: 0))
        #expect(rig.offset == 1)
    }

    @Test func gotoTakesTheShortestWayRound() {
        var rig = Rig(settings: { var s = CarouselSettings(); s.startIndex = 4; return s }())
        rig.command(.goto(index: 0, duration: 1))
        rig.at(500)
        #expect(abs(rig.offset - 4.5) < 1e-9)     // forward through the seam, not back across 4 items
        rig.at(1000)
        #expect(rig.offset == 0)
    }

    @Test func twoQuickNextsMoveTwoPages() {
        var rig = Rig()
        rig.command(.next)
        rig.at(100)
        rig.command(.next)
        rig.at(2000)
        #expect(rig.offset == 2)
        #expect(rig.events(named: "didEndScrollingAnimation").count == 1)
    }

    @Test func aJumpHasNoAnimationEvents() {
        var rig = Rig()
        rig.events += rig.model.scrollToItem(3, duration: 0, at: .zero)
        #expect(rig.milestones == ["currentItemIndexDidChange"])
        #expect(rig.offset == 3)
    }

    @Test func scrollToPageByItemsAndOffset() {
        var s = CarouselSettings()
        s.itemsPerPage = 2
        s.wrap = false
        var rig = Rig(settings: s, count: 6)
        rig.events += rig.model.scrollToPage(2, duration: 0.2, at: .zero)
        rig.at(200)
        #expect(rig.offset == 4)
        rig.events += rig.model.scrollByItems(-3, duration: 0.2, at: rig.now)
        rig.at(400)
        #expect(rig.offset == 1)
        rig.events += rig.model.scrollToOffset(99, duration: 0, at: rig.now)
        #expect(rig.offset == 4)                  // clamped to the last page
    }

    @Test func commandsAreRefusedWhileTouched() {
        var rig = Rig()
        rig.down(500, 300)
        #expect(rig.command(.next) == .touchInProgress)
        #expect(rig.command(.pause) == nil)
        rig.up()
        #expect(rig.command(.goto(index: 5, duration: nil)) == .indexOutOfRange(index: 5, count: 5))
        var empty = Rig(count: 0)
        #expect(empty.command(.next) == .noItems)
    }

    @Test func aCommandEndsADecelerationFirst() {
        var rig = Rig()
        rig.swipe(from: 800, to: 250, ms: 300, hold: 60)
        rig.run(for: 50)
        rig.command(.next)
        #expect(rig.milestones.suffix(1) == ["didEndDecelerating"])
        rig.settle()
        #expect(rig.offset == 2)                  // next after the page it was settling to
    }

    @Test func noNextPastTheEndWithoutWrap() {
        var s = CarouselSettings()
        s.wrap = false
        s.startIndex = 4
        var rig = Rig(settings: s)
        #expect(rig.command(.next) == nil)
        #expect(!rig.model.isMoving)
        #expect(rig.command(.last) == nil)
        #expect(rig.command(.first) == nil)
        rig.settle()
        #expect(rig.offset == 0)
    }
}

@Suite struct ReplaceItemsTests {
    @Test func theCurrentImageStaysAndTheScheduleKeeps() {
        var a = AutoplaySettings()
        a.interval = 3
        var rig = Rig(settings: { var s = CarouselSettings(); s.startIndex = 3; return s }(), autoplay: a)
        rig.at(1000)
        // Two files before the current one were removed: it is item 1 now.
        rig.events += rig.model.replaceItems(count: 3, showing: 1, at: rig.now)
        #expect(rig.offset == 1)
        #expect(rig.model.numberOfItems == 3)
        #expect(rig.events.map(\.kind).contains(.currentItemIndexDidChange(index: 1)))
        #expect(rig.snapshot.autoplay.next == .seconds(3))
    }

    @Test func firstImagesStartAutoplayAndAnEmptyAlbumPausesIt() {
        var rig = Rig(autoplay: AutoplaySettings(), count: 0)
        #expect(rig.snapshot.autoplay.pausedBy == [.noImages])
        rig.at(500)
        rig.events += rig.model.replaceItems(count: 4, showing: 0, at: rig.now)
        #expect(rig.snapshot.autoplay == AutoplayStatus(enabled: true, running: true, pausedBy: [], next: .seconds(3.5)))
        rig.events += rig.model.replaceItems(count: 0, showing: 0, at: .seconds(1))
        #expect(rig.snapshot.autoplay == AutoplayStatus(enabled: true, running: false, pausedBy: [.noImages], next: nil))
    }

    @Test func aDragInProgressEndsCleanly() {
        var rig = Rig()
        rig.down(800, 300)
        rig.at(20); rig.move(700, 300)
        rig.events += rig.model.replaceItems(count: 7, showing: 2, at: .milliseconds(30))
        #expect(rig.milestones == ["willBeginDragging", "didEndDragging", "currentItemIndexDidChange"])
        #expect(rig.snapshot.state == .idle)
        rig.at(40); rig.move(100, 300)          // the old finger no longer drags
        #expect(rig.offset == 2)
    }
}
