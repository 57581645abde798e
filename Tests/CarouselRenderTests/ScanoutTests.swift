import Testing
import CarouselCore
import CarouselImaging
import CarouselRender

/// Scanout copies: every logical pixel lands where `Rotation.panel` says.
@Suite struct ScanoutTests {
    @Test(arguments: Rotation.allCases)
    func everyPixelLandsWhereTheRotationSays(rotation: Rotation) {
        let (pw, ph) = (5, 3)
        let size = rotation.logicalSize(panelWidth: pw, panelHeight: ph)
        let frame = Frame(width: size.width, height: size.height)
        for y in 0..<size.height {
            for x in 0..<size.width { frame.row(y)[x] = 0xFF00_0000 | UInt32(y * 16 + x) }
        }
        let panel = Frame(width: pw, height: ph, color: 0)
        Scanout.write(frame, rotation: rotation, to: UnsafeMutableRawPointer(panel.pixels), stride: panel.stride,
                      panelWidth: pw, panelHeight: ph)
        for y in 0..<size.height {
            for x in 0..<size.width {
                let p = rotation.panel(x: x, y: y, panelWidth: pw, panelHeight: ph)
                #expect(panel.pixel(x: p.x, y: p.y) == 0xFF00_0000 | UInt32(y * 16 + x))
            }
        }
    }

    @Test func aFrameWritesAndDecodesBackAsPNG() throws {
        let frame = Frame(width: 3, height: 2, color: 0xFF11_2233)
        frame.row(1)[2] = 0xFFAA_BBCC
        let path = "/tmp/carouseld-scanout-\(UInt32.random(in: 0...UInt32.max)).png"
        try frame.writePNG(to: path)
        let back = try ImageDecoder.decode(path: path)
        #expect(back.width == 3 && back.height == 2)
        #expect(back.pixel(x: 0, y: 0) == 0xFF11_2233)
        #expect(back.pixel(x: 2, y: 1) == 0xFFAA_BBCC)
        #expect(throws: PNGWriteError.self) { try frame.writePNG(to: "/nonexistent-dir/x.png") }
    }
}
