// Further rules of SPEC.md sections 2-4 and 7 at their edges.

import Testing

@Suite("edge cases")
struct EdgeCaseTests {
    @Test("a flick back after dragging past half a page returns to the page the drag began on")
    func flickBackAfterHalfAPage() throws {
        // Dragged 0.61 page forward, then flicked backwards fast: the first page
        // past 0.61 backwards is page 0, where the drag began. (The old rule,
        // "the neighbour of the start page", flew 1.6 pages back to item 4.)
        let out = try simulate("""
        set autoplay false
        at 100 down 1100 400
        at 116 move 1084 400
        at 400 move 300 400
        at 416 move 333 400
        at 432 move 367 400
        at 448 move 400 400
        at 450 up
        until 3000
        at 3000 probe
        """, wrappedCount: 5)
        #expect(out.probe(3000)?.offset == 0, "\(out.text)")
    }

    @Test("a flick forward after dragging 1.3 pages goes on to the second page, not back to the first")
    func flickForwardAfterOnePointThreePages() throws {
        // Half-width items: a page is 640 px. The drag begins at x 1180 (past
        // the slop) and carries the content 820 px (1.28 pages) at a walk,
        // then the finger flicks forward at 5,000 px/s. The old rule settled
        // back to page 1, against the fling.
        let out = try simulate("""
        set autoplay false
        set item_size 0.5
        at 100 down 1200 400
        at 116 move 1180 400
        at 300 move 1000 400
        at 500 move 800 400
        at 700 move 600 400
        at 716 move 520 400
        at 732 move 440 400
        at 748 move 360 400
        at 750 up
        until 3000
        at 3000 probe
        """, wrappedCount: 5)
        #expect(out.probe(3000)?.offset == 2, "\(out.text)")
    }

    @Test("a gap over 40 ms between samples means the finger stopped")
    func gapBetweenSamples() throws {
        // Fast until 140, then 60 ms still, then a 1 px move just before lift.
        let out = try simulate("""
        set autoplay false
        at 100 down 640 400
        at 116 move 600 400
        at 132 move 560 400
        at 140 move 555 400
        at 200 move 554 400
        at 201 up
        until 3000
        at 3000 probe
        """)
        #expect(out.probe(3000)?.offset == 0, "\(out.text)")
    }

    @Test("a swipe from a 25 Hz touchscreen with jitter pages as a 60 Hz one does")
    func twentyFiveHertzSwipe() throws {
        // The report: 1,550 px/s, samples 38-46 ms apart (a 25 Hz panel with
        // a little jitter); the 40 ms stop rule sprang it back to item 0.
        let out = try simulate("""
        set autoplay false
        at 100 down 1100 400
        at 142 move 1035 400
        at 180 move 976 400
        at 226 move 905 400
        at 268 move 840 400
        at 310 move 775 400
        at 330 up
        until 3000
        at 3000 probe
        """, wrappedCount: 5)
        #expect(out.probe(3000)?.offset == 1, "\(out.text)")
        let sixty = try simulate("""
        set autoplay false
        at 100 down 1100 400
        \((1...13).map { "at \(100 + 16 * $0) move \(1100 - 25 * $0) 400" }.joined(separator: "\n"))
        at 320 up
        until 3000
        at 3000 probe
        """, wrappedCount: 5)
        #expect(sixty.probe(3000)?.offset == 1, "\(sixty.text)")
    }

    @Test("velocity uses the event timestamps: irregular but fast samples still fling")
    func irregularSamples() throws {
        // ≈ 1000 px/s with uneven spacing (8, 24, 8, 24 ms); 96 px travel.
        let out = try simulate("""
        set autoplay false
        at 100 down 1000 400
        at 108 move 992 400
        at 132 move 968 400
        at 140 move 960 400
        at 164 move 936 400
        at 172 move 928 400
        at 196 move 904 400
        at 196 up
        until 2000
        at 2000 probe
        """)
        #expect(out.probe(2000)?.offset == 1, "\(out.text)")
    }

    @Test("touch down on a decelerating carousel (no paging) stops it where it is")
    func catchMomentum() throws {
        let out = try simulate("""
        set autoplay false
        set paging false
        at 100 down 1100 400
        at 116 move 1084 400
        at 132 move 1000 400
        at 148 move 900 400
        at 150 up
        at 300 down 640 400
        at 300 probe
        at 400 probe
        at 500 up
        until 3000
        at 3000 probe
        """, wrappedCount: 5)
        let a = try #require(out.probe(300)), b = try #require(out.probe(400))
        #expect(a.offset == b.offset && a.offset > 0.2)
        #expect(out.events("didSelectItem").isEmpty)
        // Without paging it stays where it was caught (in range).
        #expect(out.probe(3000)?.offset == a.offset, "\(out.text.suffix(400))")
    }

    @Test("a tap counts as interaction: next advance resume_delay after it")
    func tapDelaysAutoplay() throws {
        let out = try simulate("""
        at 2400 down 640 400
        at 2500 up
        at 2500 probe
        until 5100
        at 5100 probe
        """)
        #expect(out.events("didSelectItem").map { $0.index } == [0])
        #expect(out.probe(2500)?.nextMs.map { $0.isClose(4500, 1e-3) } == true)
        #expect(out.first("didEndScrollingAnimation")?.t.isClose(5000, 1e-3) == true, "\(out.discreteNames)")
    }

    @Test("a long press counts as interaction: next advance resume_delay after the lift")
    func longPressDelaysAutoplay() throws {
        let out = try simulate("""
        at 2000 down 640 400
        at 3500 up
        at 3500 probe
        until 6100
        """)
        #expect(out.events("longPress").map { $0.t } == [2500])
        #expect(out.probe(3500)?.nextMs.map { $0.isClose(5500, 1e-3) } == true, "\(out.text)")
        #expect(out.first("didEndScrollingAnimation")?.t.isClose(6000, 1e-3) == true)
    }

    @Test("transition 0 jumps (didScroll and index change at the same instant)")
    func zeroTransitionJumps() throws {
        let out = try simulate("""
        set transition 0
        at 3000 probe
        until 3100
        """)
        let p = try #require(out.probe(3000))
        #expect(p.offset == 1 && p.state == "idle", "\(p)")
        #expect(out.events("didScroll").map(\.t) == [3000])
        #expect(out.events("currentItemIndexDidChange").map { $0.index } == [1])
    }

    @Test("two images with wrap: both directions reach the other image")
    func twoImages() throws {
        for (to, label) in [(300.0, "forward"), (1000.0, "backward")] {
            let from = to == 300 ? 1100.0 : 200.0
            let out = try simulate("""
            set autoplay false
            images 2
            \(path(from: (from, 400), to: (to, 400), at: 100, ms: 800))
            at 1000 up
            until 3000
            at 3000 probe
            """, wrappedCount: 2)
            #expect(out.probe(3000)?.offset == 1, "\(label): \(out.text.suffix(300))")
        }
        // With item_size 0.5 both neighbours of item 0 are item 1.
        let tap = try simulate("""
        set autoplay false
        set double_tap false  # these taps select at the lift
        images 2
        set item_size 0.5
        at 100 down 100 400
        at 150 up
        at 200 down 1200 400
        at 250 up
        """)
        #expect(tap.events("didSelectItem").map { $0.index } == [1, 1], "\(tap.text)")
    }

    @Test("one image: a swipe comes back to it; autoplay has nothing to do")
    func oneImage() throws {
        let out = try simulate("""
        images 1
        \(path(from: (1100, 400), to: (300, 400), at: 100, ms: 800))
        at 1000 up
        until 8000
        at 8000 probe
        """, wrappedCount: 1)
        let p = try #require(out.probe(8000))
        #expect(p.offset == 0 && p.index == 0 && p.state == "idle", "\(p)")
        #expect(out.events("didEndScrollingAnimation").isEmpty)
    }

    @Test("many images: start at the last, fling forward wraps to 0")
    func manyImages() throws {
        let out = try simulate("""
        set autoplay false
        images 10000
        set start_index 9999
        at 0 probe
        at 100 down 1000 400
        at 116 move 967 400
        at 132 move 933 400
        at 148 move 900 400
        at 150 up
        until 2000
        at 2000 probe
        """, wrappedCount: 10000)
        #expect(out.probe(0)?.offset == 9999)
        #expect(out.probe(2000)?.offset == 0)
        #expect(out.events("currentItemIndexDidChange").map { $0.index } == [0])
    }

    @Test("probe states: tracking before the slop, dragging after")
    func probeStates() throws {
        let out = try simulate("""
        set autoplay false
        at 100 down 640 400
        at 110 move 635 400
        at 120 probe
        at 130 move 600 400
        at 140 probe
        """)
        #expect(out.probe(120)?.state == "tracking")
        #expect(out.probe(120)?.offset == 0)
        #expect(out.probe(140)?.state == "dragging")
    }
}
