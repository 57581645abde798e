// Pictures kept at 3 bytes a pixel (issue 31): packing and widening lose
// nothing, whatever the width (the 4-pixel blocks and the tail), packing in
// place returns the freed pages, and a picture that may be less than
// opaque is never packed.

import CarouselImaging
import Testing

@Suite("rgb888: pictures kept at 3 bytes a pixel")
struct PackedPictureTests {
    /// A picture whose every pixel differs from its neighbours in every channel.
    static func picture(width: Int, height: Int, seed: UInt32 = 1) throws -> DecodedImage {
        try DecodedImage(width: width, height: height, format: .xrgb8888) { raw, stride in
            var s = seed
            for y in 0..<height {
                let row = (raw.baseAddress! + y * stride).assumingMemoryBound(to: UInt32.self)
                for x in 0..<width {
                    s = s &* 1_103_515_245 &+ 12_345
                    row[x] = 0xFF00_0000 | (s >> 8) & 0xFF_FFFF
                }
            }
        }
    }

    @Test("packing in place and widening give back every pixel, for widths 1 to 37")
    func roundTrip() throws {
        for width in 1...37 {
            let wide = try Self.picture(width: width, height: 5, seed: UInt32(width))
            // A second copy, packed (the first stays to compare with).
            let copy = try Self.picture(width: width, height: 5, seed: UInt32(width))
            let packed = copy.packed()
            #expect(packed.format == .rgb888 && packed.size == wide.size && !packed.hasAlpha)
            #expect(packed.stride == (width * 3 + 3) / 4 * 4, "width \(width): stride \(packed.stride)")
            #expect(packed.byteCount == packed.stride * 5)
            var wrong = 0
            for y in 0..<5 {
                for x in 0..<width where packed.pixel(x: x, y: y) != wide.pixel(x: x, y: y) { wrong += 1 }
            }
            #expect(wrong == 0, "width \(width): \(wrong) pixels changed by packing")
            // Widened a row at a time, from any column (the tail loop and the blocks).
            for start in 0..<min(width, 5) {
                let count = width - start
                var out = [UInt32](repeating: 0, count: count)
                packed.withUnsafeBytes { bytes in
                    out.withUnsafeMutableBufferPointer { o in
                        PackedPixels.widen(bytes.baseAddress! + 2 * packed.stride + start * 3, into: o.baseAddress!,
                                           count: count)
                    }
                }
                let want = (start..<width).map { wide.pixel(x: $0, y: 2) }
                #expect(out == want, "width \(width), from column \(start)")
            }
        }
    }

    @Test("the bytes are pixman's r8g8b8: B, G, R on this machine")
    func byteOrder() throws {
        let one = try DecodedImage(width: 1, height: 1, format: .xrgb8888) { raw, _ in
            raw.storeBytes(of: 0xFF12_3456, as: UInt32.self)
        }.packed()
        let bytes = one.withUnsafeBytes { Array($0.prefix(3)) }
        #expect(bytes == [0x56, 0x34, 0x12])
        #expect(one.pixel(x: 0, y: 0) == 0xFF12_3456)
        #expect(PixelFormat.rgb888.pixmanFormatCode == 0x1802_0888 && PixelFormat.rgb888.bytesPerPixel == 3)
    }

    @Test("a 1920x1080 picture packed in place keeps three quarters of its pages")
    func packingReturnsPages() throws {
        let wide = try Self.picture(width: 1920, height: 1080)
        #expect(wide.byteCount == 1920 * 4 * 1080)
        let packed = wide.packed()
        #expect(packed.byteCount == 1920 * 3 * 1080)
        // Every row still reads (the freed tail is past the last one).
        #expect(packed.pixel(x: 1919, y: 1079) >> 24 == 0xFF)
    }

    @Test("a picture that may be less than opaque, or packed already, stays as it is")
    func onlyOpaquePicturesPack() throws {
        let translucent = try DecodedImage(width: 4, height: 2, format: .argb8888Premultiplied) { raw, _ in
            raw.initializeMemory(as: UInt8.self, repeating: 0x40)
        }
        #expect(translucent.packed() === translucent)
        let packed = try Self.picture(width: 6, height: 2).packed()
        #expect(packed.packed() === packed)
    }

    @Test("a JPEG the size asked for decodes straight to 3 bytes a pixel, the same pixels as at 4",
          arguments: ["quadrants.jpg", "gray.jpg", "progressive.jpg", "large.jpg", "orientation-1.jpg"])
    func jpegStraightToPacked(_ name: String) throws {
        let path = Fixtures.path(name)
        let wide = try ImageDecoder.decode(path: path)
        let packed = try ImageDecoder.decode(path: path, packedAt: wide.size)
        #expect(wide.format == .xrgb8888 && packed.format == .rgb888 && packed.size == wide.size)
        var wrong = 0
        for y in 0..<wide.height {
            for x in 0..<wide.width where packed.pixel(x: x, y: y) != wide.pixel(x: x, y: y) { wrong += 1 }
        }
        #expect(wrong == 0, "\(name): \(wrong) pixels differ")
        // Another size: 32-bit, as before.
        let other = try ImageDecoder.decode(path: path, packedAt: PixelSize(width: wide.width + 1, height: wide.height))
        #expect(other.format == .xrgb8888)
    }

    @Test("a CMYK or EXIF-turned JPEG stays at 4 bytes a pixel whatever is asked",
          arguments: ["cmyk.jpg", "orientation-6.jpg"])
    func jpegThatCannotPack(_ name: String) throws {
        let path = Fixtures.path(name)
        let stored = try ImageDecoder.decode(path: path)
        #expect(try ImageDecoder.decode(path: path, packedAt: stored.size).format == .xrgb8888)
        #expect(try ImageDecoder.decode(path: path, packedAt: stored.size.transposed).format == .xrgb8888)
    }
}
