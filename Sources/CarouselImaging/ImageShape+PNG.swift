extension ImageShape {
    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// IHDR, the first chunk (libpng passes unknown ancillary chunks before
    /// it), and the orientation of `ExifReader.pngExif`'s eXIf chunk.
    static func png(_ r: inout HeaderReader) -> PixelSize? {
        var i = 8
        var stored: PixelSize?
        while stored == nil {
            guard let length = r.u32(i, bigEndian: true), length <= 0x7FFF_FFFF else { return nil }
            if r.matches("IHDR", at: i + 4) {
                guard length >= 8, let w = r.u32(i + 8, bigEndian: true), let h = r.u32(i + 12, bigEndian: true),
                      w <= 0x7FFF_FFFF, h <= 0x7FFF_FFFF, let width = Int(exactly: w), let height = Int(exactly: h)
                else { return nil }
                stored = PixelSize(width: width, height: height)
            } else if r.matches("IDAT", at: i + 4) || r.matches("IEND", at: i + 4) {
                return nil
            } else {
                // Checked first: Int is 32 bits on ARMv7 boards.
                guard Int(length) <= r.size - i - 12 else { return nil }
                i += 12 + Int(length)
            }
        }
        guard let stored, let orientation = pngOrientation(&r) else { return nil }
        return orientation.uprightSize(of: stored)
    }

    /// `ExifReader.pngExif`'s walk. A PNG's picture data usually comes in
    /// many 8 KiB IDAT chunks, too many to walk by reads: when the walk
    /// reaches them and the file goes on past the head, an eXIf written
    /// after the picture data (as the PNG specification allows) is looked
    /// for in the last 64 KiB instead, as a chunk whose CRC holds: one read.
    static func pngOrientation(_ r: inout HeaderReader) -> ExifOrientation? {
        var i = 8
        while let length32 = r.u32(i, bigEndian: true) {
            guard length32 <= 0x7FFF_FFFF, Int(length32) <= r.size - i - 8 else { return .identity }
            let length = Int(length32)
            if r.matches("eXIf", at: i + 4) {
                guard length <= maxBlockBytes, let chunk = r.read(i, 8 + length) else { return nil }
                return orientation(of: pngSignature + chunk, .png)
            }
            if r.matches("IEND", at: i + 4) { return .identity }
            if r.size > r.head.count, r.matches("IDAT", at: i + 4) { return tailPNGOrientation(&r) }
            i += 12 + length
        }
        return r.exhausted ? tailPNGOrientation(&r) : .identity
    }

    private static func tailPNGOrientation(_ r: inout HeaderReader) -> ExifOrientation? {
        let start = max(0, r.size - headBytes)
        guard let tail = r.readBeyondCaps(start, r.size - start) else { return nil }
        var p = 4
        while p + 8 <= tail.count {
            defer { p += 1 }
            guard tail[p] == 0x65, tail[p + 1] == 0x58, tail[p + 2] == 0x49, tail[p + 3] == 0x66 else { continue }  // "eXIf"
            let length32 = UInt32(tail[p - 4]) << 24 | UInt32(tail[p - 3]) << 16 | UInt32(tail[p - 2]) << 8 | UInt32(tail[p - 1])
            guard length32 <= UInt32(tail.count - p - 8) else { continue }
            let length = Int(length32)
            let end = p + 4 + length
            let stored = UInt32(tail[end]) << 24 | UInt32(tail[end + 1]) << 16 | UInt32(tail[end + 2]) << 8 | UInt32(tail[end + 3])
            guard crc32(tail[p..<end]) == stored else { continue }
            return orientation(of: pngSignature + tail[(p - 4)..<end], .png)
        }
        return .identity
    }

    /// PNG's CRC-32 (ISO 3309, reflected 0xEDB88320) over type and data.
    static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
