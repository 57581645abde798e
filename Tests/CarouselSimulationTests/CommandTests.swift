// Control commands in a script: next, prev, goto (SPEC.md section 2,
// programmatic scrolling: shortest way round with wrap, cubic ease-in-out;
// goto uses the autoplay `transition` duration).

import Testing

@Suite("commands")
struct CommandTests {
    @Test("next and prev move one item and end with didEndScrollingAnimation")
    func nextPrev() throws {
        let out = try simulate("""
        set autoplay false
        at 100 command next
        at 2000 probe
        at 2100 command next
        at 4000 probe
        at 4100 command prev
        at 6000 probe
        """, wrappedCount: 5)
        #expect(out.probe(2000)?.offset == 1, "\(out.discreteNames)")
        #expect(out.probe(4000)?.offset == 2)
        #expect(out.probe(6000)?.offset == 1)
        #expect(out.events("didEndScrollingAnimation").count == 3)
        #expect(out.events("currentItemIndexDidChange").map { $0.index } == [1, 2, 1])
        #expect(out.first("willBeginDragging") == nil)
    }

    @Test("prev from item 0 with wrap goes the short way to the last item")
    func prevWraps() throws {
        let out = try simulate("""
        set autoplay false
        at 100 command prev
        until 2000
        at 2000 probe
        """, wrappedCount: 5)
        let p = try #require(out.probe(2000))
        #expect(p.offset == 4 && p.index == 4, "\(p)")
        // The short way: every intermediate offset is in (4, 5) (or exactly 0 at the start).
        #expect(out.events("didScroll").allSatisfy { $0.offset! >= 4 || $0.offset! == 0 }, "\(out.text)")
        #expect(out.events("currentItemIndexDidChange").map { $0.index } == [4])
    }

    @Test("next at the last item without wrap does not leave the range")
    func nextAtEndNoWrap() throws {
        let out = try simulate("""
        set autoplay false
        set wrap false
        set start_index 4
        at 100 command next
        until 2000
        at 2000 probe
        """)
        #expect(out.probe(2000)?.offset == 4, "\(out.text)")
    }

    @Test("goto uses the transition duration and the cubic ease-in-out", arguments: [0.5, 1.0, 0.2])
    func gotoTiming(transition: Double) throws {
        let tr = transition * 1000
        let out = try simulate("""
        set autoplay false
        set transition \(transition)
        images 9
        at 100 command goto 2
        at \(fmt(100 + tr / 4)) probe
        at \(fmt(100 + tr / 2)) probe
        until \(fmt(100 + tr + 500))
        at \(fmt(100 + tr + 500)) probe
        """, wrappedCount: 9)
        let q = try #require(out.probe(100 + tr / 4))
        #expect(q.offset.isClose(2 * easeInOut(0.25), 1e-6), "\(q)")
        #expect(q.state == "animating")
        #expect(out.probe(100 + tr / 2)?.offset.isClose(1, 1e-6) == true)
        let end = try #require(out.first("didEndScrollingAnimation"))
        #expect(end.t.isClose(100 + tr, 1e-3), "goto should end at \(100 + tr), ended \(end.t)")
        let p = try #require(out.probe(100 + tr + 500))
        #expect(p.offset == 2 && p.index == 2 && p.state == "idle")
        #expect(out.events("currentItemIndexDidChange").map { $0.index } == [1, 2])
    }

    @Test("goto with wrap takes the shortest way round")
    func gotoShortestWay() throws {
        // 0 → 3 of 5: backwards by 2 (midpoint −1 ≡ 4), not forwards by 3.
        let out = try simulate("""
        set autoplay false
        at 100 command goto 3
        at 350 probe
        at 700 probe
        """, wrappedCount: 5)
        #expect(out.probe(350)?.offset.isClose(4, 1e-6) == true, "\(out.text)")
        #expect(out.probe(700)?.offset == 3)
        #expect(out.events("didScroll").allSatisfy { $0.offset! == 0 || $0.offset! >= 3 })
        #expect(out.events("currentItemIndexDidChange").map { $0.index } == [4, 3])
        // 0 → 4: one step back, midpoint 4.5.
        let back = try simulate("set autoplay false\nat 100 command goto 4\nat 350 probe\nat 700 probe\n", wrappedCount: 5)
        #expect(back.probe(350)?.offset.isClose(4.5, 1e-6) == true, "\(back.text)")
        #expect(back.probe(700)?.offset == 4)
        // From 4 → 1 of 5: forwards by 2 through 0, midpoint 0 (5 ≡ 0).
        let fwd = try simulate("set autoplay false\nset start_index 4\nat 100 command goto 1\nat 225 probe\nat 700 probe\n", wrappedCount: 5)
        #expect(fwd.probe(225)?.offset.isClose(4 + 2 * easeInOut(0.25), 1e-6) == true, "\(fwd.text)")
        #expect(fwd.probe(700)?.offset == 1)
    }

    @Test("goto without wrap goes straight")
    func gotoNoWrap() throws {
        let out = try simulate("""
        set autoplay false
        set wrap false
        at 100 command goto 4
        at 350 probe
        at 700 probe
        """)
        #expect(out.probe(350)?.offset.isClose(2, 1e-6) == true, "\(out.text)")
        #expect(out.probe(700)?.offset == 4)
        #expect(out.events("currentItemIndexDidChange").map { $0.index } == [1, 2, 3, 4])
    }

    @Test("goto the current item does not move")
    func gotoCurrent() throws {
        let out = try simulate("set autoplay false\nset start_index 2\nat 100 command goto 2\nat 1000 probe\n")
        #expect(out.probe(1000)?.offset == 2)
        #expect(out.events("didScroll").isEmpty)
        #expect(out.events("currentItemIndexDidChange").isEmpty)
    }
}
