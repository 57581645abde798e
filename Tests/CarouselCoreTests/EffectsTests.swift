import Testing
import CarouselCore

/// The effects the model hands the daemon (`takeEffects()`), on the manual
/// clock of `Rig`: 1000x600 viewport, full-width items, 5 items, wrap, paging.
@Suite struct EffectsTests {
    /// A rig whose first report (the first frame is due) is already taken.
    func idleRig(_ f: (inout CarouselSettings) -> Void = { _ in }, count: Int = 5) -> Rig {
        var s = CarouselSettings()
        f(&s)
        var rig = Rig(settings: s, count: count)
        _ = rig.model.takeEffects()
        return rig
    }

    @Test func theFirstReportAsksForTheFirstFrameThenNothingWhileIdle() {
        var rig = Rig()
        let first = rig.model.takeEffects()
        #expect(first.needsFrame)
        #expect(first.moving == nil)
        rig.at(1000)
        #expect(rig.model.takeEffects() == CarouselEffects())
    }

    @Test func aDragNeedsFramesButIsNotMoving() {
        var rig = idleRig()
        rig.down(500, 300)
        rig.at(10); rig.move(495, 300)          // inside the slop: nothing on screen changes
        #expect(rig.model.takeEffects() == CarouselEffects())
        rig.at(20); rig.move(489, 300)          // the drag starts, the content has not moved yet
        #expect(!rig.model.takeEffects().needsFrame)
        rig.at(30); rig.move(389, 300)
        let e = rig.model.takeEffects()
        #expect(e.needsFrame)
        #expect(e.moving == nil)                // the finger holds it: the offset does not change with time
        #expect(e.prefetch.isEmpty)
        #expect(!rig.model.takeEffects().needsFrame)
    }

    @Test func aFlingReportsMovingAndPrefetchesTheTargetPage() {
        var rig = idleRig()
        rig.swipe(from: 700, to: 600, ms: 40)   // 2500 px/s: a fling to page 1
        let e = rig.model.takeEffects()
        #expect(e.moving == true)
        #expect(e.prefetch == [1])
        #expect(e.needsFrame)
        // Backwards, wrapping: the last item.
        var back = idleRig()
        back.swipe(from: 300, to: 400, ms: 40)
        #expect(back.model.takeEffects().prefetch == [4])
    }

    @Test func restReportsMovingFalseExactlyOnceWithAFrame() {
        var rig = idleRig()
        rig.swipe(from: 700, to: 600, ms: 40)
        #expect(rig.model.takeEffects().moving == true)
        var reports: [CarouselEffects] = []
        rig.run(for: 2000) { r in reports.append(r.model.takeEffects()) }
        let stops = reports.indices.filter { reports[$0].moving == false }
        #expect(stops.count == 1)
        #expect(reports.allSatisfy { $0.moving != true })
        guard let stop = stops.first else { return }
        #expect(reports[stop].needsFrame)       // the last frame shows where it stopped
        #expect(rig.offset == 1)
        // Frames were asked for while it moved, none after it stopped.
        #expect(reports[..<stop].allSatisfy { $0.needsFrame })
        #expect(reports[(stop + 1)...].allSatisfy { $0 == CarouselEffects() })
    }

    @Test func aCatchStopsTheMotionWithAFrame() {
        var rig = idleRig()
        rig.swipe(from: 700, to: 600, ms: 40)
        rig.run(for: 50)
        #expect(rig.model.takeEffects().moving == true)
        // The daemon drew frames at its own vblank times, maybe past the
        // model's clock: where the finger stopped it must be drawn, even
        // though the offset at the clock did not change since the last take.
        rig.down(500, 300)
        let e = rig.model.takeEffects()
        #expect(e.moving == false)
        #expect(e.needsFrame)
    }

    @Test func nextPrefetchesTheNextPage() {
        var rig = idleRig { $0.startIndex = 4 }
        rig.command(.next)                      // wraps to item 0
        let e = rig.model.takeEffects()
        #expect(e.prefetch == [0])
        #expect(e.moving == true)
        rig.at(100)
        rig.command(.previous)                  // redirected back: heading to 4 again
        #expect(rig.model.takeEffects().prefetch == [4])
        rig.command(.goto(index: 2, duration: 0))   // a jump: no motion, a frame
        let jump = rig.model.takeEffects()
        #expect(jump.prefetch.isEmpty)
        #expect(jump.moving == false)
        #expect(jump.needsFrame)
    }

    @Test func prefetchIncludesTheNeighboursThatPeekIn() {
        var rig = idleRig({ $0.itemSize = .fraction(0.6) }, count: 10)
        rig.command(.goto(index: 5, duration: nil))
        #expect(rig.model.takeEffects().prefetch == [4, 5, 6])
    }

    @Test func momentumPrefetchesWhereItComesToRest() {
        var rig = idleRig({ $0.paging = false; $0.wrap = false }, count: 50)
        rig.swipe(from: 900, to: 700, ms: 100)  // 2000 px/s
        let e = rig.model.takeEffects()
        #expect(e.moving == true)
        rig.settle()
        let rest = rig.model.offset(at: rig.now)
        // Full-width items: the item under the rest offset and the next one, partly shown.
        #expect(e.prefetch == [Int(rest.rounded(.down)), Int(rest.rounded(.down)) + 1])
    }

    @Test func indexChangedMatchesCurrentItemIndexDidChange() {
        var rig = idleRig()
        var checked = 0
        func check(_ rig: inout Rig, since start: Int) {
            let e = rig.model.takeEffects()
            let last = rig.events[start...].last { $0.kind.name == "currentItemIndexDidChange" }
            #expect(e.indexChanged == last?.kind.index)
            if last != nil { checked += 1 }
        }
        // A drag across two items and back, frame by frame, then a settle and commands.
        rig.down(900, 300)
        var t = 0.0
        for x in Array(stride(from: 880.0, through: -400, by: -40)) + Array(stride(from: -400.0, through: 300, by: 50)) {
            t += 16
            let start = rig.events.count
            rig.at(t); rig.move(x, 300)
            check(&rig, since: start)
        }
        var start = rig.events.count
        rig.up()
        check(&rig, since: start)
        for _ in 0..<100 {
            start = rig.events.count
            rig.run(for: 16)
            check(&rig, since: start)
        }
        for command in [CarouselCommand.next, .next, .previous, .goto(index: 3, duration: 0)] {
            start = rig.events.count
            rig.command(command)
            rig.run(for: 600)
            check(&rig, since: start)
        }
        #expect(checked >= 5)
    }

    @Test func tapAndLongPressAreReported() {
        var rig = idleRig { $0.itemSize = .fraction(0.5) }
        rig.down(500, 300)
        rig.at(100); rig.up()
        #expect(rig.model.takeEffects().selected == 0)
        rig.at(200); rig.down(800, 300)         // the right neighbour
        rig.at(700)
        let e = rig.model.takeEffects()
        #expect(e.longPressed == 1)
        #expect(e.selected == nil)
        rig.at(800); rig.up()
        #expect(rig.model.takeEffects().selected == nil)
    }

    @Test func newItemsAndNewLayoutsNeedAFrame() {
        var rig = idleRig()
        _ = rig.model.replaceItems(count: 5, showing: 0, at: rig.now)   // files replaced: same count, same place
        #expect(rig.model.takeEffects().needsFrame)
        var s = CarouselSettings()
        s.spacing = 20
        _ = rig.model.reconfigure(settings: s, autoplay: Rig.noAutoplay, viewport: Viewport(width: 1000, height: 600),
                                  count: 5, showing: 0, at: rig.now)
        #expect(rig.model.takeEffects().needsFrame)
        // A setting that changes no picture does not.
        s.touchSlop = 20
        _ = rig.model.reconfigure(settings: s, autoplay: Rig.noAutoplay, viewport: Viewport(width: 1000, height: 600),
                                  count: 5, showing: 0, at: rig.now)
        #expect(rig.model.takeEffects() == CarouselEffects())
    }

    @Test func autoscrollIsMovingFromTheStart() {
        var s = CarouselSettings()
        s.autoscroll = 0.5
        var rig = Rig(settings: s)
        let e = rig.model.takeEffects()
        #expect(e.moving == true)
        #expect(e.needsFrame)
        rig.down(500, 300)                      // a finger stops the drift
        #expect(rig.model.takeEffects().moving == false)
    }

    @Test func theHeadingIsReportedWhenTheWayTheContentMovesChanges() {
        var rig = idleRig()
        rig.down(500, 300)
        rig.at(10); rig.move(480, 300)
        rig.at(20); rig.move(400, 300)          // finger left: the content goes forward
        #expect(rig.model.takeEffects().heading == 1)
        rig.at(30); rig.move(350, 300)
        #expect(rig.model.takeEffects().heading == nil, "still forward: nothing new to say")
        rig.at(40); rig.move(450, 300)          // back the other way
        #expect(rig.model.takeEffects().heading == -1)
        rig.up()
        rig.settle()
        _ = rig.model.takeEffects()
        // Backwards across the wrap seam (0 to the last item) is still backwards, and coming to rest
        // there (the offset folded back into 0..<count) is no motion.
        var back = idleRig()
        back.swipe(from: 300, to: 400, ms: 40)
        #expect(back.model.takeEffects().heading == -1)
        var reports: [CarouselEffects] = []
        back.run(for: 2000) { r in reports.append(r.model.takeEffects()) }
        #expect(back.offset == 4)
        #expect(reports.allSatisfy { $0.heading == nil }, "\(reports.compactMap(\.heading))")
    }
}
