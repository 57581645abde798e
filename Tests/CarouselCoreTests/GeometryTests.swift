import Testing
@testable import CarouselCore

@Suite struct GeometryTests {
    func settings(_ f: (inout CarouselSettings) -> Void) -> CarouselSettings {
        var s = CarouselSettings()
        f(&s)
        return s
    }

    @Test func fullWidthItemsCentredHaveNoLead() {
        let g = Geometry(viewport: Viewport(width: 1000, height: 600), settings: CarouselSettings())
        #expect(g.itemExtent == 1000)
        #expect(g.pitch == 1000)
        #expect(g.lead == 0)
        #expect(g.start(ofSlot: 1, offset: 0.25) == 750)
    }

    @Test func peekAndSpacingGeometry() {
        let s = settings { $0.itemSize = .fraction(0.6); $0.spacing = 20 }
        let g = Geometry(viewport: Viewport(width: 1000, height: 600), settings: s)
        #expect(g.itemExtent == 600)
        #expect(g.pitch == 620)
        #expect(g.lead == 200)
        // Item 1 at offset 1 is centred: 200..800; item 0 peeks at -420..180, item 2 at 820..1420.
        #expect(g.start(ofSlot: 0, offset: 1) == -420)
        #expect(g.start(ofSlot: 2, offset: 1) == 820)
    }

    @Test func hitTestingFollowsPeekSpacingAndWrap() {
        let s = settings { $0.itemSize = .fraction(0.6); $0.spacing = 20 }
        let g = Geometry(viewport: Viewport(width: 1000, height: 600), settings: s)
        // At offset 0 with wrap, the left peek (-420..180) is item n-1.
        #expect(g.item(at: Point(x: 100, y: 300), offset: 0, count: 5, wrap: true) == 4)
        #expect(g.item(at: Point(x: 100, y: 300), offset: 0, count: 5, wrap: false) == nil)
        #expect(g.item(at: Point(x: 500, y: 300), offset: 0, count: 5, wrap: false) == 0)
        // The 20 px gap between item 0 (200..800) and item 1 (820..1420) selects nothing.
        #expect(g.item(at: Point(x: 810, y: 300), offset: 0, count: 5, wrap: true) == nil)
        #expect(g.item(at: Point(x: 820, y: 300), offset: 0, count: 5, wrap: true) == 1)
        #expect(g.item(at: Point(x: 799.9, y: 300), offset: 0, count: 5, wrap: true) == 0)
        // Outside the viewport: nothing.
        #expect(g.item(at: Point(x: 1000, y: 300), offset: 0, count: 5, wrap: true) == nil)
        #expect(g.item(at: Point(x: 500, y: -1), offset: 0, count: 5, wrap: true) == nil)
    }

    @Test func edgeAlignmentStartsAtTheLeadingEdge() {
        let s = settings { $0.itemSize = .fraction(0.5); $0.alignment = .edge }
        let g = Geometry(viewport: Viewport(width: 1000, height: 600), settings: s)
        #expect(g.lead == 0)
        #expect(g.item(at: Point(x: 100, y: 10), offset: 2, count: 5, wrap: false) == 2)
        #expect(g.item(at: Point(x: 600, y: 10), offset: 2, count: 5, wrap: false) == 3)
        #expect(g.item(at: Point(x: 600, y: 10), offset: 4, count: 5, wrap: false) == nil)
        #expect(g.item(at: Point(x: 600, y: 10), offset: 4, count: 5, wrap: true) == 0)
    }

    @Test func verticalUsesTheYAxis() {
        let s = settings { $0.vertical = true; $0.itemSize = .pixels(300) }
        let g = Geometry(viewport: Viewport(width: 400, height: 900), settings: s)
        #expect(g.axisExtent == 900)
        #expect(g.lead == 300)
        #expect(g.item(at: Point(x: 10, y: 450), offset: 3, count: 5, wrap: false) == 3)
        #expect(g.item(at: Point(x: 10, y: 250), offset: 3, count: 5, wrap: false) == 2)
        #expect(g.item(at: Point(x: 10, y: 650), offset: 3, count: 5, wrap: false) == 4)
    }

    @Test func visibleSlotsCoverTheViewportAndRespectWrap() {
        let s = settings { $0.itemSize = .fraction(0.6); $0.spacing = 20 }
        let g = Geometry(viewport: Viewport(width: 1000, height: 600), settings: s)
        #expect(g.visibleSlots(offset: 0, count: 5, wrap: true) == -1...1)
        #expect(g.visibleSlots(offset: 0, count: 5, wrap: false) == 0...1)
        #expect(g.visibleSlots(offset: 4, count: 5, wrap: false) == 3...4)
        // Every slot listed intersects the viewport, its neighbours do not.
        for x in stride(from: -1.0, through: 6.0, by: 0.037) {
            guard let slots = g.visibleSlots(offset: x, count: 5, wrap: true) else { Issue.record("no slots"); continue }
            for k in slots {
                let a = g.start(ofSlot: k, offset: x)
                #expect(a < 1000 && a + g.itemExtent > 0)
            }
            #expect(g.start(ofSlot: slots.lowerBound - 1, offset: x) + g.itemExtent <= 0)
            #expect(g.start(ofSlot: slots.upperBound + 1, offset: x) >= 1000)
        }
    }

    @Test func slotIndexWrapsBothWays() {
        #expect(Geometry.index(ofSlot: -1, count: 5, wrap: true) == 4)
        #expect(Geometry.index(ofSlot: -6, count: 5, wrap: true) == 4)
        #expect(Geometry.index(ofSlot: 5, count: 5, wrap: true) == 0)
        #expect(Geometry.index(ofSlot: 5, count: 5, wrap: false) == nil)
        #expect(Geometry.index(ofSlot: 0, count: 0, wrap: true) == nil)
    }
}

@Suite struct PageLatticeTests {
    func lattice(count: Int, perPage: Int = 1, wrap: Bool = true, truncate: Bool = false, paging: Bool = true) -> PageLattice {
        var s = CarouselSettings()
        s.itemsPerPage = perPage
        s.wrap = wrap
        s.truncateFinalPage = truncate
        s.paging = paging
        return PageLattice(count: count, settings: s)
    }

    @Test func pagesOfSeveralItems() {
        let l = lattice(count: 5, perPage: 2, wrap: false)
        #expect(l.pageCount == 3)
        #expect((0..<3).map { l.offset(ofCyclePage: $0) } == [0, 2, 4])
        #expect(l.range == 0...4)
    }

    @Test func truncatedFinalPageEndsAtTheLastItem() {
        let l = lattice(count: 5, perPage: 2, wrap: false, truncate: true)
        #expect((0..<3).map { l.offset(ofCyclePage: $0) } == [0, 2, 3])
        #expect(l.range == 0...3)
        // Truncation only applies without wrap.
        let w = lattice(count: 5, perPage: 2, wrap: true, truncate: true)
        #expect(w.offset(ofCyclePage: 2) == 4)
    }

    @Test func aFlingLandsOnTheFirstPagePastTheOffset() {
        // Pages at 0, 2, 3 (truncated final page).
        let l = lattice(count: 5, perPage: 2, wrap: false, truncate: true)
        #expect(l.firstPage(past: 0.6, forward: true) == 1)
        #expect(l.firstPage(past: 0.6, forward: false) == 0)
        #expect(l.firstPage(past: 2.5, forward: true) == 2)      // the truncated page at 3
        #expect(l.firstPage(past: 2, forward: true) == 2)        // on a page: the next one
        #expect(l.firstPage(past: 2, forward: false) == 0)
        #expect(l.firstPage(past: 2 + 1e-12, forward: false) == 0)  // within 1e-9: still on page 1
        #expect(l.firstPage(past: 3, forward: true) == 2)        // clamped at the end
        #expect(l.firstPage(past: -0.4, forward: false) == 0)    // clamped at the start
        // With wrap, pages are unwrapped numbers: past the end is the next cycle.
        let w = lattice(count: 5, perPage: 1, wrap: true)
        #expect(w.firstPage(past: 4.3, forward: true) == 5)
        #expect(w.firstPage(past: -0.3, forward: false) == -1)
        #expect(w.firstPage(past: -0.3, forward: true) == 0)
        #expect(w.firstPage(past: 11.999_999, forward: true) == 12)
        // Never more than a page away, never behind, over many offsets.
        for k in 0..<2000 {
            let x = Double(k) / 97 - 7
            for forward in [true, false] {
                let q = w.firstPage(past: x, forward: forward)
                let d = w.offset(ofPage: q) - x
                #expect(forward ? (d > 0 && d <= 1 + 1e-9) : (d < 0 && d >= -1 - 1e-9), "x \(x) forward \(forward): page \(q)")
            }
        }
    }

    @Test func withoutPagingTheRangeEndsAtTheLastItem() {
        #expect(lattice(count: 7, paging: false).range == nil)
        #expect(lattice(count: 7, wrap: false, paging: false).range == 0...6)
        #expect(lattice(count: 0, wrap: false).range == 0...0)
    }

    @Test func unwrappedPagesRepeatEveryCycle() {
        let l = lattice(count: 5, perPage: 2)
        #expect(l.offset(ofPage: 3) == 5)
        #expect(l.offset(ofPage: -1) == -1)
        #expect(l.offset(ofPage: -3) == -5)
        #expect(l.cyclePage(-1) == 2)
        #expect(l.cyclePage(7) == 1)
    }

    @Test func nearestPageTiesGoForwardAndClampWithoutWrap() {
        let l = lattice(count: 5)
        #expect(l.nearestPage(to: 1.49) == 1)
        #expect(l.nearestPage(to: 1.5) == 2)
        #expect(l.nearestPage(to: -0.6) == -1)
        #expect(l.nearestPage(to: 7.2) == 7)
        let n = lattice(count: 5, wrap: false)
        #expect(n.nearestPage(to: -0.6) == 0)
        #expect(n.nearestPage(to: 7.2) == 4)
    }

    @Test func shortestWayRound() {
        let l = lattice(count: 5)
        #expect(l.nearestCopy(of: 0, to: 4) == 5)
        #expect(l.nearestCopy(of: 4, to: 0) == -1)
        #expect(l.nearestCopy(of: 2, to: 0) == 2)
        #expect(l.nearestCopy(of: 3, to: 0) == -2)
        // A tie (half a cycle either way) goes forward.
        let even = lattice(count: 4)
        #expect(even.nearestCopy(of: 2, to: 0) == 2)
        #expect(even.nearestCopy(of: 0, to: 2) == 4)
        #expect(lattice(count: 5, wrap: false).nearestCopy(of: 0, to: 4) == 0)
    }

    @Test func itemIndexIsNearestWrappedOrClamped() {
        #expect(lattice(count: 5).itemIndex(at: 4.6) == 0)
        #expect(lattice(count: 5).itemIndex(at: -0.6) == 4)
        #expect(lattice(count: 5, wrap: false).itemIndex(at: -0.6) == 0)
        #expect(lattice(count: 5, wrap: false).itemIndex(at: 4.6) == 4)
        #expect(lattice(count: 0).itemIndex(at: 3) == 0)
    }
}
