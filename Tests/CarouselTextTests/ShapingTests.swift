// Shaping with HarfBuzz in the fonts fontconfig finds, against expectations
// that do not come from HarfBuzz: Unicode's Arabic presentation forms (the
// glyphs DejaVu Sans names after each joined form), the visual order of a
// right-to-left word, and the font that has CJK ideographs.

import CarouselText
import Testing

@Suite("Text shaping") struct ShapingTests {
    func renderer(_ pattern: String = "DejaVu Sans", size: Int = 32) throws -> TextRenderer {
        try TextRenderer(pattern: pattern, pixelSize: size)
    }

    @Test func arabicLettersAreJoinedAndLaidOutFromTheRight() throws {
        // بيت (beh, yeh, teh): joined, beh takes its initial form (U+FE91),
        // yeh its medial (U+FEF4), teh its final (U+FE96); from the left on
        // screen: teh, yeh, beh.
        let glyphs = try renderer().shape("بيت")
        #expect(glyphs.map(\.name) == ["uniFE96", "uniFEF4", "uniFE91"])
        #expect(glyphs.allSatisfy { $0.family == "DejaVu Sans" })
        // Advancing left to right on screen, without overlap.
        #expect(zip(glyphs, glyphs.dropFirst()).allSatisfy { $0.x + $0.advance <= $1.x + 0.01 })
    }

    @Test func hebrewIsLaidOutFromTheRight() throws {
        // שלום: shin first in reading order, so rightmost; final mem leftmost.
        let glyphs = try renderer().shape("שלום")
        #expect(glyphs.map(\.name) == ["uni05DD", "uni05D5", "uni05DC", "uni05E9"])
    }

    @Test func aLatinWordInAnArabicLineKeepsItsOwnOrder() throws {
        // Right-to-left line: "بيت" on the right, "ABC" left of it, in A, B, C order.
        let glyphs = try renderer().shape("بيت ABC")
        let names = glyphs.map(\.name)
        let a = try #require(names.firstIndex(of: "A")), b = try #require(names.firstIndex(of: "B"))
        let beh = try #require(names.firstIndex(of: "uniFE91"))
        #expect(a < b && b < beh)
    }

    @Test func aYearInAnArabicCaptionKeepsItsDigitsInOrder() throws {
        // "رحلة 2024": the year on the left, read 2, 0, 2, 4 from the left;
        // then the space, then the Arabic word from its last letter.
        let names = try renderer().shape("رحلة 2024").map(\.name)
        #expect(Array(names.prefix(5)) == ["two", "zero", "two", "four", "space"], "\(names)")
        // The clock's digits likewise, after an Arabic word.
        let clock = try renderer().shape("مساء 23:59").map(\.name)
        #expect(Array(clock.prefix(6)) == ["two", "three", "colon", "five", "nine", "space"], "\(clock)")
    }

    @Test func aHebrewWordInALatinLineHasOneSpaceOnEachSide() throws {
        let names = try renderer().shape("hello שלום world").map(\.name)
        #expect(names == ["h", "e", "l", "l", "o", "space", "uni05DD", "uni05D5", "uni05DC", "uni05E9", "space",
                          "w", "o", "r", "l", "d"], "\(names)")
    }

    @Test func cjkComesFromAFallbackFontThatHasIt() throws {
        // DejaVu Sans has no ideographs: fontconfig's next font that has them draws them.
        let glyphs = try renderer().shape("東京")
        #expect(glyphs.count == 2)
        #expect(glyphs.allSatisfy { $0.family != "DejaVu Sans" && $0.glyph != 0 }, "\(glyphs)")
        #expect(glyphs.map(\.name) == ["uni6771", "uni4EAC"])
        // Ideographs are a full em wide.
        #expect(glyphs.allSatisfy { abs($0.advance - 32) <= 1 })
        // Latin in the same caption stays in DejaVu Sans where the line starts with it.
        let mixed = try renderer().shape("Tokyo 東京")
        #expect(mixed.first?.family == "DejaVu Sans")
        #expect(mixed.last?.family != "DejaVu Sans")
    }

    @Test func aFamilyThatIsNotInstalledIsOneClearError() {
        #expect(throws: TextError.self) { try TextRenderer(pattern: "No Such Font Family", pixelSize: 20) }
        do {
            _ = try TextRenderer(pattern: "No Such Font Family", pixelSize: 20)
        } catch {
            #expect(error.message.hasPrefix("font 'No Such Font Family' is not installed"))
        }
    }

    @Test func aLineTooWideIsCutWithAnEllipsis() throws {
        let r = try renderer(size: 20)
        let long = String(repeating: "Holiday in the mountains ", count: 10)
        let cut = r.fitted(long, maxWidth: 300)
        #expect(cut.hasSuffix("…"))
        #expect(r.width(cut) <= 300)
        #expect(r.width(cut) > 250, "cut near the limit, not far before it")
        #expect(r.fitted("Short", maxWidth: 300) == "Short")
    }
}
