import Testing

/// Two fingers in `simulate` scripts (`down`/`move`/`up` with a finger id)
/// and the zoom's events and probe field, through the public script format.
@Suite("zoom in scripts")
struct ZoomScriptTests {
    @Test("two fingers pinch: didZoom follows them, the probe carries the scale, autoplay waits")
    func pinch() throws {
        let out = try simulate("""
        at 100 down 540 400
        at 110 down 740 400 1
        at 126 move 440 400
        at 126 move 840 400 1
        at 200 probe
        at 210 up 1
        at 220 up
        at 2000 probe
        """)
        // 200 px apart, then 400: twice the scale, 1:1.
        #expect(out.events("didZoom").last?.scale == 2, "\(out.text)")
        #expect(out.probe(200)?.zoom == 2)
        #expect(out.probe(2000)?.zoom == 2)
        #expect(out.probe(2000)?.pausedBy == ["zoom"])
        #expect(out.probe(2000)?.nextMs == nil)
        #expect(out.events("didEndZooming").map(\.scale) == [2])
        #expect(out.first("willBeginDragging") == nil)
        #expect(out.probe(2000)?.offset == 0)
    }

    @Test("a double tap zooms in to 2.5; a single tap selects when the window closes")
    func doubleTap() throws {
        let out = try simulate("""
        set autoplay false
        at 100 down 300 300
        at 140 up
        at 240 down 305 302
        at 280 up
        at 1500 probe
        at 2000 down 640 400
        at 2040 up
        at 3000 probe
        """)
        #expect(out.probe(1500)?.zoom == 2.5, "\(out.text)")
        #expect(out.events("didEndZooming").first?.scale == 2.5)
        // The tap at 2000 waits for a second one until 2340; none comes: select.
        #expect(out.events("didSelectItem").map(\.t) == [2340])
        #expect(out.probe(3000)?.zoom == 2.5)
    }

    @Test("zoom requests as script commands")
    func command() throws {
        let out = try simulate("""
        set autoplay false
        set max_scale 3
        at 100 command zoom 5
        at 1500 probe
        at 1600 command zoom reset
        at 3000 probe
        """)
        #expect(out.probe(1500)?.zoom == 3, "\(out.text)")
        #expect(out.probe(3000)?.zoom == 1)
        #expect(out.events("didEndZooming").map(\.scale) == [3, 1])
    }
}
