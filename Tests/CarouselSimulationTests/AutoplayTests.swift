// SPEC.md section 4 (autoplay) and the autoplay rules of sections 2 and 7.

import Testing

@Suite("autoplay")
struct AutoplayTests {
    @Test("first advance at start_delay = interval, eased over transition, then every interval from rest")
    func defaultCycle() throws {
        let out = try simulate("""
        at 0 probe
        at 2999 probe
        at 3125 probe
        at 3250 probe
        at 3500 probe
        at 6499 probe
        at 6750 probe
        until 7100
        at 7100 probe
        """, wrappedCount: 5)
        #expect(out.probe(0)?.nextMs == 3000)
        #expect(out.probe(2999)?.offset == 0)
        let firstScroll = try #require(out.first("didScroll"))
        #expect(firstScroll.t > 3000 && firstScroll.t <= 3000 + frame + 1e-3, "\(firstScroll.raw)")
        let p1 = try #require(out.probe(3125))
        #expect(p1.offset.isClose(easeInOut(0.25), 1e-6), "cubic ease-in-out: \(p1)")
        #expect(p1.state == "animating")
        #expect(p1.nextMs == nil, "next_ms while moving must be null: \(p1)")
        #expect(p1.running && p1.pausedBy.isEmpty)
        #expect(out.probe(3250)?.offset.isClose(0.5, 1e-6) == true)
        let ends = out.events("didEndScrollingAnimation")
        #expect(ends.count == 2, "\(out.discreteNames)")
        #expect(ends.first.map { $0.t.isClose(3500, 1e-3) } == true, "first advance must end at 3500: \(ends.map(\.t))")
        #expect(ends.dropFirst().first.map { $0.t.isClose(7000, 1e-3) } == true, "second advance must end at 7000: \(ends.map(\.t))")
        let p2 = try #require(out.probe(3500))
        #expect(p2.offset == 1 && p2.index == 1 && p2.state == "idle", "\(p2)")
        #expect(p2.nextMs.map { $0.isClose(6500, 1e-3) } == true, "interval counted from rest: \(p2)")
        #expect(out.probe(6499)?.offset == 1)
        #expect(out.probe(6750)?.offset.isClose(1.5, 1e-6) == true)
        let p3 = try #require(out.probe(7100))
        #expect(p3.offset == 2 && p3.index == 2)
        #expect(p3.nextMs.map { $0.isClose(10000, 1e-3) } == true)
        #expect(out.events("currentItemIndexDidChange").map { $0.index } == [1, 2])
        // No drag events for programmatic motion.
        #expect(out.first("willBeginDragging") == nil && out.first("didEndDecelerating") == nil)
    }

    @Test("start_delay, interval and transition are respected", arguments: [
        (1.0, 2.0, 1.0), (0.5, 1.0, 0.25), (2.0, 4.0, 2.0),
    ])
    func timings(startDelay: Double, interval: Double, transition: Double) throws {
        let s = startDelay * 1000, i = interval * 1000, tr = transition * 1000
        let out = try simulate("""
        set start_delay \(startDelay)
        set interval \(interval)
        set transition \(transition)
        at 0 probe
        at \(fmt(s + tr / 2)) probe
        at \(fmt(s + tr)) probe
        until \(fmt(s + tr + i + tr + 1))
        """)
        #expect(out.probe(0)?.nextMs == s)
        #expect(out.probe(s + tr / 2)?.offset.isClose(0.5, 1e-6) == true, "\(out.text.prefix(300))")
        #expect(out.probe(s + tr)?.nextMs.map { $0.isClose(s + tr + i, 1e-3) } == true)
        let ends = out.events("didEndScrollingAnimation").map(\.t)
        #expect(ends.count == 2)
        if ends.count == 2 {
            #expect(ends[0].isClose(s + tr, 1e-3) && ends[1].isClose(s + tr + i + tr, 1e-3), "\(ends)")
        }
    }

    @Test("after a drag the next advance starts exactly resume_delay after didEndDecelerating")
    func resumeAfterDrag() throws {
        let out = try simulate("""
        at 0 probe
        \(path(from: (1100, 400), to: (300, 400), at: 500, ms: 800))
        at 1000 probe
        at 1400 up
        at 1400 probe
        at 3500 probe
        until 7000
        """, wrappedCount: 5)
        let dragging = try #require(out.probe(1000))
        #expect(dragging.pausedBy == ["touch"], "\(dragging)")
        #expect(!dragging.running)
        #expect(dragging.nextMs == nil)
        let settling = try #require(out.probe(1400))
        #expect(!settling.pausedBy.contains("touch"))
        #expect(settling.nextMs == nil, "next_ms must be null while the carousel moves: \(settling)")
        let rest = try #require(out.first("didEndDecelerating"))
        let p = try #require(out.probe(3500))
        #expect(p.offset == 1 && p.state == "idle")
        #expect(p.running && p.pausedBy.isEmpty)
        #expect(p.nextMs.map { $0.isClose(rest.t + 2000, 1e-3) } == true,
                "next_ms \(String(describing: p.nextMs)) must be rest \(rest.t) + 2000")
        // Nothing moves between rest and rest + resume_delay (no stale fire at 3000).
        #expect(!out.lines.contains { $0.event == "didScroll" && $0.t > rest.t && $0.t <= rest.t + 2000 }, "\(out.text)")
        let start = try #require(out.lines.first { $0.event == "didScroll" && $0.t > rest.t })
        #expect(start.t > rest.t + 2000 && start.t <= rest.t + 2000 + frame + 1e-3, "advance started at \(start.t)")
        let end = try #require(out.first("didEndScrollingAnimation"))
        #expect(end.t.isClose(rest.t + 2500, 1e-3), "advance should end at \(rest.t + 2500), ended \(end.t)")
        let change = try #require(out.events("currentItemIndexDidChange").last)
        #expect(change.index == 2)
        #expect(change.t >= rest.t + 2250 - 1e-6 && change.t <= rest.t + 2250 + frame + 1e-3, "\(change.t)")
    }

    @Test("no advance while a finger is down, even past the interval; resume_delay after lift")
    func fingerDownHoldsAutoplay() throws {
        let out = try simulate("""
        at 1000 down 640 400
        at 4000 probe
        at 5000 up
        at 5000 probe
        until 7600
        at 7600 probe
        """)
        let held = try #require(out.probe(4000))
        #expect(held.offset == 0 && held.pausedBy == ["touch"] && held.nextMs == nil && !held.running, "\(held)")
        #expect(!out.lines.contains { $0.event == "didScroll" && $0.t < 7000 }, "\(out.text)")
        let after = try #require(out.probe(5000))
        #expect(after.nextMs.map { $0.isClose(7000, 1e-3) } == true, "\(after)")
        #expect(after.pausedBy.isEmpty)
        #expect(out.first("didEndScrollingAnimation")?.t.isClose(7500, 1e-3) == true, "\(out.discreteNames)")
        #expect(out.probe(7600)?.offset == 1)
    }

    @Test("a slow drag held across the interval does not fire on release")
    func dragAcrossInterval() throws {
        let out = try simulate("""
        \(path(from: (1100, 400), to: (900, 400), at: 2000, ms: 2000))
        at 4100 up
        until 9000
        """)
        let rest = try #require(out.first("didEndDecelerating"))
        #expect(rest.t > 4100)
        let anim = out.lines.filter { $0.event == "didScroll" && $0.t > rest.t }
        #expect(anim.first.map { $0.t > rest.t + 2000 } == true, "\(out.text.suffix(500))")
        #expect(out.first("didEndScrollingAnimation")?.t.isClose(rest.t + 2500, 1e-3) == true)
    }

    @Test("pause and resume commands")
    func pauseResume() throws {
        let out = try simulate("""
        at 1000 command pause
        at 1100 probe
        at 4900 probe
        at 5000 command resume
        at 5000 probe
        until 10000
        """)
        let paused = try #require(out.probe(1100))
        #expect(!paused.running && paused.pausedBy == ["command"] && paused.nextMs == nil, "\(paused)")
        #expect(out.probe(4900)?.offset == 0)
        #expect(!out.lines.contains { $0.event == "didScroll" && $0.t < 5000 })
        let resumed = try #require(out.probe(5000))
        #expect(resumed.running && resumed.pausedBy.isEmpty, "\(resumed)")
        let next = try #require(resumed.nextMs, "next_ms must be scheduled after resume")
        #expect(next >= 5000)
        let start = try #require(out.first("didScroll"))
        #expect(start.t > next && start.t <= next + frame + 1e-3, "advance at \(start.t), next_ms was \(next)")
    }

    @Test("pause sources combine and clear independently")
    func pauseSourcesCombine() throws {
        let out = try simulate("""
        at 500 command pause
        at 1000 down 640 400
        at 1100 probe
        at 1200 up
        at 1300 probe
        at 2000 command pause
        at 2000 down 640 400
        at 2100 command resume
        at 2200 probe
        at 2300 up
        at 2300 probe
        until 5000
        """)
        #expect(Set(out.probe(1100)?.pausedBy ?? []) == ["command", "touch"], "\(out.text)")
        #expect(out.probe(1300)?.pausedBy == ["command"])
        #expect(out.probe(1300)?.nextMs == nil)
        let touchOnly = try #require(out.probe(2200))
        #expect(touchOnly.pausedBy == ["touch"] && touchOnly.nextMs == nil, "\(touchOnly)")
        let free = try #require(out.probe(2300))
        #expect(free.pausedBy.isEmpty && free.running)
        #expect(free.nextMs.map { $0.isClose(4300, 1e-3) } == true, "resume_delay after the finger lifted: \(free)")
    }

    @Test("direction backward: 0 → last item, offsets wrapped and continuous")
    func backward() throws {
        let out = try simulate("""
        set direction backward
        at 3250 probe
        at 3500 probe
        until 7100
        at 7100 probe
        """, wrappedCount: 5)
        #expect(out.probe(3250)?.offset.isClose(4.5, 1e-6) == true, "\(out.text.prefix(400))")
        let p = try #require(out.probe(3500))
        #expect(p.offset == 4 && p.index == 4)
        #expect(out.probe(7100)?.offset == 3)
        #expect(out.events("currentItemIndexDidChange").map { $0.index } == [4, 3])
        let offsets = out.events("didScroll").compactMap(\.offset)
        for (a, b) in zip(offsets, offsets.dropFirst()) {
            #expect(circularDistance(a, b, 5) < 0.1, "jump from \(a) to \(b)")
        }
    }

    @Test("wrap: autoplay goes from the last item to the first seamlessly")
    func forwardWrap() throws {
        let out = try simulate("""
        images 3
        set start_delay 1
        set interval 1
        at 3750 probe
        until 5000
        at 5000 probe
        """, wrappedCount: 3)
        // 1000→1500: 1, 2500→3000: 2, 4000→4500: 0 (via 2.5 shown as 2.5).
        #expect(out.events("currentItemIndexDidChange").map { $0.index } == [1, 2, 0], "\(out.discreteNames)")
        #expect(out.probe(5000)?.offset == 0)
        let offsets = out.events("didScroll").compactMap(\.offset)
        for (a, b) in zip(offsets, offsets.dropFirst()) {
            #expect(circularDistance(a, b, 3) < 0.1, "jump from \(a) to \(b)")
        }
        #expect(out.lines.contains { $0.event == "didScroll" && $0.t > 4000 && $0.offset! > 2.4 && $0.offset! < 3 })
    }

    @Test("no wrap, at_end rewind: animates back to the first item")
    func rewind() throws {
        let out = try simulate("""
        images 3
        set wrap false
        set at_end rewind
        set start_delay 1
        set interval 1
        at 3000 probe
        at 4100 probe
        at 5000 probe
        until 6000
        """)
        #expect(out.probe(3000)?.offset == 2, "\(out.discreteNames)")
        let mid = try #require(out.probe(4100))
        #expect(mid.offset > 0 && mid.offset < 2, "rewind must animate, not jump: \(mid)")
        #expect(out.events("didScroll").allSatisfy { $0.offset! >= 0 && $0.offset! <= 2 })
        let p = try #require(out.probe(5000))
        #expect(p.offset == 0 && p.index == 0, "\(p)")
        #expect(out.events("currentItemIndexDidChange").map { $0.index }.prefix(4) == [1, 2, 1, 0])
    }

    @Test("no wrap, at_end stop: stays on the last item")
    func stopAtEnd() throws {
        let out = try simulate("""
        images 3
        set wrap false
        set at_end stop
        set start_delay 1
        set interval 1
        at 3100 probe
        until 8000
        at 8000 probe
        """)
        #expect(out.probe(3100)?.offset == 2)
        // next_ms is the time of the next automatic advance; at the end with
        // at_end = stop there is none, so nothing may be announced.
        #expect(out.probe(3100)?.nextMs == nil, "no advance is scheduled at the end with stop: \(out.text.suffix(300))")
        #expect(!out.lines.contains { $0.event == "didScroll" && $0.t > 3000 })
        #expect(out.probe(8000)?.offset == 2)
        // The same backwards: at item 0 with stop there is no advance to schedule.
        let back = try simulate("""
        images 3
        set wrap false
        set at_end stop
        set direction backward
        at 0 probe
        until 5000
        at 5000 probe
        """)
        #expect(back.probe(0)?.nextMs == nil, "\(back.text)")
        #expect(back.events.isEmpty)
        #expect(back.probe(5000)?.offset == 0)
    }

    @Test("autoplay false: nothing moves")
    func disabled() throws {
        let out = try simulate("set autoplay false\nuntil 20000\nat 20000 probe\n")
        #expect(out.events.isEmpty)
        let p = try #require(out.probe(20000))
        #expect(p.offset == 0 && !p.running && p.nextMs == nil)
    }

    @Test("images 0: paused by no_images, nothing crashes")
    func noImages() throws {
        let out = try simulate("""
        images 0
        at 0 probe
        at 100 down 640 400
        at 116 move 500 400
        at 132 move 300 400
        at 150 up
        at 200 down 640 400
        at 250 up
        at 300 cancel
        at 400 command next
        at 500 command prev
        at 600 command pause
        at 700 command resume
        at 800 probe
        until 10000
        at 10000 probe
        """)
        let p = try #require(out.probe(0))
        #expect(p.pausedBy.contains("no_images") && !p.running && p.nextMs == nil, "\(p)")
        #expect(out.probe(800)?.pausedBy.contains("no_images") == true)
        #expect(out.events("didSelectItem").isEmpty)
        #expect(out.events("didEndScrollingAnimation").isEmpty)
        #expect(out.probe(10000) != nil)
        #expect(scriptError("images 0\nat 100 command goto 0\n")?.line == 2)
    }

    @Test("autoscroll: constant speed, pauses autoplay, stops while touched")
    func autoscroll() throws {
        let out = try simulate("""
        set autoscroll 0.5
        at 1000 probe
        at 2000 probe
        at 2000 down 640 400
        at 2000 probe
        at 2500 probe
        at 2600 up
        until 8000
        at 8000 probe
        """, wrappedCount: 5)
        let a = try #require(out.probe(1000))
        #expect(a.offset.isClose(0.5, 0.02), "\(a)")
        #expect(a.pausedBy.contains("autoscroll"), "\(a)")
        #expect(out.probe(2000)?.offset.isClose(1.0, 0.02) == true)
        let held = out.probes.filter { $0.t == 2000 }.last!
        #expect(out.probe(2500)?.offset == held.offset, "autoscroll must stop while touched")
        let later = try #require(out.probe(8000))
        #expect(circularDistance(later.offset, held.offset, 5) > 0.1, "autoscroll must continue after the touch")
    }
}
