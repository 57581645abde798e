// The picture of `carouseld drm-test`, which the VM tests check pixel for pixel.

/// A colour bar sweeping across four bands (dark red, green, blue, grey from
/// the top): rows are built once per frame and copied, top to bottom, into
/// the buffer (never read back: scanout memory is often write-combined).
public struct BarPainter {
    public static let bands: [UInt32] = [0x0040_0000, 0x0000_4000, 0x0000_0040, 0x0040_4040]
    private var rows: [[UInt32]] = []

    /// The bar's left edge and width in `frame` of a `width`-pixel screen: a
    /// sweep across the screen takes 60 frames.
    public static func bar(frame: Int, width: Int) -> (x: Int, width: Int) {
        (frame * max(1, width / 60) % width, max(8, width / 20))
    }

    /// A fully saturated colour whose hue turns with the frame number.
    public static func barColor(frame: Int) -> UInt32 {
        let hue = (frame * 8) % 1536, f = UInt32(hue % 256)
        switch hue / 256 {
        case 0: return 0xFF0000 | (f << 8)
        case 1: return 0x00FF00 | ((255 - f) << 16)
        case 2: return 0x00FF00 | f
        case 3: return 0x0000FF | ((255 - f) << 8)
        case 4: return 0x0000FF | (f << 16)
        default: return 0xFF0000 | (255 - f)
        }
    }

    public init() {}

    public mutating func draw(frame: Int, into buffer: ScanoutBuffer) {
        let w = buffer.size.width, h = buffer.size.height
        let (x0, bw) = Self.bar(frame: frame, width: w)
        let color = Self.barColor(frame: frame)
        if rows.count != Self.bands.count || rows[0].count != w {
            rows = Self.bands.map { [UInt32](repeating: $0, count: w) }
        }
        for b in 0..<rows.count {
            rows[b].withUnsafeMutableBufferPointer { row in
                for x in 0..<w { row[x] = Self.bands[b] }
                for i in 0..<bw { row[(x0 + i) % w] = color }
            }
        }
        for y in 0..<h {
            let band = y * rows.count / h
            rows[band].withUnsafeBytes { row in
                (buffer.pixels + y * buffer.stride).copyMemory(from: row.baseAddress!, byteCount: w * 4)
            }
        }
    }
}
