import CPixman
import Testing
@testable import CarouselImaging

@Suite("Decoding: pixel values against the colours the fixtures were drawn with")
struct DecodeTests {
    @Test("JPEG decodes to opaque XRGB8888 with the four quadrant colours")
    func jpeg() throws {
        let image = try ImageDecoder.decode(path: Fixtures.path("quadrants.jpg"))
        #expect(image.size == PixelSize(width: 64, height: 32))
        #expect(image.format == .xrgb8888)
        #expect(image.hasAlpha == false)
        #expect(image.stride >= 64 * 4)
        // Quality 95 with 4:4:4 chroma: within a few levels of the drawn colours.
        expectQuadrants(image, Quadrant.red, Quadrant.green, Quadrant.blue, Quadrant.yellow, tolerance: 4)
    }

    @Test("progressive, grayscale and Adobe CMYK JPEGs")
    func jpegVariants() throws {
        let progressive = try ImageDecoder.decode(path: Fixtures.path("progressive.jpg"))
        expectQuadrants(progressive, Quadrant.red, Quadrant.green, Quadrant.blue, Quadrant.yellow, tolerance: 4)

        // ImageMagick's -colorspace Gray gives Rec.709 luma: 54, 182, 18, 237.
        let gray = try ImageDecoder.decode(path: Fixtures.path("gray.jpg"))
        expectQuadrants(gray, rgb(54, 54, 54), rgb(182, 182, 182), rgb(18, 18, 18), rgb(237, 237, 237), tolerance: 3)

        let cmyk = try ImageDecoder.decode(path: Fixtures.path("cmyk.jpg"))
        #expect(cmyk.format == .xrgb8888)
        expectQuadrants(cmyk, Quadrant.red, Quadrant.green, Quadrant.blue, Quadrant.yellow, tolerance: 4)
    }

    @Test("PNG truecolor decodes exactly")
    func png() throws {
        let image = try ImageDecoder.decode(path: Fixtures.path("quadrants.png"))
        #expect(image.size == PixelSize(width: 64, height: 32))
        #expect(image.format == .xrgb8888 && !image.hasAlpha)
        expectQuadrants(image, Quadrant.red, Quadrant.green, Quadrant.blue, Quadrant.yellow)
        // Every pixel, not just the centres: quadrant edges are exact in a lossless format.
        for y in 0..<32 {
            for x in 0..<64 {
                let expected = y < 16 ? (x < 32 ? Quadrant.red : Quadrant.green) : (x < 32 ? Quadrant.blue : Quadrant.yellow)
                if image.pixel(x: x, y: y) != expected {
                    Issue.record("pixel (\(x), \(y)) is \(hex(image.pixel(x: x, y: y)))")
                    return
                }
            }
        }
    }

    @Test("PNG palette, Adam7 interlaced and 16-bit decode to the same pixels", arguments: [
        "palette.png", "interlaced.png", "rgb16.png",
    ])
    func pngFlavours(name: String) throws {
        let image = try ImageDecoder.decode(path: Fixtures.path(name))
        #expect(image.size == PixelSize(width: 64, height: 32))
        #expect(!image.hasAlpha)
        expectQuadrants(image, Quadrant.red, Quadrant.green, Quadrant.blue, Quadrant.yellow)
        // The interlaced file must match the plain one pixel for pixel.
        let plain = try ImageDecoder.decode(path: Fixtures.path("quadrants.png"))
        for y in 0..<32 { for x in 0..<64 where image.pixel(x: x, y: y) != plain.pixel(x: x, y: y) {
            Issue.record("\(name): pixel (\(x), \(y)) differs")
            return
        } }
    }

    @Test("1-bit gray expands to black and white")
    func pngGray1() throws {
        let image = try ImageDecoder.decode(path: Fixtures.path("gray1.png"))
        #expect(image.size == PixelSize(width: 64, height: 32))
        expectQuadrants(image, rgb(0, 0, 0), rgb(255, 255, 255), rgb(0, 0, 0), rgb(255, 255, 255))
    }

    @Test("PNG alpha (8 and 16 bits) is premultiplied for pixman", arguments: ["alpha.png", "alpha16.png"])
    func pngAlpha(name: String) throws {
        let image = try ImageDecoder.decode(path: Fixtures.path(name))
        #expect(image.format == .argb8888Premultiplied)
        #expect(image.hasAlpha)
        // Red at alpha 128 -> 0x80 red; transparent -> 0; opaque blue; yellow at alpha 64.
        expectQuadrants(image, 0x8080_0000, 0x0000_0000, 0xFF00_00FF, 0x4040_4000)
    }

    @Test("gray+alpha PNG and a palette with a tRNS entry")
    func pngGrayAlphaAndTRNS() throws {
        let grayAlpha = try ImageDecoder.decode(path: Fixtures.path("gray-alpha.png"))
        #expect(grayAlpha.hasAlpha)
        // Gray 54 at alpha 128 -> 27; gray 236 at alpha 64 -> 59 (premultiplied).
        expectQuadrants(grayAlpha, 0x801B_1B1B, 0x0000_0000, rgb(18, 18, 18), 0x403B_3B3B)

        let trns = try ImageDecoder.decode(path: Fixtures.path("palette-trns.png"))
        #expect(trns.hasAlpha && trns.format == .argb8888Premultiplied)
        expectQuadrants(trns, Quadrant.red, 0x0000_0000, Quadrant.blue, Quadrant.yellow)
    }

    @Test("WebP lossy, lossless, and lossless with alpha")
    func webp() throws {
        let lossy = try ImageDecoder.decode(path: Fixtures.path("quadrants.webp"))
        #expect(lossy.size == PixelSize(width: 64, height: 32))
        #expect(!lossy.hasAlpha && lossy.format == .xrgb8888)
        expectQuadrants(lossy, Quadrant.red, Quadrant.green, Quadrant.blue, Quadrant.yellow, tolerance: 6)

        let lossless = try ImageDecoder.decode(path: Fixtures.path("quadrants-lossless.webp"))
        expectQuadrants(lossless, Quadrant.red, Quadrant.green, Quadrant.blue, Quadrant.yellow)

        let alpha = try ImageDecoder.decode(path: Fixtures.path("alpha.webp"))
        #expect(alpha.hasAlpha && alpha.format == .argb8888Premultiplied)
        expectQuadrants(alpha, 0x8080_0000, 0x0000_0000, 0xFF00_00FF, 0x4040_4000, tolerance: 1)
    }

    @Test("the format comes from the magic bytes, not the file name")
    func sniffing() throws {
        let scratch = try ScratchDirectory()
        let pngNamedJPG = try scratch.write("really-a-png.jpg", Fixtures.bytes("quadrants.png"))
        let webpNamedPNG = try scratch.write("really-a-webp.png", Fixtures.bytes("quadrants-lossless.webp"))
        let jpegWithoutExtension = try scratch.write("photo", Fixtures.bytes("quadrants.jpg"))
        expectQuadrants(try ImageDecoder.decode(path: pngNamedJPG), Quadrant.red, Quadrant.green, Quadrant.blue, Quadrant.yellow)
        expectQuadrants(try ImageDecoder.decode(path: webpNamedPNG), Quadrant.red, Quadrant.green, Quadrant.blue, Quadrant.yellow)
        expectQuadrants(try ImageDecoder.decode(path: jpegWithoutExtension), Quadrant.red, Quadrant.green,
                        Quadrant.blue, Quadrant.yellow, tolerance: 4)
        #expect(try ImageDecoder.inspect(bytes: Fixtures.bytes("quadrants.png"), name: "x.jpg").format == .png)
    }

    @Test("decoding from bytes in memory")
    func fromBytes() throws {
        let image = try ImageDecoder.decode(bytes: Fixtures.bytes("quadrants.png"), name: "memory.png")
        expectQuadrants(image, Quadrant.red, Quadrant.green, Quadrant.blue, Quadrant.yellow)
    }

    @Test("pixel formats name pixman's and DRM's codes")
    func formatCodes() {
        #expect(PixelFormat.xrgb8888.pixmanFormatCode == PIXMAN_x8r8g8b8.rawValue)
        #expect(PixelFormat.argb8888Premultiplied.pixmanFormatCode == PIXMAN_a8r8g8b8.rawValue)
        // fourcc_code('X', 'R', '2', '4') from drm_fourcc.h
        #expect(PixelFormat.xrgb8888.drmFourCC == 0x3432_5258)
        #expect(PixelFormat.argb8888Premultiplied.drmFourCC == 0x3432_5241)
    }

    @Test("an image built in memory keeps its pixels and size")
    func builtImage() throws {
        let image = try DecodedImage(width: 3, height: 2, format: .xrgb8888) { buffer, stride in
            for y in 0..<2 { for x in 0..<3 {
                buffer.storeBytes(of: UInt32(0xFF00_0000 | (y * 3 + x)), toByteOffset: y * stride + x * 4, as: UInt32.self)
            } }
        }
        #expect(image.pixel(x: 2, y: 1) == 0xFF00_0005)
        #expect(image.byteCount == image.stride * 2)
    }
}
