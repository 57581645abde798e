extension ImageShape {
    /// The first frame header (SOFn), reached as libjpeg reaches it: bytes
    /// that are not a marker are skipped (libjpeg warns and goes on),
    /// standalone markers carry no length, every other segment is skipped
    /// by its length. The EXIF orientation is then `ExifReader`'s.
    ///
    /// While the walk meets only well-formed segments it is `ExifReader`'s
    /// walk too, so the EXIF segment is noted on the way and the second
    /// walk, for the orientation, starts after the frame header: a file's
    /// segments past the first 64 KiB are read once.
    static func jpeg(_ r: inout HeaderReader) -> PixelSize? {
        var i = 2
        var stored: PixelSize?
        /// ExifReader would have walked the same segments so far.
        var plain = true
        var exifSegment: Int?
        var afterFrameHeader = 0
        while stored == nil {
            // libjpeg's next_marker: skip to an FF, past fill FFs; FF 00 is data.
            guard var byte = r.byte(i) else { return nil }
            if byte != 0xFF { plain = false }
            while true {
                while byte != 0xFF {
                    i += 1
                    guard let next = r.byte(i) else { return nil }
                    byte = next
                }
                while byte == 0xFF {
                    i += 1
                    guard let next = r.byte(i) else { return nil }
                    byte = next
                }
                i += 1
                if byte != 0 { break }
                plain = false
                guard let next = r.byte(i) else { return nil }
                byte = next
            }
            switch byte {
            case 0xC0...0xCF where byte != 0xC4 && byte != 0xC8 && byte != 0xCC:
                // Length (2), precision (1), height (2), width (2).
                guard let length = r.u16(i, bigEndian: true), let height = r.u16(i + 3, bigEndian: true),
                      let width = r.u16(i + 5, bigEndian: true) else { return nil }
                stored = PixelSize(width: Int(width), height: Int(height))
                afterFrameHeader = i + Int(length)
            case 0x01, 0xD0...0xD7:
                continue
            case 0xD8, 0xD9, 0xDA:
                return nil  // a second SOI, the end, or a scan before any frame header
            case 0xC4, 0xCC, 0xDB, 0xDD:
                // DHT, DAC, DQT, DRI: libjpeg reads these by their contents
                // and refuses a length that disagrees with them.
                guard let length = r.u16(i, bigEndian: true), length >= 2 else { return nil }
                i += Int(length)
            case 0xDC, 0xE0...0xEF, 0xFE:
                // DNL, APPn, COM: skipped by their length, and a bogus one
                // (under 2, counting only itself) as if it were 2.
                guard let length = r.u16(i, bigEndian: true) else { return nil }
                if length < 2 { plain = false }
                if plain, exifSegment == nil, byte == 0xE1, length >= 8, i + Int(length) <= r.size,
                   r.matches("Exif\0\0", at: i + 2) {
                    exifSegment = i
                }
                i += max(2, Int(length))
            default:
                return nil  // a marker libjpeg does not know: it stops there
            }
        }
        let orientation: ExifOrientation?
        if plain, let exifSegment {
            orientation = jpegExifSegment(&r, at: exifSegment)
        } else {
            orientation = jpegOrientation(&r, from: plain ? afterFrameHeader : 2)
        }
        guard let stored, let orientation else { return nil }
        return orientation.uprightSize(of: stored)
    }

    /// The orientation in the APP1 segment whose length field is at `i`,
    /// read by `ExifReader` on its own.
    private static func jpegExifSegment(_ r: inout HeaderReader, at i: Int) -> ExifOrientation? {
        guard let length = r.u16(i, bigEndian: true), let segment = r.read(i - 2, Int(length) + 2) else { return nil }
        return orientation(of: [0xFF, 0xD8] + segment, .jpeg)
    }

    /// `ExifReader.jpegExif`'s walk, over the reader: the first APP1 that
    /// starts "Exif\0\0" before the scan, given to `ExifReader` on its own.
    /// Nil only when the walk hit the read caps.
    static func jpegOrientation(_ r: inout HeaderReader, from start: Int) -> ExifOrientation? {
        var i = start
        while let marker0 = r.byte(i), let marker = r.byte(i + 1) {
            guard marker0 == 0xFF else { return .identity }
            if marker == 0xFF { i += 1; continue }
            i += 2
            switch marker {
            case 0x01, 0xD0...0xD8: continue
            case 0xD9, 0xDA: return .identity
            default: break
            }
            guard let length = r.u16(i, bigEndian: true), length >= 2, i + Int(length) <= r.size else {
                return r.exhausted ? nil : .identity
            }
            if marker == 0xE1, length >= 8, r.matches("Exif\0\0", at: i + 2) {
                return jpegExifSegment(&r, at: i)
            }
            i += Int(length)
        }
        return r.exhausted ? nil : .identity
    }
}
