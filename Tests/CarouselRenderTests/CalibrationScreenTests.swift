// The calibration screen: the point to touch is exactly where the target's
// crosshair crosses, the instructions stay clear of the target, and the
// font draws what it is asked to (different text, different pixels).

import CarouselCore
import CarouselRender
import Testing

@Suite("The calibration screen")
struct CalibrationScreenTests {
    func inked(_ frame: Frame, x0: Int, y0: Int, x1: Int, y1: Int) -> Int {
        var n = 0
        for y in max(0, y0)..<min(frame.height, y1) {
            for x in max(0, x0)..<min(frame.width, x1) where frame.pixel(x: x, y: y) != CalibrationScreen.background { n += 1 }
        }
        return n
    }

    @Test("the crosshair crosses at the target; text only in the other half", arguments: [(160.0, 100.0), (1120.0, 700.0), (640.0, 400.0)])
    func target(x: Double, y: Double) {
        let frame = Frame(width: 1280, height: 800)
        CalibrationScreen.draw(into: frame, target: Point(x: x, y: y), lines: ["Touch the centre of the cross", "1 of 6"])
        let cx = Int(x), cy = Int(y)
        #expect(frame.pixel(x: cx, y: cy) == CalibrationScreen.ink)
        // The two arms, both ways from the centre, and nothing in the quadrants between them.
        for d in [12, 30] {
            #expect(frame.pixel(x: cx + d, y: cy) == CalibrationScreen.ink || frame.pixel(x: cx + d, y: cy) == CalibrationScreen.accent)
            #expect(frame.pixel(x: cx - d, y: cy) != CalibrationScreen.background)
            #expect(frame.pixel(x: cx, y: cy + d) != CalibrationScreen.background)
            #expect(frame.pixel(x: cx, y: cy - d) != CalibrationScreen.background)
            #expect(frame.pixel(x: cx + d / 2, y: cy + d / 2) == CalibrationScreen.background)
        }
        // The text: ink in a band away from the target, none in the target's band.
        let textTop = y < 400 ? 460 : 140, textBottom = textTop + 200
        #expect(inked(frame, x0: 200, y0: textTop, x1: 1080, y1: textBottom) > 500)
        #expect(inked(frame, x0: 0, y0: Int(y) - 60, x1: 1280, y1: Int(y) + 60) < 2000)
    }

    @Test("different text draws different pixels; unknown characters still draw")
    func text() {
        func pixels(_ text: String) -> [UInt32] {
            let frame = Frame(width: 200, height: 40, color: 0xFF00_0000)
            BitmapFont.draw(text, into: frame, x: 2, y: 2, scale: 2, color: 0xFFFF_FFFF)
            return (0..<40).flatMap { y in (0..<200).map { frame.pixel(x: $0, y: y) } }
        }
        #expect(pixels("CHECK") != pixels("CHECX"))
        #expect(pixels("check") == pixels("CHECK"))
        #expect(pixels("~").contains(0xFFFF_FFFF))
        #expect(BitmapFont.width(of: "AB") == 11)
    }
}
