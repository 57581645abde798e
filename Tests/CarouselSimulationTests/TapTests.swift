// SPEC.md section 2 (geometry) and 3 (tap, long press, touch on a moving carousel).
//
// Geometry: E = item_size × screen (≤ 1.0) or pixels, pitch = E + spacing,
// item i starts at lead + (i − offset) · pitch, lead = (screen − E)/2 (center) or 0 (edge).

import Testing

struct TapCase: CustomStringConvertible, Sendable {
    var settings: String
    var x: Double
    var y: Double = 400
    var expected: Int?
    var description: String { "[\(settings.replacingOccurrences(of: "\n", with: "; "))] tap (\(x), \(y)) → \(expected.map(String.init) ?? "nothing")" }
}

let tapCases: [TapCase] = [
    // Full-size items, default center alignment.
    TapCase(settings: "", x: 640, expected: 0),
    TapCase(settings: "", x: 1, expected: 0),
    TapCase(settings: "", x: 1279, expected: 0),
    TapCase(settings: "set start_index 2", x: 640, expected: 2),
    TapCase(settings: "set start_index 4\nset wrap false", x: 10, expected: 4),
    // item_size 0.5, spacing 40, center: item 0 [320, 960), gap [960, 1000),
    // item 1 [1000, 1640), item −1 [−360, 280), gap [280, 320).
    TapCase(settings: "set item_size 0.5\nset spacing 40", x: 640, expected: 0),
    TapCase(settings: "set item_size 0.5\nset spacing 40", x: 321, expected: 0),
    TapCase(settings: "set item_size 0.5\nset spacing 40", x: 1100, expected: 1),
    TapCase(settings: "set item_size 0.5\nset spacing 40", x: 1270, expected: 1),
    TapCase(settings: "set item_size 0.5\nset spacing 40", x: 100, expected: 4),
    TapCase(settings: "set item_size 0.5\nset spacing 40", x: 270, expected: 4),
    TapCase(settings: "set item_size 0.5\nset spacing 40", x: 300, expected: nil),
    TapCase(settings: "set item_size 0.5\nset spacing 40", x: 980, expected: nil),
    TapCase(settings: "set item_size 0.5\nset spacing 40\nset start_index 3", x: 1100, expected: 4),
    TapCase(settings: "set item_size 0.5\nset spacing 40\nset start_index 4", x: 1100, expected: 0),
    TapCase(settings: "set item_size 0.5\nset spacing 40\nset start_index 4", x: 100, expected: 3),
    TapCase(settings: "set item_size 0.5\nset spacing 40\nimages 7\nset start_index 0", x: 100, expected: 6),
    // Without wrap there is nothing before item 0 or after the last item.
    TapCase(settings: "set item_size 0.5\nset spacing 40\nset wrap false", x: 100, expected: nil),
    TapCase(settings: "set item_size 0.5\nset spacing 40\nset wrap false", x: 1100, expected: 1),
    TapCase(settings: "set item_size 0.5\nset spacing 40\nset wrap false\nset start_index 4", x: 1100, expected: nil),
    TapCase(settings: "set item_size 0.5\nset spacing 40\nset wrap false\nset start_index 4", x: 100, expected: 3),
    // Edge alignment: item 0 [0, 640), gap [640, 680), item 1 [680, 1320).
    TapCase(settings: "set item_size 0.5\nset spacing 40\nset alignment edge", x: 100, expected: 0),
    TapCase(settings: "set item_size 0.5\nset spacing 40\nset alignment edge", x: 660, expected: nil),
    TapCase(settings: "set item_size 0.5\nset spacing 40\nset alignment edge", x: 700, expected: 1),
    TapCase(settings: "set item_size 0.5\nset spacing 40\nset alignment edge\nset start_index 4", x: 700, expected: 0),
    TapCase(settings: "set item_size 0.5\nset spacing 40\nset alignment edge\nset start_index 4\nset wrap false", x: 700, expected: nil),
    // item_size in pixels: 800 px, center: lead 240, item −1 [−560, 240), item 1 [1040, 1840).
    TapCase(settings: "set item_size 800", x: 100, expected: 4),
    TapCase(settings: "set item_size 800", x: 300, expected: 0),
    TapCase(settings: "set item_size 800", x: 1100, expected: 1),
    TapCase(settings: "set item_size 800\nset spacing 100", x: 1060, expected: nil),
    TapCase(settings: "set item_size 800\nset spacing 100", x: 1150, expected: 1),
    // Vertical: the axis is y, screen extent 800. item_size 0.5 → 400 px, lead 200.
    TapCase(settings: "set vertical true\nset item_size 0.5", x: 640, y: 100, expected: 4),
    TapCase(settings: "set vertical true\nset item_size 0.5", x: 10, y: 400, expected: 0),
    TapCase(settings: "set vertical true\nset item_size 0.5", x: 1270, y: 700, expected: 1),
    // Vertical, edge, spacing 40: item 0 [0, 400), gap [400, 440), item 1 [440, 840).
    TapCase(settings: "set vertical true\nset item_size 0.5\nset spacing 40\nset alignment edge", x: 640, y: 100, expected: 0),
    TapCase(settings: "set vertical true\nset item_size 0.5\nset spacing 40\nset alignment edge", x: 640, y: 420, expected: nil),
    TapCase(settings: "set vertical true\nset item_size 0.5\nset spacing 40\nset alignment edge", x: 640, y: 500, expected: 1),
    TapCase(settings: "set vertical true\nset item_size 0.5\nset spacing 40\nset alignment edge\nset start_index 2", x: 640, y: 500, expected: 3),
]

@Suite("tap and long press")
struct TapTests {
    @Test("tap selects the item under the finger", arguments: tapCases)
    func tap(_ c: TapCase) throws {
        let out = try simulate("""
        set autoplay false
        set double_tap false  # these taps select at the lift
        \(c.settings)
        at 100 down \(fmt(c.x)) \(fmt(c.y))
        at 103 move \(fmt(c.x + 3)) \(fmt(c.y - 2))
        at 250 up
        at 300 probe
        """)
        let selected = out.events("didSelectItem")
        if let e = c.expected {
            #expect(selected.map { $0.index } == [e], "\(c): \(out.text)")
            #expect(selected.first?.t == 250)
        } else {
            #expect(selected.isEmpty, "\(c): \(out.text)")
        }
        #expect(out.events("longPress").isEmpty)
        #expect(out.first("willBeginDragging") == nil)
        // A tap does not move the carousel.
        #expect(out.events("didScroll").isEmpty, "\(c)")
    }

    @Test("tap after a drag landed on another page selects that page's item")
    func tapAfterDrag() throws {
        let out = try simulate("""
        set autoplay false
        set double_tap false  # these taps select at the lift
        set item_size 0.5
        set spacing 40
        \(path(from: (1100, 400), to: (500, 400), at: 100, ms: 600))
        at 800 up
        at 3000 probe
        at 3100 down 1100 400
        at 3150 up
        at 3200 down 100 400
        at 3250 up
        """)
        #expect(out.probe(3000)?.offset == 1, "\(out.text)")
        #expect(out.events("didSelectItem").map { $0.index } == [2, 0])
    }

    @Test("tap just inside the 500 ms timeout selects; long press at 500 ms does not")
    func tapTimeout() throws {
        let quick = try simulate("set autoplay false\nset double_tap false\nat 100 down 640 400\nat 590 up\n")
        #expect(quick.events("didSelectItem").map { $0.index } == [0], "\(quick.text)")
        #expect(quick.events("longPress").isEmpty)
    }

    @Test("long press: still at 500 ms gives longPress(index) and no select", arguments: [
        ("", 640.0, 0), ("set item_size 0.5\nset spacing 40", 1100.0, 1), ("set start_index 3", 200.0, 3),
    ])
    func longPress(settings: String, x: Double, index: Int) throws {
        let out = try simulate("""
        set autoplay false
        \(settings)
        at 100 down \(fmt(x)) 400
        at 300 move \(fmt(x + 4)) 404
        at 900 up
        at 1000 probe
        """)
        let lp = out.events("longPress")
        #expect(lp.map { $0.index } == [index], "\(out.text)")
        #expect(lp.first?.t == 600, "long press must fire at exactly down + 500 ms: \(out.text)")
        #expect(out.events("didSelectItem").isEmpty)
        #expect(out.probe(1000)?.offset == Double(index == 1 ? 0 : index))
    }

    @Test("a drag after a long press does not produce a select; a moved finger gets no long press")
    func movedNoLongPress() throws {
        let out = try simulate("""
        set autoplay false
        at 100 down 640 400
        at 200 move 600 400
        at 900 up
        at 2000 probe
        """)
        #expect(out.events("longPress").isEmpty, "\(out.text)")
        #expect(out.events("didSelectItem").isEmpty)
    }

    @Test("touch down mid-autoplay transition stops it; no select; it ends on a page")
    func catchAutoplayTransition() throws {
        // Advance 3000 → 3500; at 3300 the eased offset is 1 − ½(0.8)³ = 0.744.
        let out = try simulate("""
        at 3300 down 640 400
        at 3300 probe
        at 3400 probe
        at 3600 probe
        at 3700 up
        at 6000 probe
        """, wrappedCount: 5)
        let a = try #require(out.probe(3300))
        #expect(a.offset.isClose(easeInOut(0.6), 1e-6), "\(a)")
        #expect(out.probe(3400)?.offset == a.offset, "the carousel moved under the finger")
        #expect(out.probe(3600)?.offset == a.offset, "the transition continued under the finger")
        #expect(a.pausedBy.contains("touch") && a.nextMs == nil)
        #expect(out.lines.filter { $0.event == "didScroll" && $0.t > 3300 && $0.t <= 3700 }.isEmpty)
        #expect(out.events("didSelectItem").isEmpty, "\(out.text)")
        #expect(out.events("longPress").isEmpty, "a touch that caught the carousel is not a tap (nor a long press)")
        let p = try #require(out.probe(6000))
        #expect(p.offset == 1 && p.index == 1 && p.state == "idle", "\(p)")
        // The next advance is resume_delay after the carousel came to rest
        // (the settle's last didScroll, offset exactly 1).
        let rest = try #require(out.lines.last { $0.event == "didScroll" && $0.t > 3700 && $0.t < 6000 })
        #expect(rest.offset == 1)
        #expect(p.nextMs.map { $0.isClose(rest.t + 2000, 1e-3) } == true, "next_ms \(String(describing: p.nextMs)) vs rest \(rest.t)")
    }

    @Test("touch down early in an autoplay transition settles back to the nearest page")
    func catchAutoplayEarly() throws {
        let out = try simulate("""
        at 3150 down 640 400
        at 3150 probe
        at 3250 up
        at 5000 probe
        """)
        #expect(out.probe(3150)?.offset.isClose(easeInOut(0.3), 1e-6) == true)
        #expect(out.probe(5000)?.offset == 0, "\(out.text)")
        #expect(out.events("didSelectItem").isEmpty)
    }
}
