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

/// The picture of `carouseld drm-test --window-room`: every pixel of a
/// buffer up to 4096x4096 has its own colour, so a capture of any window
/// tells exactly which window is shown (an offset wrong by one pixel, a
/// pitch wrong by a row shows everywhere). Red is x's low byte, blue y's low
/// byte, green x's and y's next four bits.
public enum WindowPattern {
    /// The colour of buffer pixel (x, y), 0x00RRGGBB.
    public static func color(x: Int, y: Int) -> UInt32 {
        UInt32(x & 0xFF) << 16 | UInt32((x >> 8) & 0xF) << 12 | UInt32((y >> 8) & 0xF) << 8 | UInt32(y & 0xFF)
    }

    /// Fills the whole of `buffer.extent`, row after row (write-only: scanout
    /// memory is often write-combined).
    public static func fill(_ buffer: ScanoutBuffer) {
        let w = buffer.extent.width
        var row = [UInt32](repeating: 0, count: w)
        for y in 0..<buffer.extent.height {
            row.withUnsafeMutableBufferPointer { r in
                for x in 0..<w { r[x] = color(x: x, y: y) }
                (buffer.pixels + y * buffer.stride).copyMemory(from: r.baseAddress!, byteCount: w * 4)
            }
        }
    }
}
