import Testing
import CarouselCore

@Suite struct RotationTests {
    @Test func logicalSizeSwapsForQuarterTurns() {
        #expect(Rotation.none.logicalSize(panelWidth: 1280, panelHeight: 800) == (1280, 800))
        #expect(Rotation.clockwise90.logicalSize(panelWidth: 1280, panelHeight: 800) == (800, 1280))
        #expect(Rotation.upsideDown.logicalSize(panelWidth: 1280, panelHeight: 800) == (1280, 800))
        #expect(Rotation.clockwise270.logicalSize(panelWidth: 1280, panelHeight: 800) == (800, 1280))
    }

    @Test func cornersGoWhereAClockwiseTurnPutsThem() {
        // Panel 4x2; logical 2x4 for quarter turns. Turning clockwise moves the
        // logical top-left corner to the panel's top-right.
        #expect(Rotation.clockwise90.panel(x: 0, y: 0, panelWidth: 4, panelHeight: 2) == (3, 0))
        #expect(Rotation.clockwise90.panel(x: 1, y: 3, panelWidth: 4, panelHeight: 2) == (0, 1))
        #expect(Rotation.clockwise270.panel(x: 0, y: 0, panelWidth: 4, panelHeight: 2) == (0, 1))
        #expect(Rotation.upsideDown.panel(x: 0, y: 0, panelWidth: 4, panelHeight: 2) == (3, 1))
        #expect(Rotation.none.panel(x: 2, y: 1, panelWidth: 4, panelHeight: 2) == (2, 1))
    }

    @Test func touchMapsBackToTheLogicalPixelDrawnThere() {
        // For every logical pixel: the panel pixel it is drawn at, touched at
        // its centre, maps back into that logical pixel.
        for rotation in Rotation.allCases {
            let (w, h) = (6, 4)
            let logical = rotation.logicalSize(panelWidth: w, panelHeight: h)
            for y in 0..<logical.height {
                for x in 0..<logical.width {
                    let p = rotation.panel(x: x, y: y, panelWidth: w, panelHeight: h)
                    let back = rotation.logical(Point(x: Double(p.x) + 0.5, y: Double(p.y) + 0.5),
                                                panelWidth: Double(w), panelHeight: Double(h))
                    #expect(Int(back.x) == x && Int(back.y) == y, "\(rotation) (\(x),\(y))")
                }
            }
        }
    }

    @Test func turnsCombine() {
        #expect(Rotation.clockwise90.combined(with: .clockwise270) == Rotation.none)
        #expect(Rotation.upsideDown.combined(with: .clockwise90) == .clockwise270)
    }

    @Test func theLogicalPixelUndoesThePanelPixelForEveryTurn() {
        for rotation in Rotation.allCases {
            let (w, h) = (5, 3)  // the panel
            let logical = rotation.logicalSize(panelWidth: w, panelHeight: h)
            for y in 0..<logical.height {
                for x in 0..<logical.width {
                    let p = rotation.panel(x: x, y: y, panelWidth: w, panelHeight: h)
                    #expect((0..<w).contains(p.x) && (0..<h).contains(p.y))
                    #expect(rotation.logical(x: p.x, y: p.y, panelWidth: w, panelHeight: h) == (x, y), "\(rotation) at \(x),\(y)")
                }
            }
        }
    }
}
