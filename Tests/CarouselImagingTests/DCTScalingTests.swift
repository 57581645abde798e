import CarouselCore
import Testing
@testable import CarouselImaging

@Suite("Decoding near a target size: JPEG DCT scaling, WebP's rescaler, PNG's box reduction")
struct DCTScalingTests {
    @Test("the smallest n/8 whose output covers the target", arguments: [
        // (image, minimum, expected n)
        (PixelSize(width: 800, height: 600), PixelSize(width: 100, height: 75), 1),
        (PixelSize(width: 800, height: 600), PixelSize(width: 101, height: 75), 2),
        (PixelSize(width: 800, height: 600), PixelSize(width: 100, height: 76), 2),
        (PixelSize(width: 800, height: 600), PixelSize(width: 400, height: 300), 4),
        (PixelSize(width: 800, height: 600), PixelSize(width: 401, height: 1), 5),
        (PixelSize(width: 800, height: 600), PixelSize(width: 1920, height: 1080), 8),
        (PixelSize(width: 4000, height: 3000), PixelSize(width: 1920, height: 1080), 4),
        (PixelSize(width: 4000, height: 3000), PixelSize(width: 1440, height: 1080), 3),
        // ceil(): 7 * 1/8 rounds up to 1 pixel.
        (PixelSize(width: 7, height: 7), PixelSize(width: 1, height: 1), 1),
    ])
    func scaleChoice(image: PixelSize, minimum: PixelSize, expected: Int) {
        #expect(JPEGDecompressor.scaleEighths(for: image, covering: minimum) == expected)
    }

    @Test("JPEG output sizes for target boxes", arguments: [
        (PixelSize(width: 100, height: 75), FitMode.cover, PixelSize(width: 100, height: 75)),
        (PixelSize(width: 101, height: 75), FitMode.cover, PixelSize(width: 200, height: 150)),
        (PixelSize(width: 150, height: 100), FitMode.cover, PixelSize(width: 200, height: 150)),
        (PixelSize(width: 401, height: 300), FitMode.stretch, PixelSize(width: 500, height: 375)),
        (PixelSize(width: 1920, height: 1080), FitMode.cover, PixelSize(width: 800, height: 600)),
        // contain: a 1000x100 box shows the 4:3 image at 133x100; 2/8 covers that.
        (PixelSize(width: 1000, height: 100), FitMode.contain, PixelSize(width: 200, height: 150)),
        (PixelSize(width: 1000, height: 100), FitMode.cover, PixelSize(width: 800, height: 600)),
        // none draws unscaled, so it needs every pixel.
        (PixelSize(width: 100, height: 75), FitMode.none, PixelSize(width: 800, height: 600)),
    ])
    func jpegOutputSize(target: PixelSize, fit: FitMode, expected: PixelSize) throws {
        let image = try ImageDecoder.decode(path: Fixtures.path("large.jpg"), targetSize: target, fit: fit)
        #expect(image.size == expected)
        expectQuadrants(image, Quadrant.red, Quadrant.green, Quadrant.blue, Quadrant.yellow, tolerance: 6)
    }

    @Test("no target means full resolution")
    func fullResolution() throws {
        #expect(try ImageDecoder.decode(path: Fixtures.path("large.jpg")).size == PixelSize(width: 800, height: 600))
    }

    @Test("a portrait photo (orientation 6) swaps the target before choosing the scale")
    func rotatedTarget() throws {
        // Stored 800x600, upright 600x800. A 75x100 upright target is 100x75
        // stored: 1/8 exactly. Without the swap it would need 2/8 (150x200).
        let image = try ImageDecoder.decode(path: Fixtures.path("large-rotated.jpg"),
                                            targetSize: PixelSize(width: 75, height: 100))
        #expect(image.size == PixelSize(width: 75, height: 100))
        expectQuadrants(image, Quadrant.blue, Quadrant.red, Quadrant.yellow, Quadrant.green, tolerance: 6)

        let wide = try ImageDecoder.decode(path: Fixtures.path("large-rotated.jpg"),
                                           targetSize: PixelSize(width: 300, height: 300))
        // Upright 600x800 must cover 300x300: stored 800x600 covering 300x300 -> 4/8.
        #expect(wide.size == PixelSize(width: 300, height: 400))
    }

    @Test("WebP scales in libwebp to cover the target, keeping the aspect ratio", arguments: [
        (PixelSize(width: 100, height: 75), PixelSize(width: 100, height: 75)),
        (PixelSize(width: 101, height: 75), PixelSize(width: 101, height: 76)),
        (PixelSize(width: 100, height: 100), PixelSize(width: 134, height: 100)),
        (PixelSize(width: 2000, height: 10), PixelSize(width: 800, height: 600)),
    ])
    func webpScaled(target: PixelSize, expected: PixelSize) throws {
        let image = try ImageDecoder.decode(path: Fixtures.path("large.webp"), targetSize: target)
        #expect(image.size == expected)
        expectQuadrants(image, Quadrant.red, Quadrant.green, Quadrant.blue, Quadrant.yellow, tolerance: 8)
    }

    @Test("PNG reduces to cover the target too, rows area-averaged as libpng delivers them")
    func pngReduced() throws {
        let image = try ImageDecoder.decode(path: Fixtures.path("quadrants.png"), targetSize: PixelSize(width: 16, height: 8))
        #expect(image.size == PixelSize(width: 16, height: 8))
        expectQuadrants(image, Quadrant.red, Quadrant.green, Quadrant.blue, Quadrant.yellow)
    }
}
