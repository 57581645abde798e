// Shaping with HarfBuzz in the fonts fontconfig finds, against expectations
// that do not come from HarfBuzz: Unicode's Arabic presentation forms (the
// glyph DejaVu Sans names after each joined form), the visual order of a
// right-to-left word, and the font that has CJK ideographs.

import CarouselText
import Testing

@Suite("Text shaping") struct ShapingTests {
    func renderer(_ pattern: String = "DejaVu Sans", size: Int = 32) throws -> TextRenderer {
        try TextRenderer(pattern: pattern, pixelSize: size)
    }

    @Test func probe() throws {
        let r = try renderer()
        for t in ["بيت", "שלום", "東京 2024", "Hello"] {
            print(t, r.shape(t).map { "\($0.family)/\($0.name)/\($0.glyph)@\($0.x)" })
        }
    }
}
