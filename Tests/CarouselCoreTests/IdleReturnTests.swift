import Testing
import CarouselCore

/// `[carousel] idle_return`: back to start_index a while after the last
/// interaction (an info terminal's next visitor sees the welcome picture).
@Suite struct IdleReturnTests {
    func settings(idleReturn: Double, startIndex: Int = 0, wrap: Bool = true) -> CarouselSettings {
        var s = CarouselSettings()
        s.idleReturn = idleReturn
        s.startIndex = startIndex
        s.wrap = wrap
        return s
    }

    @Test func returnsToTheStartItemAfterTheLastInteraction() throws {
        var rig = Rig(settings: settings(idleReturn: 10, startIndex: 1))
        #expect(rig.model.nextDeadline == nil)  // nobody interacted: nothing to return from
        rig.swipe(from: 800, to: 300, ms: 120)
        rig.settle()
        #expect(rig.snapshot.index == 2)
        let rest = try #require(rig.events(named: "didEndDecelerating").last).time
        #expect(rig.model.nextDeadline == rest.adding(seconds: 10))
        rig.at(rest.adding(seconds: 9.999).milliseconds)
        #expect(rig.snapshot.index == 2)
        rig.at(rest.adding(seconds: 10).milliseconds)
        // The autoplay transition (0.5 s by default) back to item 1.
        #expect(rig.model.isScrolling)
        rig.settle()
        #expect(rig.snapshot.index == 1)
        #expect(rig.offset == 1)
        // It does not re-arm itself.
        #expect(rig.model.nextDeadline == nil)
    }

    @Test func everyInteractionMovesTheReturnOn() {
        var rig = Rig(settings: settings(idleReturn: 5))
        #expect(rig.command(.goto(index: 3, duration: 0)) == nil)
        #expect(rig.model.nextDeadline == .seconds(5))
        rig.at(4000)
        // A touch holds the return off while the finger is down...
        rig.down(500, 300)
        rig.at(7000)
        #expect(rig.snapshot.index == 3)
        // ...and the time counts from its end.
        rig.up()
        rig.settle()
        #expect(rig.model.nextDeadline == .seconds(12))
        // A command that does not move the carousel counts too.
        rig.at(10_000)
        #expect(rig.command(.pause) == nil)
        rig.at(14_000)
        #expect(rig.snapshot.index == 3)
        rig.at(15_000)
        rig.settle()
        #expect(rig.snapshot.index == 0)
    }

    @Test func takesTheShortWayAcrossTheSeamWithWrap() {
        var rig = Rig(settings: settings(idleReturn: 1))
        #expect(rig.command(.goto(index: 4, duration: 0)) == nil)
        rig.at(1000)
        rig.at(1250)
        // From 4 forward to 0 (5 ≡ 0), not back across 3, 2, 1.
        #expect(rig.model.offset(at: rig.now) > 4)
        rig.settle()
        #expect(rig.snapshot.index == 0)
    }

    @Test func zeroNeverReturns() {
        var rig = Rig(settings: settings(idleReturn: 0))
        #expect(rig.command(.goto(index: 3, duration: 0)) == nil)
        #expect(rig.model.nextDeadline == nil)
        rig.at(1_000_000)
        #expect(rig.snapshot.index == 3)
    }

    @Test func autoplayAloneDoesNotArmIt() {
        var auto = AutoplaySettings()
        auto.interval = 1
        auto.transition = 0.1
        var rig = Rig(settings: settings(idleReturn: 2), autoplay: auto)
        rig.at(5000)
        // Five automatic advances, no interaction: it keeps going.
        #expect(rig.snapshot.index == 4)
    }

    @Test func autoplayGoesOnFromTheStartItemAfterTheReturn() {
        var auto = AutoplaySettings()
        auto.interval = 30
        auto.resumeDelay = 30
        var rig = Rig(settings: settings(idleReturn: 5, startIndex: 0), autoplay: auto)
        #expect(rig.command(.goto(index: 2, duration: 0)) == nil)
        rig.at(5000)
        rig.settle()
        #expect(rig.snapshot.index == 0)
        // The return is an automatic move: the next advance is an interval away.
        let back = rig.events(named: "didEndScrollingAnimation").last!.time
        #expect(rig.snapshot.autoplay.next == back.adding(seconds: 30))
    }

    @Test func turnedOffByAReloadIsDisarmed() {
        var rig = Rig(settings: settings(idleReturn: 5))
        #expect(rig.command(.goto(index: 2, duration: 0)) == nil)
        #expect(rig.model.nextDeadline == .seconds(5))
        _ = rig.model.reconfigure(settings: settings(idleReturn: 0), autoplay: Rig.noAutoplay,
                                  viewport: Viewport(width: 1000, height: 600), count: 5, showing: 2, at: rig.now)
        #expect(rig.model.nextDeadline == nil)
        rig.at(60_000)
        #expect(rig.snapshot.index == 2)
    }

    @Test func aKeyPastTheEndWithoutWrapStillCounts() {
        var rig = Rig(settings: settings(idleReturn: 5, wrap: false))
        #expect(rig.command(.goto(index: 4, duration: 0)) == nil)
        rig.at(3000)
        #expect(rig.command(.next) == nil)
        #expect(rig.model.nextDeadline == .seconds(8))
        rig.at(8000)
        rig.settle()
        #expect(rig.snapshot.index == 0)
    }
}
