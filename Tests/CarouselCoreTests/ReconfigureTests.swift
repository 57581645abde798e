import CarouselCore
import Testing

/// New settings at run time: what a reload or a `set` request does to the model.
@Suite("Reconfigure")
struct ReconfigureTests {
    static let viewport = Viewport(width: 1000, height: 600)

    static var autoplay: AutoplaySettings {
        var a = AutoplaySettings()
        a.interval = 3
        a.transition = 0.5
        return a
    }

    /// Reconfigures the rig's model, keeping the current item.
    static func apply(_ rig: inout Rig, settings: CarouselSettings? = nil, autoplay: AutoplaySettings? = nil,
                      viewport: Viewport = viewport, count: Int? = nil) {
        let index = rig.model.currentItemIndex(at: rig.now)
        rig.events += rig.model.reconfigure(settings: settings ?? rig.model.settings,
                                            autoplay: autoplay ?? rig.model.autoplaySettings, viewport: viewport,
                                            count: count ?? rig.model.numberOfItems, showing: index, at: rig.now)
    }

    @Test func aNewIntervalAppliesFromNowAndNothingMoves() {
        var rig = Rig(autoplay: Self.autoplay)
        rig.at(1000)
        var a = Self.autoplay
        a.interval = 10
        Self.apply(&rig, autoplay: a)
        #expect(rig.events.isEmpty)
        #expect(rig.snapshot.autoplay.next == .seconds(11))
        rig.at(10_999)
        #expect(rig.offset == 0)
        rig.at(11_001)
        #expect(rig.snapshot.state == .animating)
    }

    @Test func aChangeThatKeepsTheIntervalKeepsTheSchedule() {
        var rig = Rig(autoplay: Self.autoplay)
        rig.at(1000)
        var a = Self.autoplay
        a.direction = .backward
        a.transition = 1
        Self.apply(&rig, autoplay: a)
        #expect(rig.snapshot.autoplay.next == .seconds(3))
        rig.at(3001)
        rig.settle()
        #expect(rig.offset == 4)  // backwards, wrapping
    }

    @Test func autoplayCanBeSwitchedOffAndOnAgain() {
        var rig = Rig(autoplay: Self.autoplay)
        var off = Self.autoplay
        off.enabled = false
        rig.at(500)
        Self.apply(&rig, autoplay: off)
        #expect(rig.snapshot.autoplay == AutoplayStatus(enabled: false, running: false, pausedBy: [], next: nil))
        #expect(rig.model.nextDeadline == nil)
        rig.at(2000)
        Self.apply(&rig, autoplay: Self.autoplay)
        #expect(rig.snapshot.autoplay.next == .seconds(5))
    }

    @Test func aPauseByCommandSurvivesANewConfiguration() {
        var rig = Rig(autoplay: Self.autoplay)
        rig.command(.pause)
        var a = Self.autoplay
        a.interval = 1
        Self.apply(&rig, autoplay: a)
        #expect(rig.snapshot.autoplay.pausedBy == [.command])
        #expect(rig.model.nextDeadline == nil)
    }

    /// A `resume` that turned on autoplay the configuration keeps off lasts
    /// through a reload that says the same, and ends when `enabled` changes.
    @Test func aResumeLastsUntilTheConfigurationChangesEnabled() {
        var off = Self.autoplay
        off.enabled = false
        var rig = Rig(autoplay: off)
        rig.command(.resume)
        var a = off
        a.interval = 1
        Self.apply(&rig, autoplay: a)
        #expect(rig.snapshot.autoplay.enabled && rig.snapshot.autoplay.running)
        a.enabled = true
        Self.apply(&rig, autoplay: a)
        a.enabled = false
        Self.apply(&rig, autoplay: a)
        #expect(rig.snapshot.autoplay == AutoplayStatus(enabled: false, running: false, pausedBy: [], next: nil))
        #expect(rig.model.nextDeadline == nil)
    }

    @Test func anAnimationInFlightIsNotInterruptedByALiveSetting() {
        var rig = Rig(autoplay: Rig.noAutoplay)
        rig.command(.next)
        rig.run(for: 100)
        #expect(rig.snapshot.state == .animating)
        var s = rig.model.settings
        s.touchSlop = 30
        s.bounces = false
        Self.apply(&rig, settings: s)
        #expect(rig.snapshot.state == .animating)
        #expect(rig.model.settings.touchSlop == 30)
        rig.settle()
        #expect(rig.offset == 1)
        #expect(rig.milestones == ["currentItemIndexDidChange", "didEndScrollingAnimation"])
    }

    @Test func aNewSlopAppliesToTheNextGesture() {
        var rig = Rig()
        var s = rig.model.settings
        s.touchSlop = 40
        Self.apply(&rig, settings: s)
        rig.down(500, 300)
        rig.at(20); rig.move(470, 300)  // 30 px: inside the new slop
        #expect(!rig.model.isDragging)
        rig.at(40); rig.move(450, 300)
        #expect(rig.model.isDragging)
    }

    @Test func aNewLayoutKeepsTheCurrentItemAndBalancesTheEvents() {
        var rig = Rig(autoplay: Self.autoplay, count: 6)
        rig.command(.goto(index: 3, duration: 0))
        rig.at(100)
        rig.command(.next)
        rig.run(for: 100)  // an animation toward item 4 is in flight
        let index = rig.model.currentItemIndex(at: rig.now)
        rig.events = []
        var s = rig.model.settings
        s.vertical = true
        s.spacing = 20
        s.wrap = false
        Self.apply(&rig, settings: s, viewport: Viewport(width: 600, height: 1000))
        #expect(rig.milestones == ["didEndScrollingAnimation"])
        #expect(rig.snapshot.state == .idle)
        #expect(rig.snapshot.index == index)
        #expect(rig.offset == Double(index))
        #expect(rig.model.geometry.vertical)
        #expect(rig.model.geometry.pitch == 1020)
        // Autoplay carries on from the new rest; the `next` was an interaction.
        #expect(rig.snapshot.autoplay.next == rig.now.adding(seconds: 2))
    }

    @Test func aNewLayoutEndsADragAndTheOldFingerNoLongerDrags() {
        var rig = Rig(count: 5)
        rig.down(800, 300)
        rig.at(20); rig.move(700, 300)
        #expect(rig.model.isDragging)
        var s = rig.model.settings
        s.itemsPerPage = 2
        Self.apply(&rig, settings: s)
        #expect(rig.milestones == ["willBeginDragging", "didEndDragging"])
        #expect(rig.snapshot.state == .idle)
        rig.at(40); rig.move(100, 300)
        #expect(rig.offset == 0)
    }

    @Test func autoscrollStartsAndStopsWithANewConfiguration() {
        var rig = Rig()
        var s = rig.model.settings
        s.autoscroll = 0.5
        Self.apply(&rig, settings: s)
        rig.run(for: 1000)
        #expect(abs(rig.offset - 0.5) < 0.02)
        s.autoscroll = 0
        Self.apply(&rig, settings: s)
        let stopped = rig.offset
        rig.run(for: 500)
        #expect(rig.offset == stopped)
        #expect(!rig.model.isMoving)
    }
}
