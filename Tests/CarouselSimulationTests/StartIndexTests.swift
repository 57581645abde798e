// SPEC.md section 2: "setting the start index shows exactly that item, for
// every item count, both orientations, both alignments, wrap on and off".

import Testing

@Suite("start index and defaults")
struct StartIndexTests {
    static let counts = [1, 2, 3, 4, 5, 7, 10]

    @Test("probe at t=0 shows exactly start_index", arguments: counts, [false, true])
    func startIndexShowsThatItem(count: Int, vertical: Bool) throws {
        for alignment in ["center", "edge"] {
            for wrap in [true, false] {
                for itemSize in ["1.0", "0.5"] {
                    for i in 0..<count {
                        let script = """
                        images \(count)
                        set vertical \(vertical)
                        set alignment \(alignment)
                        set wrap \(wrap)
                        set item_size \(itemSize)
                        set start_index \(i)
                        at 0 probe
                        at 100 probe
                        """
                        let out = try simulate(script, wrappedCount: wrap ? count : nil)
                        let what = "n=\(count) i=\(i) vertical=\(vertical) \(alignment) wrap=\(wrap) item_size=\(itemSize)"
                        let p = try #require(out.probe(0), "no probe at 0 for \(what)")
                        #expect(p.offset == Double(i), "\(what): \(out.text)")
                        #expect(p.index == i, "\(what)")
                        #expect(p.page == i, "\(what)")
                        #expect(p.state == "idle", "\(what)")
                        let q = try #require(out.probe(100))
                        #expect(q.offset == Double(i), "\(what): the carousel moved on its own")
                        #expect(out.events.isEmpty, "\(what): unexpected events \(out.text)")
                    }
                }
            }
        }
    }

    @Test("autoplay at t=0: running, nothing pausing it, first advance at start_delay = interval")
    func autoplayAtStart() throws {
        for count in [2, 3, 5, 9] {
            let out = try simulate("images \(count)\nat 0 probe\n")
            let p = try #require(out.probe(0))
            #expect(p.running)
            #expect(p.pausedBy.isEmpty)
            #expect(p.nextMs == 3000, "n=\(count): \(out.text)")
        }
        let out = try simulate("set start_delay 1.25\nat 0 probe\n")
        #expect(out.probe(0)?.nextMs == 1250)
        let off = try simulate("set autoplay false\nat 0 probe\n")
        let q = try #require(off.probe(0))
        #expect(!q.running)
        #expect(q.nextMs == nil)
    }

    @Test("defaults: 5 images and 1280x800 when not given")
    func defaults() throws {
        // Index 4 exists, index 5 does not.
        let out = try simulate("set start_index 4\nat 0 probe\n")
        #expect(out.probe(0)?.offset == 4)
        #expect(out.probe(0)?.index == 4)
        let err = scriptError("at 10 command goto 5\n")
        #expect(err?.line == 1)
        // 1280 wide: with item_size 0.5 the item under x=1279 (center
        // alignment, lead 320) is item 1, x=319 is item 4 (wrap).
        let tap = try simulate("""
        set autoplay false
        set double_tap false  # these taps select at the lift
        set item_size 0.5
        at 100 down 1279 400
        at 150 up
        at 200 down 319 799
        at 250 up
        """)
        #expect(tap.events("didSelectItem").map { $0.index } == [1, 4], "\(tap.text)")
        // 800 high: vertically, item_size 0.5 is 400 px, lead 200.
        let v = try simulate("""
        set autoplay false
        set double_tap false  # these taps select at the lift
        set vertical true
        set item_size 0.5
        at 100 down 1279 799
        at 150 up
        at 200 down 0 199
        at 250 up
        """)
        #expect(v.events("didSelectItem").map { $0.index } == [1, 4], "\(v.text)")
    }

    @Test("size is honoured along the scroll axis")
    func sizeLine() throws {
        // 1000 px wide: a 600 px drag is past half a page (500).
        let out = try simulate("""
        size 1000x600
        set autoplay false
        \(path(from: (900, 300), to: (300, 300), at: 100, ms: 600))
        at 800 up
        at 3000 probe
        """)
        #expect(out.probe(3000)?.offset == 1, "\(out.text)")
        // The same drag on the default 1280 px is under half a page.
        let out2 = try simulate("""
        set autoplay false
        \(path(from: (900, 300), to: (300, 300), at: 100, ms: 600))
        at 800 up
        at 3000 probe
        """)
        #expect(out2.probe(3000)?.offset == 0, "\(out2.text)")
    }

    @Test("without until the run ends at the last step; until runs the clock to there")
    func endOfRun() throws {
        let out = try simulate("at 100 probe\n")
        #expect(out.lines.allSatisfy { $0.t <= 100 }, "\(out.text)")
        #expect(out.probes.count == 1)
        let out2 = try simulate("until 3200\n")
        #expect(!out2.lines.isEmpty, "autoplay should start at 3000")
        #expect(out2.lines.allSatisfy { $0.t <= 3200 }, "\(out2.text)")
        #expect(out2.first("didScroll").map { $0.t > 3000 && $0.t <= 3000 + 1000.0 / 60 + 1e-3 } == true)
        #expect(out2.first("didEndScrollingAnimation") == nil)
        let out3 = try simulate("at 3600 probe\n")
        #expect(out3.first("didEndScrollingAnimation")?.t.isClose(3500, 1e-3) == true, "\(out3.text)")
        #expect(out3.probe(3600)?.offset == 1)
    }
}
