extension ImageShape {
    /// The first chunk: a lossy key frame's header (VP8), a lossless
    /// header (VP8L), or the extended format's canvas (VP8X), which
    /// libwebp holds equal to a still picture's bitstream and which is
    /// what an animation decodes to. EXIF is `ExifReader.webpExif`'s chunk.
    static func webp(_ r: inout HeaderReader) -> PixelSize? {
        let stored: PixelSize
        var exifFlag = true
        if r.matches("VP8 ", at: 12) {
            guard let size = vp8Size(&r, at: 20) else { return nil }
            stored = size
        } else if r.matches("VP8L", at: 12) {
            guard let size = vp8lSize(&r, at: 20) else { return nil }
            stored = size
        } else if r.matches("VP8X", at: 12) {
            guard let flags = r.byte(20), let w = r.u24(24), let h = r.u24(27) else { return nil }
            exifFlag = flags & 0x08 != 0
            stored = PixelSize(width: w + 1, height: h + 1)
        } else if let size = vp8lSize(&r, at: 12) ?? vp8Size(&r, at: 12) {
            // No chunk header: libwebp takes what follows "WEBP" as a bare
            // bitstream, lossless if it starts like one.
            stored = size
        } else {
            return nil
        }
        guard let orientation = webpOrientation(&r, exifFlag: exifFlag) else { return nil }
        return orientation.uprightSize(of: stored)
    }

    /// A lossy key frame: the frame tag (3 bytes, bit 0 clear on a key
    /// frame), the start code 9D 01 2A, then 14-bit sizes (libwebp's VP8GetInfo).
    private static func vp8Size(_ r: inout HeaderReader, at p: Int) -> PixelSize? {
        guard let tag = r.byte(p), tag & 1 == 0, r.byte(p + 3) == 0x9D, r.byte(p + 4) == 0x01, r.byte(p + 5) == 0x2A,
              let w = r.u16(p + 6, bigEndian: false), let h = r.u16(p + 8, bigEndian: false) else { return nil }
        return PixelSize(width: Int(w & 0x3FFF), height: Int(h & 0x3FFF))
    }

    /// A lossless header: the byte 2F, then 14-bit sizes less one and a
    /// 3-bit version that must be 0 (libwebp's VP8LGetInfo).
    private static func vp8lSize(_ r: inout HeaderReader, at p: Int) -> PixelSize? {
        guard r.byte(p) == 0x2F, let bits = r.u32(p + 1, bigEndian: false), bits >> 29 == 0 else { return nil }
        return PixelSize(width: Int(bits & 0x3FFF) + 1, height: Int(bits >> 14 & 0x3FFF) + 1)
    }

    /// `ExifReader.webpExif`'s walk. Out of reads (an animation of many
    /// frames), a file whose VP8X says it has no EXIF is taken at its word.
    static func webpOrientation(_ r: inout HeaderReader, exifFlag: Bool) -> ExifOrientation? {
        var i = 12
        while let size32 = r.u32(i + 4, bigEndian: false) {
            guard let size = Int(exactly: size32), size <= r.size - i - 8 else { return .identity }
            if r.matches("EXIF", at: i) {
                guard size <= maxBlockBytes, let chunk = r.read(i, 8 + size) else { return nil }
                var riff = Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBP".utf8)
                riff += chunk
                return orientation(of: riff, .webp)
            }
            i += 8 + size + (size & 1)
        }
        if r.exhausted { return exifFlag ? nil : .identity }
        return .identity
    }
}
