// The bidirectional algorithm against another implementation's answers:
// the visual orders below are python-bidi's get_display() (UAX #9) for the
// same lines, with its bracket mirroring undone (HarfBuzz mirrors a bracket
// when it shapes a right-to-left run; the order is what is compared here).

import Testing
@testable import CarouselText

@Suite("Bidirectional text (UAX #9 without explicit embeddings)") struct BidiTests {
    /// The line's characters in the order they are drawn from the left.
    func visual(_ line: String) -> String {
        let scalars = Array(line.unicodeScalars)
        let levels = Bidi.levels(scalars.map(Bidi.bidiClass(of:))).levels
        return String(String.UnicodeScalarView(Bidi.visualOrder(levels).map { scalars[$0] }))
    }

    @Test("numbers, spaces and punctuation in right-to-left and mixed lines", arguments: [
        ("رحلة 2024", "2024 ةلحر"),
        ("مساء 23:59", "23:59 ءاسم"),
        ("hello שלום world", "hello םולש world"),
        ("שלום hello world עולם", "םלוע hello world םולש"),
        ("עולם (123) שלום!", "!םולש )123( םלוע"),
        ("تخفيض 50% اليوم", "مويلا %50 ضيفخت"),
        ("מחיר: 1,234.50 ₪", "₪ 1,234.50 :ריחמ"),
        ("abc 12 def", "abc 12 def"),
        ("שלום 1-2 עולם", "םלוע 1-2 םולש"),
        ("مرحبا بالعالم hello 123 שלום", "םולש hello 123 ملاعلاب ابحرم"),
    ])
    func order(line: String, expected: String) {
        #expect(visual(line) == expected)
    }

    @Test("the line's direction is its first strong letter's; none is left to right")
    func paragraph() {
        #expect(Bidi.levels([.en, .ws, .r]).paragraph == 1)
        #expect(Bidi.levels([.on, .l, .r]).paragraph == 0)
        #expect(Bidi.levels([.en, .ws, .on]).paragraph == 0)
        #expect(Bidi.levels([]).levels.isEmpty)
    }

    @Test("marks take their letter's type, spaces at the end of a line the line's level")
    func marksAndTrailingSpaces() {
        // Hebrew shin with a point (U+05C1), then a space at the end.
        let types = "\u{05E9}\u{05C1}a ".unicodeScalars.map(Bidi.bidiClass(of:))
        #expect(types == [.r, .nsm, .l, .ws])
        #expect(Bidi.levels(types).levels == [1, 1, 2, 1])
    }
}
