internal import CTextLoader
import Synchronization

/// Why text cannot be drawn: the text libraries or the font asked for are
/// not installed, or fontconfig or FreeType failed. One log line; the
/// carousel runs on without text.
public struct TextError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// One glyph as shaped: which font, which glyph, and where (pixels, the
/// line's pen origin at 0, x growing to the right, visual order).
public struct ShapedGlyph: Equatable, Sendable {
    /// The family of the font the glyph comes from (the one asked for, or a
    /// fallback fontconfig found for characters it lacks).
    public var family: String
    /// Which of the renderer's fonts (0: the one asked for, then fontconfig's
    /// fallbacks in its order): families repeat across styles, indexes do not.
    public var font: Int
    public var glyph: UInt32
    /// The glyph's name in its font ("uniFE91"), empty if it has none.
    public var name: String
    public var x: Double
    public var y: Double
    public var advance: Double
}

/// Coverage of rendered text, 8 bits a pixel, row after row.
public struct TextMask: Sendable {
    public var width: Int
    public var height: Int
    public var coverage: [UInt8]

    public init(width: Int, height: Int, coverage: [UInt8]) {
        precondition(coverage.count == width * height, "a mask of \(width)x\(height) needs as many values")
        self.width = width
        self.height = height
        self.coverage = coverage
    }

    public subscript(x: Int, y: Int) -> UInt8 { coverage[y * width + x] }
}

/// Shapes text with HarfBuzz and rasterises it with FreeType, in the fonts
/// fontconfig finds for a pattern: the font asked for first, then, for
/// characters it lacks (CJK in DejaVu Sans), the fonts fontconfig sorts after
/// it that have them.
///
/// Bidirectional text follows the Unicode algorithm for a line without
/// explicit embeddings (`Bidi`): the line's direction is that of its first
/// strong letter, numbers keep their reading order inside right-to-left
/// text, spaces and punctuation take the direction of the text around them;
/// the line is cut into runs of one level and one font, laid out in visual
/// order, each shaped by HarfBuzz in its direction with the script it
/// guesses from the run (`hb_buffer_guess_segment_properties`).
///
/// Every call is serialised (FreeType's library is not thread-safe): the
/// decoder thread draws captions, the clock's worker the clock.
///
/// The three libraries are not linked: the first renderer of the process
/// opens them (`TextLibraries`), and every C call goes through their table.
public final class TextRenderer: @unchecked Sendable {
    /// The family the pattern asked for, as fontconfig spells the font it found.
    public let family: String
    public let pixelSize: Int
    private let lock = Mutex(())
    /// fontconfig's, FreeType's and HarfBuzz's functions.
    private let libs: ctext_library
    private var library: FT_Library?
    private var fonts: [Font] = []

    private final class Font {
        let file: String
        let index: Int32
        let family: String
        let charset: OpaquePointer?
        var face: FT_Face?
        var hbFont: OpaquePointer?
        var failed = false
        init(file: String, index: Int32, family: String, charset: OpaquePointer?) {
            self.file = file
            self.index = index
            self.family = family
            self.charset = charset
        }
    }
    private var fontSet: UnsafeMutablePointer<FcFontSet>?

    /// Finds the fonts for `pattern` (a fontconfig pattern such as
    /// "DejaVu Sans" or "Noto Sans:bold") at `pixelSize` pixels.
    /// Throws when the family asked for is not installed (fontconfig would
    /// quietly substitute another), or when the libraries cannot be loaded.
    ///
    /// The corresponding C functions are `FcNameParse`, `FcFontSort`, `FT_Init_FreeType`.
    public init(pattern: String, pixelSize: Int) throws(TextError) {
        self.pixelSize = max(1, min(pixelSize, 1000))
        let libs = try TextLibraries.table()
        self.libs = libs
        guard libs.FcInit() != 0 else { throw TextError("fontconfig could not be initialised (is fontconfig-config installed?)") }
        guard let parsed = libs.FcNameParse(pattern) else { throw TextError("font '\(pattern)' is not a fontconfig pattern") }
        defer { libs.FcPatternDestroy(parsed) }
        var asked: UnsafeMutablePointer<FcChar8>?
        let askedFamily = libs.FcPatternGetString(parsed, "family", 0, &asked) == FcResultMatch
            ? asked.map { String(cString: $0) } : nil
        _ = libs.FcConfigSubstitute(nil, parsed, FcMatchPattern)
        libs.FcDefaultSubstitute(parsed)
        var result = FcResultNoMatch
        guard let set = libs.FcFontSort(nil, parsed, FcTrue, nil, &result), set.pointee.nfont > 0 else {
            throw TextError("font '\(pattern)': fontconfig finds no font at all (install fonts-dejavu-core)")
        }
        fontSet = set
        for i in 0..<Int(min(set.pointee.nfont, 64)) {
            guard let p = set.pointee.fonts[i] else { continue }
            var file: UnsafeMutablePointer<FcChar8>?, family: UnsafeMutablePointer<FcChar8>?
            var index: Int32 = 0
            var charset: OpaquePointer?
            guard libs.FcPatternGetString(p, "file", 0, &file) == FcResultMatch, let file else { continue }
            _ = libs.FcPatternGetInteger(p, "index", 0, &index)
            _ = libs.FcPatternGetCharSet(p, "charset", 0, &charset)
            _ = libs.FcPatternGetString(p, "family", 0, &family)
            fonts.append(Font(file: String(cString: file), index: index, family: family.map { String(cString: $0) } ?? "",
                              charset: charset))
        }
        guard let first = set.pointee.fonts[0], !fonts.isEmpty else {
            libs.FcFontSetDestroy(set)
            fontSet = nil
            throw TextError("font '\(pattern)': fontconfig finds no font file")
        }
        // The best match must be the family asked for: fontconfig substitutes
        // anything for a family it does not have, which would hide a typo.
        var names: [String] = []
        var n: Int32 = 0
        var name: UnsafeMutablePointer<FcChar8>?
        while libs.FcPatternGetString(first, "family", n, &name) == FcResultMatch, let name {
            names.append(String(cString: name))
            n += 1
        }
        if let askedFamily, !names.contains(where: { $0.lowercased() == askedFamily.lowercased() }) {
            libs.FcFontSetDestroy(set)
            fontSet = nil
            throw TextError("font '\(askedFamily)' is not installed (fontconfig would use '\(names.first ?? "?")'; "
                + "fc-list : family lists the installed ones)")
        }
        family = fonts[0].family
        var lib: FT_Library?
        guard libs.FT_Init_FreeType(&lib) == 0, let lib else {
            libs.FcFontSetDestroy(set)
            fontSet = nil
            throw TextError("FreeType could not be initialised")
        }
        library = lib
        guard face(fonts[0]) != nil else {
            throw TextError("font '\(pattern)': FreeType cannot open \(fonts[0].file)")
        }
    }

    deinit {
        for font in fonts {
            if let hb = font.hbFont { libs.hb_font_destroy(hb) }
            if let face = font.face { _ = libs.FT_Done_Face(face) }
        }
        if let library { _ = libs.FT_Done_FreeType(library) }
        if let fontSet { libs.FcFontSetDestroy(fontSet) }
    }

    /// The FreeType face of `font` at the renderer's size, opened on first use.
    private func face(_ font: Font) -> FT_Face? {
        if let face = font.face { return face }
        guard !font.failed, let library else { return nil }
        var face: FT_Face?
        guard libs.FT_New_Face(library, font.file, FT_Long(font.index), &face) == 0, let face else {
            font.failed = true
            return nil
        }
        if libs.FT_Set_Pixel_Sizes(face, 0, FT_UInt(pixelSize)) != 0, face.pointee.num_fixed_sizes > 0 {
            // A bitmap-only font: its first strike.
            _ = libs.FT_Select_Size(face, 0)
        }
        font.face = face
        font.hbFont = libs.hb_ft_font_create_referenced(face)
        return face
    }

    // MARK: - Shaping

    private struct Run {
        var font: Int
        /// Its bidirectional level: odd is right to left.
        var level: Int
        var utf8Start: Int
        var utf8End: Int
    }

    /// Which font draws `s`: the first that has it (the current run's if it
    /// does, so that spaces and digits stay in the run's font).
    private func fontIndex(for s: Unicode.Scalar, preferring current: Int?) -> Int {
        func has(_ i: Int) -> Bool {
            guard let cs = fonts[i].charset else { return i == 0 }
            return libs.FcCharSetHasChar(cs, s.value) != 0
        }
        if let current, has(current) { return current }
        for i in fonts.indices where has(i) && !fonts[i].failed { return i }
        return current ?? 0
    }

    /// The glyphs of one line in visual order, from x = 0.
    public func shape(_ line: String) -> [ShapedGlyph] {
        lock.withLock { _ in shapeLocked(line) }
    }

    private func shapeLocked(_ line: String) -> [ShapedGlyph] {
        let utf8 = Array(line.utf8)
        guard !utf8.isEmpty else { return [] }
        // Each character's font and bidirectional type, in logical order.
        var characters: [(utf8Start: Int, utf8End: Int, font: Int)] = []
        var types: [Bidi.Class] = []
        var offset = 0
        for s in line.unicodeScalars {
            let length = String(s).utf8.count
            defer { offset += length }
            if s.value < 0x20 { continue }
            characters.append((offset, offset + length, fontIndex(for: s, preferring: characters.last?.font)))
            types.append(Bidi.bidiClass(of: s))
        }
        // Runs of one font and one level, in logical order, then in visual order.
        let levels = Bidi.levels(types).levels
        var runs: [Run] = []
        for (c, level) in zip(characters, levels) {
            if var last = runs.last, last.font == c.font, last.level == level, last.utf8End == c.utf8Start {
                last.utf8End = c.utf8End
                runs[runs.count - 1] = last
            } else {
                runs.append(Run(font: c.font, level: level, utf8Start: c.utf8Start, utf8End: c.utf8End))
            }
        }
        runs = Bidi.visualOrder(runs.map(\.level)).map { runs[$0] }
        var glyphs: [ShapedGlyph] = []
        var pen = 0.0
        guard let buffer = libs.hb_buffer_create() else { return [] }
        defer { libs.hb_buffer_destroy(buffer) }
        utf8.withUnsafeBufferPointer { bytes in
            bytes.baseAddress!.withMemoryRebound(to: CChar.self, capacity: bytes.count) { text in
                for run in runs {
                    let font = fonts[run.font]
                    guard let face = face(font), let hbFont = font.hbFont else { continue }
                    libs.hb_buffer_clear_contents(buffer)
                    // The whole line is context (Arabic joining across a run's edge); the run is what is shaped.
                    libs.hb_buffer_add_utf8(buffer, text, Int32(utf8.count), UInt32(run.utf8Start),
                                       Int32(run.utf8End - run.utf8Start))
                    libs.hb_buffer_set_direction(buffer, run.level % 2 == 1 ? HB_DIRECTION_RTL : HB_DIRECTION_LTR)
                    libs.hb_buffer_guess_segment_properties(buffer)
                    libs.hb_shape(hbFont, buffer, nil, 0)
                    var count: UInt32 = 0
                    guard let infos = libs.hb_buffer_get_glyph_infos(buffer, &count),
                          let positions = libs.hb_buffer_get_glyph_positions(buffer, &count) else { continue }
                    for k in 0..<Int(count) {
                        let gid = infos[k].codepoint, p = positions[k]
                        var nameBuffer = [CChar](repeating: 0, count: 64)
                        if FT_HAS_GLYPH_NAMES(face) { _ = libs.FT_Get_Glyph_Name(face, gid, &nameBuffer, 64) }
                        glyphs.append(ShapedGlyph(family: font.family, font: run.font, glyph: gid, name: String(decoding: nameBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
                                                  x: pen + Double(p.x_offset) / 64, y: Double(p.y_offset) / 64,
                                                  advance: Double(p.x_advance) / 64))
                        pen += Double(p.x_advance) / 64
                    }
                }
            }
        }
        return glyphs
    }

    /// FreeType's `FT_HAS_GLYPH_NAMES` macro.
    private func FT_HAS_GLYPH_NAMES(_ face: FT_Face) -> Bool { face.pointee.face_flags & FT_Long(FT_FACE_FLAG_GLYPH_NAMES) != 0 }

    // MARK: - Rasterising

    /// How wide `line` is, pixels.
    public func width(_ line: String) -> Double {
        shape(line).reduce(0) { $0 + $1.advance }
    }

    /// `line` cut to at most `maxWidth` pixels, with "…" where it was cut.
    public func fitted(_ line: String, maxWidth: Double) -> String {
        guard width(line) > maxWidth else { return line }
        var scalars = Array(line.unicodeScalars)
        while !scalars.isEmpty {
            scalars.removeLast(max(1, scalars.count / 10))
            var s = String(String.UnicodeScalarView(scalars))
            while s.last == " " { s.removeLast() }
            if width(s + "…") <= maxWidth { return s + "…" }
        }
        return ""
    }

    /// The lines rendered into one coverage mask, each line aligned by
    /// `alignment` (-1 left, 0 centre, +1 right), lines `lineHeight` apart,
    /// with the ink of every glyph inside. Nil for no visible glyph.
    ///
    /// The corresponding C functions are `FT_Load_Glyph` and `FT_Render_Glyph`.
    public func render(lines: [String], alignment: Int = -1) -> TextMask? {
        lock.withLock { _ in renderLocked(lines: lines, alignment: alignment) }
    }

    private struct Bitmap {
        var x: Int, y: Int, width: Int, height: Int
        var pixels: [UInt8]
    }

    private func renderLocked(lines: [String], alignment: Int) -> TextMask? {
        guard let primary = face(fonts[0]) else { return nil }
        let metrics = primary.pointee.size.pointee.metrics
        let ascender = Int((Double(metrics.ascender) / 64).rounded(.up))
        let descender = Int((Double(-metrics.descender) / 64).rounded(.up))
        let lineHeight = max(Int((Double(metrics.height) / 64).rounded()), ascender + descender)
        var shaped: [[ShapedGlyph]] = []
        for line in lines { shaped.append(shapeLocked(line)) }
        let widths = shaped.map { $0.reduce(0.0) { $0 + $1.advance } }
        let blockWidth = widths.max() ?? 0
        var bitmaps: [Bitmap] = []
        // Line boxes count too: a line of low letters keeps its height.
        var x0 = 0, y0 = 0, x1 = Int(blockWidth.rounded(.up)), y1 = lineHeight * max(lines.count - 1, 0) + ascender + descender
        for (number, line) in shaped.enumerated() {
            let shift: Double = alignment < 0 ? 0 : alignment == 0 ? (blockWidth - widths[number]) / 2 : blockWidth - widths[number]
            let baseline = ascender + number * lineHeight
            for glyph in line {
                guard fonts.indices.contains(glyph.font), let face = face(fonts[glyph.font]) else { continue }
                guard libs.FT_Load_Glyph(face, glyph.glyph, FT_Int32(FT_LOAD_DEFAULT) | FT_Int32(FT_LOAD_NO_BITMAP)) == 0
                        || libs.FT_Load_Glyph(face, glyph.glyph, FT_Int32(FT_LOAD_DEFAULT)) == 0,
                      let slot = face.pointee.glyph,
                      libs.FT_Render_Glyph(slot, FT_RENDER_MODE_NORMAL) == 0 else { continue }
                let b = slot.pointee.bitmap
                guard b.width > 0, b.rows > 0, let buffer = b.buffer, b.pixel_mode == UInt8(FT_PIXEL_MODE_GRAY.rawValue) else { continue }
                let w = Int(b.width), h = Int(b.rows), pitch = Int(b.pitch)
                var pixels = [UInt8](repeating: 0, count: w * h)
                for row in 0..<h {
                    let source = pitch >= 0 ? buffer + row * pitch : buffer + (h - 1 - row) * (-pitch)
                    for col in 0..<w { pixels[row * w + col] = source[col] }
                }
                let gx = Int((shift + glyph.x).rounded()) + Int(slot.pointee.bitmap_left)
                let gy = baseline - Int(glyph.y.rounded()) - Int(slot.pointee.bitmap_top)
                bitmaps.append(Bitmap(x: gx, y: gy, width: w, height: h, pixels: pixels))
                x0 = min(x0, gx); y0 = min(y0, gy); x1 = max(x1, gx + w); y1 = max(y1, gy + h)
            }
        }
        guard !bitmaps.isEmpty, x1 > x0, y1 > y0 else { return nil }
        let width = x1 - x0, height = y1 - y0
        var coverage = [UInt8](repeating: 0, count: width * height)
        for b in bitmaps {
            for row in 0..<b.height {
                let target = (b.y - y0 + row) * width + (b.x - x0)
                for col in 0..<b.width {
                    let v = b.pixels[row * b.width + col]
                    if v > 0 { coverage[target + col] = UInt8(min(255, Int(coverage[target + col]) + Int(v))) }
                }
            }
        }
        return TextMask(width: width, height: height, coverage: coverage)
    }
}

// MARK: - Shared renderers

extension TextRenderer {
    private struct Key: Hashable {
        var pattern: String
        var size: Int
    }
    private static let shared = Mutex<[Key: Result<TextRenderer, TextError>]>([:])

    /// One renderer per font pattern and size for the whole process (opening
    /// fonts costs file reads). Every call for a pattern and size returns the
    /// same result; `isNew` says whether this call made it, so that a
    /// missing font is logged once, not once per picture. Without the text
    /// libraries every pattern and size has the same failure, new only to
    /// the first call of the process: one line, whoever draws first.
    public static func shared(pattern: String, pixelSize: Int) -> (result: Result<TextRenderer, TextError>, isNew: Bool) {
        shared.withLock { cache in
            let key = TextLibraries.isLoaded ? Key(pattern: pattern, size: pixelSize) : Key(pattern: "", size: 0)
            if let found = cache[key] { return (found, false) }
            let made: Result<TextRenderer, TextError>
            do throws(TextError) {
                made = .success(try TextRenderer(pattern: pattern, pixelSize: pixelSize))
            } catch {
                made = .failure(error)
            }
            // Old sizes are let go (a reload changed the size): at most a few kept.
            if cache.count > 8 { cache.removeAll() }
            cache[key] = made
            return (made, true)
        }
    }
}
