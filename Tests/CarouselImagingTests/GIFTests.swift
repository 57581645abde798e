import Testing
@testable import CarouselImaging

@Suite("GIF through giflib: the first frame, colour maps, interlacing, transparency")
struct GIFTests {
    /// Every pixel of `image` against `reference`, exactly (GIF is lossless).
    func expectSamePixels(_ image: DecodedImage, _ reference: DecodedImage, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(image.size == reference.size, sourceLocation: sourceLocation)
        guard image.size == reference.size else { return }
        for y in 0..<image.height { for x in 0..<image.width where image.pixel(x: x, y: y) != reference.pixel(x: x, y: y) {
            Issue.record("pixel (\(x), \(y)) is \(hex(image.pixel(x: x, y: y))), expected \(hex(reference.pixel(x: x, y: y)))",
                         sourceLocation: sourceLocation)
            return
        } }
    }

    @Test("plain, interlaced, local colour map and an animation's first frame all show the quadrants", arguments: [
        "quadrants.gif", "interlaced.gif", "local-colormap.gif", "animated.gif",
    ])
    func quadrants(name: String) throws {
        let image = try ImageDecoder.decode(path: Fixtures.path(name))
        #expect(image.format == .xrgb8888 && !image.hasAlpha)
        expectQuadrants(image, Quadrant.red, Quadrant.green, Quadrant.blue, Quadrant.yellow)
        expectSamePixels(image, try ImageDecoder.decode(path: Fixtures.path("quadrants.png")))
    }

    @Test("the fixtures are what their names say")
    func fixtures() throws {
        // The image descriptor's packed byte: 0x40 interlaced, 0x80 local colour map.
        func packed(_ name: String) throws -> UInt8 {
            let bytes = try Fixtures.bytes(name)
            let hasGlobal = bytes[10] & 0x80 != 0
            var i = 13 + (hasGlobal ? 3 << (Int(bytes[10] & 7) + 1) : 0)
            while bytes[i] == 0x21 {  // extensions: label, then sub-blocks
                i += 2
                while bytes[i] != 0 { i += Int(bytes[i]) + 1 }
                i += 1
            }
            #expect(bytes[i] == 0x2C)
            return bytes[i + 9]
        }
        #expect(try packed("interlaced.gif") & 0x40 != 0)
        #expect(try packed("quadrants.gif") & 0x40 == 0)
        #expect(try packed("local-colormap.gif") & 0x80 != 0)
        let animated = try Fixtures.bytes("animated.gif")
        #expect(animated.filter { $0 == 0x2C }.count >= 2)
    }

    @Test("the transparent index is alpha 0, as the same picture as a PNG with tRNS")
    func transparency() throws {
        let image = try ImageDecoder.decode(path: Fixtures.path("transparent.gif"))
        #expect(image.format == .argb8888Premultiplied && image.hasAlpha)
        expectQuadrants(image, Quadrant.red, 0, Quadrant.blue, Quadrant.yellow)
        expectSamePixels(image, try ImageDecoder.decode(path: Fixtures.path("palette-trns.png")))
    }

    @Test("a first frame smaller than the screen is drawn in place; the rest is transparent")
    func partialFrame() throws {
        let image = try ImageDecoder.decode(path: Fixtures.path("partial-frame.gif"))
        #expect(image.size == PixelSize(width: 64, height: 32))
        #expect(image.hasAlpha && image.format == .argb8888Premultiplied)
        expectQuadrants(image, 0, 0, 0, Quadrant.yellow)
        expectPixel(image, 32, 16, Quadrant.yellow)
        expectPixel(image, 31, 16, 0)
        expectPixel(image, 32, 15, 0)
    }

    @Test("the GIF is refused by max_pixels like any format")
    func maxPixels() {
        let error = expectImageError(path: Fixtures.path("quadrants.gif"), maxPixels: 2047)
        #expect(error?.reason == .tooManyPixels(width: 64, height: 32, limit: 2047))
    }

    @Test("a screen of 65535x65535 is refused before any pixel memory")
    func bomb() throws {
        var bytes = try Fixtures.bytes("quadrants.gif")
        bytes[6] = 0xFF; bytes[7] = 0xFF; bytes[8] = 0xFF; bytes[9] = 0xFF
        let scratch = try ScratchDirectory()
        let error = expectImageError(path: try scratch.write("bomb.gif", bytes))
        #expect(error?.reason == .tooManyPixels(width: 65535, height: 65535, limit: ImageDecoder.defaultMaxPixels))
    }
}

@Suite("Animated WebP: the first frame through libwebpdemux")
struct AnimatedWebPTests {
    @Test("an animation shows its first frame (the quadrants, not the blue second frame)")
    func firstFrame() throws {
        let image = try ImageDecoder.decode(path: Fixtures.path("animated.webp"))
        #expect(image.size == PixelSize(width: 64, height: 32))
        expectQuadrants(image, Quadrant.red, Quadrant.green, Quadrant.blue, Quadrant.yellow)
    }

    @Test("a first frame covering the canvas is scaled by libwebp for a smaller box")
    func scaled() throws {
        let image = try ImageDecoder.decode(path: Fixtures.path("animated.webp"),
                                            targetSize: PixelSize(width: 32, height: 16), fit: .cover)
        #expect(image.size == PixelSize(width: 32, height: 16))
        expectQuadrants(image, Quadrant.red, Quadrant.green, Quadrant.blue, Quadrant.yellow, tolerance: 2)
    }

    @Test("a first frame smaller than the canvas is drawn in place on a transparent canvas")
    func partialFrame() throws {
        let image = try ImageDecoder.decode(path: Fixtures.path("partial-frame.webp"),
                                            targetSize: PixelSize(width: 16, height: 8), fit: .cover)
        #expect(image.size == PixelSize(width: 64, height: 32))
        #expect(image.hasAlpha && image.format == .argb8888Premultiplied)
        expectQuadrants(image, 0, 0, 0, Quadrant.yellow)
        expectPixel(image, 32, 16, Quadrant.yellow)
        expectPixel(image, 31, 31, 0)
        expectPixel(image, 63, 15, 0)
    }
}
