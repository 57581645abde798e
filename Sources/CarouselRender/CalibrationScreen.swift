import CarouselCore

/// `carouseld calibrate`'s screen: a dark background, one target (a ring
/// and a crosshair through its centre, the point to touch) and a line of
/// instructions, drawn upright in a logical frame (the caller turns it onto
/// the panel, as the daemon's frames are).
public enum CalibrationScreen {
    public static let background: UInt32 = 0xFF10_1418
    public static let ink: UInt32 = 0xFFF0_F0F0
    public static let accent: UInt32 = 0xFFFF_B020

    /// Draws the screen with the target centred on `target` (logical
    /// pixels) and `lines` of text (upper-cased; the font has capitals,
    /// digits and common punctuation) in the middle of the half of the
    /// screen the target is not in, so the text never hides it.
    public static func draw(into frame: Frame, target: Point, lines: [String]) {
        for y in 0..<frame.height { frame.row(y).update(repeating: background, count: frame.width) }
        let unit = Double(min(frame.width, frame.height))
        let radius = max(8, unit / 30)
        let thickness = max(2, (unit / 300).rounded())
        ring(frame, cx: target.x, cy: target.y, radius: radius, thickness: thickness, color: accent)
        // The crosshair, longer than the ring so the centre is plain.
        rect(frame, target.x - radius * 1.6, target.y - thickness / 2, radius * 3.2, thickness, ink)
        rect(frame, target.x - thickness / 2, target.y - radius * 1.6, thickness, radius * 3.2, ink)
        let scale = max(2, Int(unit / 200))
        let lineHeight = Double((BitmapFont.height + 4) * scale)
        let blockHeight = lineHeight * Double(lines.count)
        let middleY = target.y < Double(frame.height) / 2 ? Double(frame.height) * 0.7 : Double(frame.height) * 0.3
        for (i, line) in lines.enumerated() {
            let width = Double(BitmapFont.width(of: line) * scale)
            let x = ((Double(frame.width) - width) / 2).rounded()
            let y = (middleY - blockHeight / 2 + lineHeight * Double(i)).rounded()
            BitmapFont.draw(line, into: frame, x: Int(x), y: Int(y), scale: scale, color: ink)
        }
    }

    static func rect(_ frame: Frame, _ x: Double, _ y: Double, _ w: Double, _ h: Double, _ color: UInt32) {
        let xa = max(0, Int(x.rounded())), xb = min(frame.width, Int((x + w).rounded()))
        let ya = max(0, Int(y.rounded())), yb = min(frame.height, Int((y + h).rounded()))
        guard xa < xb, ya < yb else { return }
        for row in ya..<yb { (frame.row(row) + xa).update(repeating: color, count: xb - xa) }
    }

    static func ring(_ frame: Frame, cx: Double, cy: Double, radius: Double, thickness: Double, color: UInt32) {
        let outer = radius + thickness / 2, inner = radius - thickness / 2
        let ya = max(0, Int((cy - outer).rounded(.down))), yb = min(frame.height - 1, Int((cy + outer).rounded(.up)))
        let xa = max(0, Int((cx - outer).rounded(.down))), xb = min(frame.width - 1, Int((cx + outer).rounded(.up)))
        guard ya <= yb, xa <= xb else { return }
        for y in ya...yb {
            let row = frame.row(y)
            for x in xa...xb {
                let dx = Double(x) + 0.5 - cx, dy = Double(y) + 0.5 - cy
                let d = (dx * dx + dy * dy).squareRoot()
                if d >= inner && d <= outer { row[x] = color }
            }
        }
    }
}

/// A 5x7 pixel font (the classic HD44780-style glyphs), enough for one line
/// of instructions without a font library. Each glyph is five columns, bit
/// 0 the top row.
public enum BitmapFont {
    public static let height = 7
    static let advance = 6

    static let glyphs: [Character: [UInt8]] = [
        " ": [0x00, 0x00, 0x00, 0x00, 0x00], "!": [0x00, 0x00, 0x5F, 0x00, 0x00],
        "'": [0x00, 0x08, 0x07, 0x03, 0x00], "(": [0x00, 0x1C, 0x22, 0x41, 0x00],
        ")": [0x00, 0x41, 0x22, 0x1C, 0x00], "+": [0x08, 0x08, 0x3E, 0x08, 0x08],
        ",": [0x00, 0x80, 0x70, 0x30, 0x00], "-": [0x08, 0x08, 0x08, 0x08, 0x08],
        ".": [0x00, 0x00, 0x60, 0x60, 0x00], "/": [0x20, 0x10, 0x08, 0x04, 0x02],
        "0": [0x3E, 0x51, 0x49, 0x45, 0x3E], "1": [0x00, 0x42, 0x7F, 0x40, 0x00],
        "2": [0x72, 0x49, 0x49, 0x49, 0x46], "3": [0x21, 0x41, 0x49, 0x4D, 0x33],
        "4": [0x18, 0x14, 0x12, 0x7F, 0x10], "5": [0x27, 0x45, 0x45, 0x45, 0x39],
        "6": [0x3C, 0x4A, 0x49, 0x49, 0x31], "7": [0x41, 0x21, 0x11, 0x09, 0x07],
        "8": [0x36, 0x49, 0x49, 0x49, 0x36], "9": [0x46, 0x49, 0x49, 0x29, 0x1E],
        ":": [0x00, 0x00, 0x14, 0x00, 0x00], "=": [0x14, 0x14, 0x14, 0x14, 0x14],
        "?": [0x02, 0x01, 0x59, 0x09, 0x06],
        "A": [0x7C, 0x12, 0x11, 0x12, 0x7C], "B": [0x7F, 0x49, 0x49, 0x49, 0x36],
        "C": [0x3E, 0x41, 0x41, 0x41, 0x22], "D": [0x7F, 0x41, 0x41, 0x41, 0x3E],
        "E": [0x7F, 0x49, 0x49, 0x49, 0x41], "F": [0x7F, 0x09, 0x09, 0x09, 0x01],
        "G": [0x3E, 0x41, 0x41, 0x51, 0x73], "H": [0x7F, 0x08, 0x08, 0x08, 0x7F],
        "I": [0x00, 0x41, 0x7F, 0x41, 0x00], "J": [0x20, 0x40, 0x41, 0x3F, 0x01],
        "K": [0x7F, 0x08, 0x14, 0x22, 0x41], "L": [0x7F, 0x40, 0x40, 0x40, 0x40],
        "M": [0x7F, 0x02, 0x1C, 0x02, 0x7F], "N": [0x7F, 0x04, 0x08, 0x10, 0x7F],
        "O": [0x3E, 0x41, 0x41, 0x41, 0x3E], "P": [0x7F, 0x09, 0x09, 0x09, 0x06],
        "Q": [0x3E, 0x41, 0x51, 0x21, 0x5E], "R": [0x7F, 0x09, 0x19, 0x29, 0x46],
        "S": [0x26, 0x49, 0x49, 0x49, 0x32], "T": [0x03, 0x01, 0x7F, 0x01, 0x03],
        "U": [0x3F, 0x40, 0x40, 0x40, 0x3F], "V": [0x1F, 0x20, 0x40, 0x20, 0x1F],
        "W": [0x3F, 0x40, 0x38, 0x40, 0x3F], "X": [0x63, 0x14, 0x08, 0x14, 0x63],
        "Y": [0x03, 0x04, 0x78, 0x04, 0x03], "Z": [0x61, 0x59, 0x49, 0x4D, 0x43],
    ]

    /// Width in font pixels of `text` drawn at scale 1.
    public static func width(of text: String) -> Int { max(0, text.count * advance - 1) }

    /// Draws `text` upper-cased with its top-left at (x, y), each font pixel
    /// a `scale × scale` square; characters the font lacks draw as `?`.
    public static func draw(_ text: String, into frame: Frame, x: Int, y: Int, scale: Int, color: UInt32) {
        var left = x
        for character in text.uppercased() {
            let columns = glyphs[character] ?? glyphs["?"]!
            for (c, bits) in columns.enumerated() {
                for r in 0..<height where bits & (1 << r) != 0 {
                    let x0 = left + c * scale, y0 = y + r * scale
                    for yy in max(0, y0)..<min(frame.height, y0 + scale) where x0 < frame.width {
                        let xa = max(0, x0), xb = min(frame.width, x0 + scale)
                        if xa < xb { (frame.row(yy) + xa).update(repeating: color, count: xb - xa) }
                    }
                }
            }
            left += advance * scale
        }
    }
}
