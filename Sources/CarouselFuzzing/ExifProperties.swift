import CarouselImaging

/// The EXIF Orientation reader, and the caption metadata read from the same
/// blocks (`ImageMetadata`). The first input byte picks a mode:
///
/// * 0, 1, 2: the rest is a whole JPEG, PNG or WebP file. The reader gives
///   nil or an orientation (1...8), and the same one every time.
/// * 3: the rest is a TIFF block, put into a JPEG APP1 segment, a PNG eXIf
///   chunk and a WebP EXIF chunk. All three give the orientation that a
///   plain reference reader (written separately, on a Swift array) finds.
enum ExifProperties {
    static func check(_ input: [UInt8]) throws(PropertyFailure) {
        guard let mode = input.first else { return }
        let rest = Array(input.dropFirst())
        switch mode % 4 {
        case 0, 1, 2:
            let format: ImageFormat = [.jpeg, .png, .webp][Int(mode % 4)]
            let first = orientation(rest, format)
            try require(first == orientation(rest, format), "two readings of one \(format) file differ")
            if let first { try require((1...8).contains(first.rawValue), "orientation \(first.rawValue)") }
            // Caption metadata from the same bytes: the same every time, a real day.
            let meta = metadata(rest)
            try require(meta == metadata(rest), "two metadata readings of one \(format) file differ")
            if let d = meta.dateTaken {
                try require((1...12).contains(d.month) && (1...31).contains(d.day), "date taken \(d)")
            }
        default:
            let unprefixed = rest.starts(with: exifHeader) ? Array(rest.dropFirst(6)) : rest
            let want = referenceOrientation(unprefixed)
            if rest.count <= 0xFFFF - 2 - 6 {
                let jpeg = orientation(jpegFile(rest), .jpeg)
                try require(jpeg?.rawValue == referenceOrientation(rest),
                            "JPEG gives \(String(describing: jpeg)), the reference \(String(describing: referenceOrientation(rest)))")
            }
            let png = orientation(pngFile(rest), .png)
            try require(png?.rawValue == want, "PNG gives \(String(describing: png)), the reference \(String(describing: want))")
            let webp = orientation(webpFile(rest), .webp)
            try require(webp?.rawValue == want, "WebP gives \(String(describing: webp)), the reference \(String(describing: want))")
            // The caption's date and description do not depend on the container.
            let pngMeta = metadata(pngFile(rest))
            try require(metadata(webpFile(rest)) == pngMeta, "WebP and PNG give different caption metadata")
            // (JPEG gets its own "Exif\0\0" header: one already in the block is not stripped there.)
            if rest.count <= 0xFFFF - 2 - 6, !rest.starts(with: exifHeader) {
                try require(metadata(jpegFile(rest)) == pngMeta, "JPEG and PNG give different caption metadata")
            }
        }
    }

    static func orientation(_ bytes: [UInt8], _ format: ImageFormat) -> ExifOrientation? {
        bytes.withUnsafeBytes { ExifReader.orientation(in: $0, format: format) }
    }

    static func metadata(_ bytes: [UInt8]) -> ImageMetadata {
        bytes.withUnsafeBytes { ImageMetadata.parse($0) }
    }

    static let exifHeader: [UInt8] = Array("Exif\0\0".utf8)

    static func bigEndian32(_ n: Int) -> [UInt8] { [UInt8(n >> 24 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] }
    static func littleEndian32(_ n: Int) -> [UInt8] { bigEndian32(n).reversed() }

    /// SOI, an APP1 "Exif\0\0" segment, EOI.
    static func jpegFile(_ tiff: [UInt8]) -> [UInt8] {
        let length = 2 + exifHeader.count + tiff.count
        return [0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + exifHeader + tiff + [0xFF, 0xD9]
    }

    /// The signature, an eXIf chunk (CRC not checked by the reader), IEND.
    static func pngFile(_ tiff: [UInt8]) -> [UInt8] {
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + bigEndian32(tiff.count) + Array("eXIf".utf8) + tiff
            + [0, 0, 0, 0] + bigEndian32(0) + Array("IEND".utf8) + [0xAE, 0x42, 0x60, 0x82]
    }

    /// RIFF, an EXIF chunk padded to even length.
    static func webpFile(_ tiff: [UInt8]) -> [UInt8] {
        let chunk = Array("EXIF".utf8) + littleEndian32(tiff.count) + tiff + (tiff.count % 2 == 1 ? [0] : [])
        return Array("RIFF".utf8) + littleEndian32(4 + chunk.count) + Array("WEBP".utf8) + chunk
    }

    /// IFD0's Orientation entry read the simple way: Swift array indexing,
    /// 64-bit sums, a value of type SHORT or LONG in 1...8.
    static func referenceOrientation(_ t: [UInt8]) -> Int? {
        guard t.count >= 8 else { return nil }
        let big: Bool
        switch (t[0], t[1]) {
        case (0x4D, 0x4D): big = true
        case (0x49, 0x49): big = false
        default: return nil
        }
        func u16(_ o: Int) -> Int? {
            guard o >= 0, o + 2 <= t.count else { return nil }
            return big ? Int(t[o]) << 8 | Int(t[o + 1]) : Int(t[o + 1]) << 8 | Int(t[o])
        }
        func u32(_ o: Int) -> Int? {
            guard let a = u16(o), let b = u16(o + 2) else { return nil }
            return big ? a << 16 | b : b << 16 | a
        }
        guard u16(2) == 42, let ifd = u32(4), let count = u16(ifd) else { return nil }
        for k in 0..<count {
            let entry = ifd + 2 + 12 * k
            guard entry + 12 <= t.count else { return nil }
            guard u16(entry) == 0x0112 else { continue }
            let value: Int? = switch u16(entry + 2) {
            case 3: u16(entry + 8)
            case 4: u32(entry + 8)
            default: nil
            }
            return value.flatMap { (1...8).contains($0) ? $0 : nil }
        }
        return nil
    }
}
