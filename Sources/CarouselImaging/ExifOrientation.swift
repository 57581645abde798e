/// The EXIF Orientation tag (0x0112): how the stored pixels must be turned to
/// be upright. Rotations are clockwise, applied to the stored image.
///
/// Cameras store the sensor's rows as they come and record how the camera was
/// held; phones write 6 for a portrait photo. Values 2, 4, 5 and 7 are mirror
/// images (front cameras, scanners) and are rarer but must work too.
public enum ExifOrientation: Int, Sendable, CaseIterable {
    /// 1: stored upright ("top-left").
    case identity = 1
    /// 2: mirrored left to right.
    case mirrorHorizontal = 2
    /// 3: upside down.
    case rotate180 = 3
    /// 4: mirrored top to bottom.
    case mirrorVertical = 4
    /// 5: mirrored across the top-left to bottom-right diagonal (row 0 is the left column).
    case transpose = 5
    /// 6: turn 90 degrees clockwise (row 0 is the right column): a phone held upright.
    case rotate90 = 6
    /// 7: mirrored across the top-right to bottom-left diagonal.
    case transverse = 7
    /// 8: turn 270 degrees clockwise (row 0 is the left column).
    case rotate270 = 8

    /// Width and height trade places (5 to 8).
    public var swapsAxes: Bool { rawValue >= 5 }

    /// The size of the upright image for stored pixels of `size`.
    public func uprightSize(of size: PixelSize) -> PixelSize { swapsAxes ? size.transposed : size }

    /// Where the stored pixel (x, y) of a `width` x `height` image lands upright.
    @inline(__always)
    func destination(x: Int, y: Int, width: Int, height: Int) -> (x: Int, y: Int) {
        switch self {
        case .identity: return (x, y)
        case .mirrorHorizontal: return (width - 1 - x, y)
        case .rotate180: return (width - 1 - x, height - 1 - y)
        case .mirrorVertical: return (x, height - 1 - y)
        case .transpose: return (y, x)
        case .rotate90: return (height - 1 - y, x)
        case .transverse: return (height - 1 - y, width - 1 - x)
        case .rotate270: return (y, width - 1 - x)
        }
    }
}

/// Finds the Orientation tag in a file's EXIF block without trusting any
/// length or offset in it: every read is checked against the buffer, offsets
/// are added with overflow checks (Int is 32 bits on ARMv7 boards), and every
/// loop advances, so malformed data gives `nil`, never a trap or a hang.
/// Public for the EXIF fuzz target, which reads it as a release build does.
public enum ExifReader {
    public static func orientation(in bytes: UnsafeRawBufferPointer, format: ImageFormat) -> ExifOrientation? {
        let view = ByteView(bytes)
        let tiff: Range<Int>?
        switch format {
        case .jpeg: tiff = jpegExif(view)
        case .png: tiff = pngExif(view)
        case .webp: tiff = webpExif(view)
        case .gif:
            // GIF has no EXIF block (an XMP application extension at most).
            tiff = nil
        case .heif, .avif:
            // Never read: HEIF turns its pictures with the irot and imir
            // properties of the image item, which libheif applies while
            // decoding (ISO/IEC 23008-12 6.5.10-12; MIAF forbids readers to
            // use EXIF's Orientation instead). iPhones write both, with the
            // same turn: applying EXIF's too would turn the picture twice.
            tiff = nil
        }
        guard let tiff else { return nil }
        return tiffOrientation(view, tiff)
    }

    /// JPEG: the APP1 segment that starts "Exif\0\0" holds a TIFF structure.
    /// Segments are FF xx followed by a big-endian length that counts itself.
    static func jpegExif(_ v: ByteView) -> Range<Int>? {
        var i = 2  // after SOI
        while let marker0 = v.u8(i), let marker = v.u8(i + 1) {
            guard marker0 == 0xFF else { return nil }  // lost sync: not where a segment starts
            if marker == 0xFF { i += 1; continue }     // fill byte before a marker
            i += 2
            switch marker {
            case 0x01, 0xD0...0xD8: continue           // standalone markers carry no length
            case 0xD9, 0xDA: return nil                // EOI or start of scan: metadata comes before
            default: break
            }
            guard let length = v.u16(i, bigEndian: true), length >= 2,
                  let end = v.offset(i, Int(length)), end <= v.count else { return nil }
            let payload = (i + 2)..<end
            // The payload must itself hold the 6-byte header: a short segment
            // followed by bytes that happen to read "Exif" is not one.
            if marker == 0xE1, payload.count >= 6, v.matches("Exif\0\0", at: payload.lowerBound) {
                return (payload.lowerBound + 6)..<end
            }
            i = end
        }
        return nil
    }

    /// PNG: the eXIf chunk's data is the TIFF structure. Chunks are a
    /// big-endian length, a 4-letter type, the data and a CRC.
    static func pngExif(_ v: ByteView) -> Range<Int>? {
        var i = 8  // after the signature
        while let length32 = v.u32(i, bigEndian: true) {
            guard length32 <= 0x7FFF_FFFF, let dataStart = v.offset(i, 8),
                  let dataEnd = v.offset(dataStart, Int(exactly: length32) ?? -1), dataEnd <= v.count
            else { return nil }
            if v.matches("eXIf", at: i + 4) { return stripExifPrefix(v, dataStart..<dataEnd) }
            if v.matches("IEND", at: i + 4) { return nil }
            guard let next = v.offset(dataEnd, 4) else { return nil }  // CRC
            i = next
        }
        return nil
    }

    /// WebP: a RIFF file; the "EXIF" chunk's data is the TIFF structure.
    /// Chunk sizes are little-endian and odd sizes are padded to even.
    static func webpExif(_ v: ByteView) -> Range<Int>? {
        var i = 12  // after "RIFF", size, "WEBP"
        while let size32 = v.u32(i + 4, bigEndian: false) {
            guard let dataStart = v.offset(i, 8), let size = Int(exactly: size32),
                  let dataEnd = v.offset(dataStart, size), dataEnd <= v.count else { return nil }
            if v.matches("EXIF", at: i) { return stripExifPrefix(v, dataStart..<dataEnd) }
            guard let next = v.offset(dataEnd, size & 1) else { return nil }
            i = next
        }
        return nil
    }

    /// Some writers put JPEG's "Exif\0\0" header in front of PNG and WebP
    /// EXIF data too, which the specifications do not; accept both.
    private static func stripExifPrefix(_ v: ByteView, _ range: Range<Int>) -> Range<Int> {
        if range.count >= 6, v.matches("Exif\0\0", at: range.lowerBound) {
            return (range.lowerBound + 6)..<range.upperBound
        }
        return range
    }

    /// A TIFF header ("II*\0" little-endian or "MM\0*" big-endian), the offset
    /// of IFD0, and IFD0's 12-byte entries: tag, type, count, value-or-offset.
    /// Offsets are relative to the TIFF header.
    static func tiffOrientation(_ whole: ByteView, _ range: Range<Int>) -> ExifOrientation? {
        let v = whole.slice(range)
        let bigEndian: Bool
        if v.matches("MM", at: 0) {
            bigEndian = true
        } else if v.matches("II", at: 0) {
            bigEndian = false
        } else {
            return nil
        }
        guard v.u16(2, bigEndian: bigEndian) == 42,
              let ifd32 = v.u32(4, bigEndian: bigEndian), let ifd = Int(exactly: ifd32),
              let entryCount = v.u16(ifd, bigEndian: bigEndian) else { return nil }
        for index in 0..<Int(entryCount) {
            // The whole entry must be inside the window, which also keeps
            // `entry + 8` below from overflowing.
            guard let entry = v.offset(ifd, 2 + 12 * index), entry <= v.count - 12,
                  let tag = v.u16(entry, bigEndian: bigEndian) else { return nil }
            guard tag == 0x0112 else { continue }
            // The value fits in the entry's 4-byte value field, left-aligned.
            // The standard type is SHORT (3); a few writers use LONG (4).
            let value: Int?
            switch v.u16(entry + 2, bigEndian: bigEndian) {
            case 3: value = v.u16(entry + 8, bigEndian: bigEndian).map(Int.init)
            case 4: value = v.u32(entry + 8, bigEndian: bigEndian).flatMap { Int(exactly: $0) }
            default: value = nil
            }
            return value.flatMap(ExifOrientation.init(rawValue:))
        }
        return nil
    }
}

/// Bounds-checked reads from a window of a byte buffer. Offsets are relative
/// to the window; any read that would leave it gives nil.
struct ByteView {
    private let bytes: UnsafeRawBufferPointer
    private let start: Int
    let count: Int

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        self.start = 0
        self.count = bytes.count
    }

    private init(_ bytes: UnsafeRawBufferPointer, start: Int, count: Int) {
        self.bytes = bytes
        self.start = start
        self.count = count
    }

    /// A window on `range` (clamped to this view).
    func slice(_ range: Range<Int>) -> ByteView {
        let lower = min(max(range.lowerBound, 0), count)
        let upper = min(max(range.upperBound, lower), count)
        return ByteView(bytes, start: start + lower, count: upper - lower)
    }

    /// `a + b` if it neither overflows nor goes negative.
    func offset(_ a: Int, _ b: Int) -> Int? {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow || sum < 0 ? nil : sum
    }

    private func has(_ offset: Int, _ length: Int) -> Bool {
        guard offset >= 0, let end = self.offset(offset, length) else { return false }
        return end <= count
    }

    func u8(_ offset: Int) -> UInt8? {
        has(offset, 1) ? bytes[start + offset] : nil
    }

    func u16(_ offset: Int, bigEndian: Bool) -> UInt16? {
        guard has(offset, 2) else { return nil }
        let a = UInt16(bytes[start + offset]), b = UInt16(bytes[start + offset + 1])
        return bigEndian ? a << 8 | b : b << 8 | a
    }

    func u32(_ offset: Int, bigEndian: Bool) -> UInt32? {
        guard has(offset, 4) else { return nil }
        var value: UInt32 = 0
        for k in 0..<4 {
            let byte = UInt32(bytes[start + offset + (bigEndian ? k : 3 - k)])
            value = value << 8 | byte
        }
        return value
    }

    func matches(_ ascii: StaticString, at offset: Int) -> Bool {
        let length = ascii.utf8CodeUnitCount
        guard has(offset, length) else { return false }
        let p = ascii.utf8Start
        for k in 0..<length where bytes[start + offset + k] != p[k] { return false }
        return true
    }
}
