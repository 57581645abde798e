import Testing
import CarouselCore

/// `[autoplay] effect`: automatic and commanded changes shown as a
/// crossfade or a cut, on the manual clock. Indices, events and autoplay
/// timing match a slide's; a finger always slides.
@Suite struct TransitionEffectTests {
    func autoplay(_ effect: TransitionEffect, enabled: Bool = true,
                  _ f: (inout AutoplaySettings) -> Void = { _ in }) -> AutoplaySettings {
        var a = AutoplaySettings()
        a.enabled = enabled
        a.effect = effect
        a.interval = 3
        a.transition = 1
        f(&a)
        return a
    }

    @Test func crossfadeNeverMovesTheContentAndBlendsOnTheEaseCurve() {
        var rig = Rig(autoplay: autoplay(.crossfade))
        rig.at(2999)
        #expect(rig.model.crossfade(at: rig.now) == nil)
        for (t, fraction) in [(0.25, 0.0625), (0.5, 0.5), (0.75, 0.9375)] {
            rig.at(3000 + t * 1000)
            let fade = rig.model.crossfade(at: rig.now)
            #expect(fade?.from == 0)
            #expect(fade?.to == 1)
            #expect(abs((fade?.fraction ?? -1) - fraction) < 1e-9)
            // The offset is a whole item: the one that shows more.
            #expect(rig.offset == (fraction < 0.5 ? 0 : 1))
            #expect(rig.snapshot.state == .animating)
            #expect(rig.model.isMoving)
        }
        rig.at(4000)
        #expect(rig.model.crossfade(at: rig.now) == nil)
        #expect(rig.offset == 1)
        #expect(rig.snapshot.state == .idle)
    }

    @Test(arguments: [TransitionEffect.slide, .crossfade, .cut])
    func autoplayEventsAndTimingAreTheSameForEveryEffect(_ effect: TransitionEffect) {
        var rig = Rig(autoplay: autoplay(effect))
        rig.at(10_000)
        // Advances at 3 s (and rest 1 s later, or at once for a cut), then interval from rest.
        let restTimes: [Double] = effect == .cut ? [3, 6, 9] : [4, 8]
        let ends = rig.events(named: "didEndScrollingAnimation").map(\.time)
        #expect(ends == restTimes.map { Timestamp.seconds($0) })
        let indices = rig.events(named: "currentItemIndexDidChange").map(\.kind)
        #expect(indices == (1...restTimes.count).map { CarouselEventKind.currentItemIndexDidChange(index: $0) })
        // Every index change comes before its animation's end, as with a slide.
        #expect(rig.milestones.filter { $0 != "didEndScrollingAnimation" && $0 != "currentItemIndexDidChange" }.isEmpty)
        let next = rig.snapshot.autoplay.next
        #expect(next == .seconds((restTimes.last ?? 0) + 3))
    }

    @Test func crossfadeReportsTheNewIndexHalfWayAsASlideDoes() {
        var rig = Rig(autoplay: autoplay(.crossfade))
        rig.at(3499)
        #expect(rig.model.crossfade(at: rig.now) != nil)
        #expect(rig.events(named: "currentItemIndexDidChange").isEmpty)
        rig.at(3500)
        #expect(rig.events(named: "currentItemIndexDidChange").map(\.time) == [.milliseconds(3500)])
        rig.at(4000)
        #expect(rig.milestones == ["currentItemIndexDidChange", "didEndScrollingAnimation"])
    }

    @Test(arguments: [TransitionEffect.crossfade, .cut])
    func commandsUseTheEffect(_ effect: TransitionEffect) {
        var rig = Rig(autoplay: autoplay(effect, enabled: false))
        rig.command(.next)
        if effect == .cut {
            // At once, with the events of a whole slide.
            #expect(rig.offset == 1)
            #expect(!rig.model.isMoving)
            #expect(rig.milestones == ["currentItemIndexDidChange", "didEndScrollingAnimation"])
        } else {
            #expect(rig.model.crossfade(at: rig.now) == Crossfade(from: 0, to: 1, fraction: 0))
        }
        rig.settle()
        rig.command(.goto(index: 3, duration: nil))
        if effect == .crossfade {
            // Straight from 1 to 3: a crossfade passes no picture in between.
            #expect(rig.model.crossfade(at: rig.now)?.to == 3)
            #expect(rig.model.crossfade(at: rig.now)?.from == 1)
        }
        rig.settle()
        rig.command(.previous)
        rig.settle()
        #expect(rig.offset == 2)
        let indices = rig.events(named: "currentItemIndexDidChange").map(\.kind)
        #expect(indices == [1, 3, 2].map { CarouselEventKind.currentItemIndexDidChange(index: $0) })
        #expect(rig.events(named: "didEndScrollingAnimation").count == 3)
        // A picture never passed over (2 on the way from 1 to 3) is never reported.
        #expect(!rig.events.contains { if case .didScroll(let x) = $0.kind { x != 0 && x != 1 && x != 2 && x != 3 } else { false } })
    }

    @Test func aSecondNextDuringACrossfadeGoesOnFromWhereItWasHeading() {
        var rig = Rig(autoplay: autoplay(.crossfade, enabled: false))
        rig.command(.next)
        rig.at(600)  // past half-way: 1 shows more
        rig.command(.next)
        let fade = rig.model.crossfade(at: rig.now)
        #expect(fade?.from == 1)
        #expect(fade?.to == 2)
        rig.settle()
        #expect(rig.offset == 2)
        // One occurrence, one end (the first fade was redirected, not ended).
        #expect(rig.events(named: "didEndScrollingAnimation").count == 1)
    }

    @Test func aFingerOnACrossfadeStopsItOnThePictureThatShowsMoreAndThenDrags() {
        // Early: the outgoing picture shows more, and stays.
        var early = Rig(autoplay: autoplay(.crossfade))
        early.at(3200)
        early.down(500, 300)
        #expect(early.model.crossfade(at: early.now) == nil)
        #expect(early.offset == 0)
        #expect(early.milestones == ["didEndScrollingAnimation"])
        #expect(early.snapshot.autoplay.next == nil)
        // The touch caught it: not a tap; lifting leaves it where it is.
        early.up()
        #expect(!early.events.contains { $0.kind.name == "didSelectItem" })
        #expect(early.offset == 0)
        #expect(early.snapshot.autoplay.next == early.now.adding(seconds: 2))

        // Late: the incoming picture shows more; a drag slides from it under the finger.
        var late = Rig(autoplay: autoplay(.crossfade))
        late.at(3700)
        late.down(500, 300)
        #expect(late.offset == 1)
        #expect(late.model.crossfade(at: late.now) == nil)
        late.at(3720)
        late.move(480, 300)
        late.at(3740)
        late.move(400, 300)
        // 100 px of 1000 past the slop's start: the content follows the finger, 1:1, from item 1.
        #expect(late.model.isDragging)
        #expect(abs(late.offset - 1.08) < 1e-9)
        #expect(late.model.crossfade(at: late.now) == nil)
        late.at(3900)
        late.up()
        late.settle()
        #expect(late.offset == 1)
        #expect(late.milestones.prefix(4) == ["currentItemIndexDidChange", "didEndScrollingAnimation",
                                               "willBeginDragging", "didEndDragging"])
    }

    @Test func aDragAlwaysSlides() {
        var rig = Rig(autoplay: autoplay(.crossfade, enabled: false))
        rig.swipe(from: 800, to: 200, ms: 200)
        // Released and settling: a spring, never a crossfade.
        #expect(rig.model.isDecelerating)
        var sawFade = false
        rig.run(for: 1000) { r in if r.model.crossfade(at: r.now) != nil { sawFade = true } }
        #expect(!sawFade)
        #expect(rig.offset == 1)
        // The same carousel crossfades a command: only the finger slides.
        rig.command(.next)
        #expect(rig.model.crossfade(at: rig.now) != nil)
    }

    @Test func idleReturnUsesTheEffect() {
        var s = CarouselSettings()
        s.idleReturn = 5
        var rig = Rig(settings: s, autoplay: autoplay(.cut, enabled: false))
        rig.command(.goto(index: 3, duration: nil))
        #expect(rig.offset == 3)
        rig.at(5000)
        #expect(rig.offset == 0)
        #expect(!rig.model.isMoving)
    }

    @Test func wrapsAcrossTheSeamWithACrossfade() {
        var s = CarouselSettings()
        s.startIndex = 4
        var rig = Rig(settings: s, autoplay: autoplay(.crossfade))
        rig.at(3500)
        let fade = rig.model.crossfade(at: rig.now)
        #expect(fade.map { rig.model.displayOffset($0.to) } == 0)
        rig.at(4000)
        #expect(rig.offset == 0)
        #expect(rig.events(named: "currentItemIndexDidChange").map(\.kind) == [.currentItemIndexDidChange(index: 0)])
    }
}
