import Testing
@testable import CarouselAlbum

@Suite("Natural order of file names")
struct NaturalOrderTests {
    @Test("digit runs compare by value", arguments: [
        (["img10.jpg", "img2.jpg", "img1.jpg", "img100.jpg", "img20.jpg"],
         ["img1.jpg", "img2.jpg", "img10.jpg", "img20.jpg", "img100.jpg"]),
        (["2023-12-1 beach.jpg", "2023-2-10 snow.jpg", "2023-2-9 snow.jpg"],
         ["2023-2-9 snow.jpg", "2023-2-10 snow.jpg", "2023-12-1 beach.jpg"]),
        (["a10b2", "a2b10", "a2b9", "a10b1"], ["a2b9", "a2b10", "a10b1", "a10b2"]),
        // After "x1.", a digit faces a letter: digits first.
        (["x1.jpg", "x1.10.jpg", "x1.5.jpg"], ["x1.5.jpg", "x1.10.jpg", "x1.jpg"]),
        (["img2.jpg", "img.jpg", "img", "img2"], ["img", "img.jpg", "img2", "img2.jpg"]),
    ])
    func numbers(shuffled: [String], expected: [String]) {
        #expect(NaturalOrder.sorted(shuffled) == expected)
        #expect(NaturalOrder.sorted(shuffled.reversed()) == expected)
    }

    @Test("a number facing text compares like the digit it starts with")
    func numberAgainstText() {
        // '.' and ' ' sort before digits, letters after, as in a code-point sort.
        #expect(NaturalOrder.compare("a.jpg", "a1.jpg") == .ascending)
        #expect(NaturalOrder.compare("a 1", "a1") == .ascending)
        #expect(NaturalOrder.compare("a1", "ab") == .ascending)
        #expect(NaturalOrder.compare("9", "a") == .ascending)
        #expect(NaturalOrder.compare("a_1", "a1") == .descending)
    }

    @Test("leading zeros: equal values, fewer zeros first")
    func leadingZeros() {
        #expect(NaturalOrder.sorted(["a01", "a1", "a001", "a2", "a0", "a00", "a010", "a10"])
            == ["a0", "a00", "a1", "a01", "a001", "a2", "a10", "a010"])
        #expect(NaturalOrder.compare("a01", "a1") == .descending)
        #expect(NaturalOrder.compare("a1", "a01") == .ascending)
        // Zero padding counts before case: the first number that differs decides.
        #expect(NaturalOrder.compare("A1", "a01") == .ascending)
        #expect(NaturalOrder.compare("a1b02", "a01b2") == .ascending)
        // Value first, padding only breaks ties.
        #expect(NaturalOrder.compare("a0009", "a10") == .ascending)
    }

    @Test("letters ignore case; exact ties put upper case first")
    func mixedCase() {
        #expect(NaturalOrder.sorted(["banana", "apple", "Cherry", "APPLE", "Apple", "cherry", "Banana"])
            == ["APPLE", "Apple", "apple", "Banana", "banana", "Cherry", "cherry"])
        #expect(NaturalOrder.sorted(["IMG_10.JPG", "img_9.jpg", "Img_9.jpg"]) == ["Img_9.jpg", "img_9.jpg", "IMG_10.JPG"])
        #expect(NaturalOrder.compare("ÉTÉ", "été") == .ascending)
        #expect(NaturalOrder.compare("Фото2", "фото10") == .ascending)
        #expect(NaturalOrder.compare("фото2", "ФОТО10") == .ascending)
    }

    @Test("Unicode: canonical equivalence, other scripts' digits, emoji, combining marks")
    func unicode() {
        let nfc = "caf\u{E9}"
        let nfd = "cafe\u{301}"
        // The same letter however it is encoded, so the numbers decide...
        #expect(NaturalOrder.compare(nfc + "10", nfd + "2") == .descending)
        #expect(NaturalOrder.compare(nfd + "10", nfc + "2") == .descending)
        // ...and two names differing only in encoding are still two, in a fixed order.
        #expect(NaturalOrder.compare(nfc, nfd) == .descending)
        #expect(NaturalOrder.compare(nfd, nfc) == .ascending)
        #expect(NaturalOrder.compare(nfc, nfc) == .equal)
        // Arabic-Indic digits are digits: ٢ (2) before ١٠ (10).
        #expect(NaturalOrder.compare("صورة٢", "صورة١٠") == .ascending)
        // Mixed scripts in one run are one number: 1٠ is ten.
        #expect(NaturalOrder.compare("x1٠", "x9") == .descending)
        // Circled digits are not decimal digits: text, no crash.
        #expect(NaturalOrder.compare("①", "②") == .ascending)
        #expect(NaturalOrder.sorted(["🌄 10.jpg", "🌄 2.jpg", "🌅 1.jpg"]) == ["🌄 2.jpg", "🌄 10.jpg", "🌅 1.jpg"])
        // A digit carrying a combining mark is one character that is not a digit.
        #expect(NaturalOrder.compare("a1\u{301}", "a1") != .equal)
        #expect(NaturalOrder.compare("İstanbul2", "istanbul10") != .equal)
        #expect(NaturalOrder.compare("", "a") == .ascending)
        #expect(NaturalOrder.compare("", "") == .equal)
    }

    @Test("digit runs longer than any integer type")
    func hugeNumbers() {
        let big = "x" + String(repeating: "9", count: 40)
        let bigger = "x1" + String(repeating: "0", count: 40)
        #expect(NaturalOrder.compare(big, bigger) == .ascending)
        #expect(NaturalOrder.compare("x18446744073709551616", "x18446744073709551615") == .descending)
        #expect(NaturalOrder.compare("x9223372036854775808", "x9223372036854775807") == .descending)
        let long = String(repeating: "7", count: 5_000)
        #expect(NaturalOrder.compare(long + "1", long + "2") == .ascending)
        #expect(NaturalOrder.compare("0" + long, long) == .descending)
        #expect(NaturalOrder.compare(String(repeating: "0", count: 3_000), "0") == .descending)
        #expect(NaturalOrder.compare(String(repeating: "0", count: 3_000), "1") == .ascending)
    }

    /// Names that exercise every rule together.
    static let tricky = [
        "a", "A", "a1", "a01", "A01", "a001", "a2", "a10", "a.jpg", "a 1", "a_1", "ab", "aB", "Ab",
        "caf\u{E9}", "cafe\u{301}", "Caf\u{E9}2", "cafe\u{301}10", "x١٠", "x10", "x010", "x9", "",
        "9", "09", "0", "00", "img", "img2", "img10", "img2.jpg", "🌄", "İ", "i\u{307}", "ß", "SS", "ss",
        "x" + String(repeating: "9", count: 30), "x1" + String(repeating: "0", count: 30),
    ]

    @Test("the order is total: antisymmetric, transitive, equal only for identical names")
    func totalOrder() {
        let names = Self.tricky
        let keys = names.map { NaturalSortKey($0) }
        for (i, a) in keys.enumerated() {
            for (j, b) in keys.enumerated() {
                let ab = a.compare(to: b)
                let ba = b.compare(to: a)
                switch ab {
                case .ascending: #expect(ba == .descending, "\(names[i]) vs \(names[j])")
                case .descending: #expect(ba == .ascending, "\(names[i]) vs \(names[j])")
                case .equal: #expect(i == j, "\(names[i]) equals \(names[j])")
                }
            }
        }
        for a in keys {
            for b in keys where a < b {
                for c in keys where b < c {
                    #expect(a < c, "\(a.name) < \(b.name) < \(c.name) but not \(a.name) < \(c.name)")
                }
            }
        }
    }

    @Test("sorting does not depend on the input order")
    func deterministic() {
        // Seeded: the same orders on every run, so a failure replays.
        var generator = SeededGenerator(seed: 0x6E61_7475_7261_6C31)
        let expected = NaturalOrder.sorted(Self.tricky)
        for _ in 0..<20 {
            #expect(NaturalOrder.sorted(Self.tricky.shuffled(using: &generator)) == expected)
        }
        #expect(Self.tricky.sorted(by: NaturalOrder.areInIncreasingOrder) == expected)
    }

    @Test("the fast path for ASCII names orders exactly like the general one")
    func fastPathAgrees() {
        var generator = SeededGenerator(seed: 0x6661_7374_7061_7468)
        let alphabet = Array("aAbB0019 ._-~zZ\r")
        var names = Self.tricky.filter { $0.utf8.allSatisfy { $0 < 0x80 } }
        for _ in 0..<200 {
            let length = Int.random(in: 0...8, using: &generator)
            names.append(String((0..<length).map { _ in alphabet.randomElement(using: &generator)! }))
        }
        let fast = names.map { NaturalSortKey($0) }
        let general = names.map(NaturalSortKey.init(generalPathFor:))
        for i in names.indices {
            for j in names.indices {
                let expected = general[i].compare(to: general[j])
                #expect(fast[i].compare(to: fast[j]) == expected, "\(names[i].debugDescription) vs \(names[j].debugDescription)")
                #expect(fast[i].compare(to: general[j]) == expected, "\(names[i].debugDescription) vs \(names[j].debugDescription)")
            }
        }
    }
}
