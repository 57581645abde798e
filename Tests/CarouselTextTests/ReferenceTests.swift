// Rendered text against ImageMagick's `label:` with the same font file at
// the same size (FreeType through ImageMagick's own code: no HarfBuzz, no
// fontconfig fallback). Hinting and positioning differ by a pixel here and
// there, so the ink's bounding box, its total coverage and its column
// profile are compared with a tolerance. Right-to-left text is compared with
// ImageMagick drawing the same letters already in visual order (and, for
// Arabic, already in their joined presentation forms): the independent
// statement of what the shaped line must look like.

import CarouselCore
import CarouselText
import Foundation
import Testing

enum Magick {
    static let convert: String? = {
        for path in ["/usr/bin/convert", "/usr/bin/magick"] where FileManager.default.isExecutableFile(atPath: path) {
            if let (status, text) = try? run(path, ["-version"]), status == 0, String(decoding: text, as: UTF8.self).contains("ImageMagick") {
                return path
            }
        }
        return nil
    }()

    static func run(_ tool: String, _ arguments: [String]) throws -> (Int32, Data) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, data)
    }

    /// White `text` on black in `font` at `pixels` px, as 8-bit gray.
    static func label(_ text: String, font: String, pixels: Int) throws -> TextMask {
        let (status, data) = try run(convert!, ["-background", "black", "-fill", "white", "-font", font,
                                                "-density", "72", "-pointsize", "\(pixels)", "label:\(text)",
                                                "-colorspace", "gray", "-depth", "8", "pgm:-"])
        #expect(status == 0)
        // P5 <w> <h> <max>\n then bytes.
        let bytes = [UInt8](data)
        var fields: [Int] = []
        var i = 2, current = ""
        while fields.count < 3, i < bytes.count {
            let c = Character(UnicodeScalar(bytes[i]))
            if c.isNumber { current.append(c) } else if !current.isEmpty { fields.append(Int(current)!); current = "" }
            i += 1
        }
        let w = fields[0], h = fields[1]
        return TextMask(width: w, height: h, coverage: Array(bytes[i..<(i + w * h)]))
    }
}

struct Ink {
    var x0 = Int.max, y0 = Int.max, x1 = -1, y1 = -1
    var total = 0
    var columns: [Int] = []
    var width: Int { x1 - x0 + 1 }
    var height: Int { y1 - y0 + 1 }

    init(_ m: TextMask) {
        for y in 0..<m.height {
            for x in 0..<m.width where m[x, y] > 96 {
                x0 = min(x0, x); x1 = max(x1, x); y0 = min(y0, y); y1 = max(y1, y)
            }
        }
        for x in x0...x1 {
            var sum = 0
            for y in 0..<m.height { sum += Int(m[x, y]) }
            columns.append(sum)
            total += sum
        }
    }

    /// Pearson correlation of two column profiles over the shorter length.
    func correlation(_ o: Ink) -> Double {
        let n = min(columns.count, o.columns.count)
        let a = columns.prefix(n).map(Double.init), b = o.columns.prefix(n).map(Double.init)
        let ma = a.reduce(0, +) / Double(n), mb = b.reduce(0, +) / Double(n)
        var num = 0.0, da = 0.0, db = 0.0
        for k in 0..<n {
            num += (a[k] - ma) * (b[k] - mb)
            da += (a[k] - ma) * (a[k] - ma)
            db += (b[k] - mb) * (b[k] - mb)
        }
        return num / (da * db).squareRoot()
    }
}

let dejaVu = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
let zenHei = "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc"

@Suite("Rendered text against ImageMagick", .enabled(if: Magick.convert != nil, "ImageMagick is not installed (scripts/setup.sh installs it)"))
struct TextReferenceTests {
    func compare(_ text: String, pattern: String = "DejaVu Sans", reference: String, font: String, size: Int = 32,
                 sourceLocation: SourceLocation = #_sourceLocation) throws {
        let renderer = try TextRenderer(pattern: pattern, pixelSize: size)
        let ours = Ink(try #require(renderer.render(lines: [text])))
        let theirs = Ink(try Magick.label(reference, font: font, pixels: size))
        #expect(abs(ours.width - theirs.width) <= 2 + theirs.width / 25, "ink width \(ours.width) vs \(theirs.width)",
                sourceLocation: sourceLocation)
        #expect(abs(ours.height - theirs.height) <= 2, "ink height \(ours.height) vs \(theirs.height)", sourceLocation: sourceLocation)
        let ratio = Double(ours.total) / Double(theirs.total)
        #expect(abs(ratio - 1) < 0.08, "coverage \(ours.total) vs \(theirs.total)", sourceLocation: sourceLocation)
        #expect(ours.correlation(theirs) > 0.9, "column profile correlation \(ours.correlation(theirs))",
                sourceLocation: sourceLocation)
    }

    @Test func latin() throws {
        try compare("Holiday 2024", reference: "Holiday 2024", font: dejaVu)
    }

    @Test func hebrewMatchesItsLettersInVisualOrder() throws {
        try compare("שלום עולם", reference: "םלוע םולש", font: dejaVu)
    }

    @Test func arabicMatchesItsJoinedFormsInVisualOrder() throws {
        // بيت كبير ("a big house"): the presentation forms HarfBuzz must pick, in screen order.
        try compare("بيت كبير", reference: "\u{FEAE}\u{FEF4}\u{FE92}\u{FEDB} \u{FE96}\u{FEF4}\u{FE91}", font: dejaVu)
    }

    @Test func cjkDrawnWithTheFallbackFontMatchesThatFont() throws {
        try compare("東京の夏", reference: "東京の夏", font: zenHei)
    }

    @Test func joinedArabicIsOneStrokeWithoutGaps() throws {
        // Joined, beh-yeh-teh is one connected stroke: every column of its ink has ink.
        let r = try TextRenderer(pattern: "DejaVu Sans", pixelSize: 40)
        let ink = Ink(try #require(r.render(lines: ["بيت"])))
        #expect(ink.columns.allSatisfy { $0 > 0 })
    }
}
