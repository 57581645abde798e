import CarouselCore
import Testing
@testable import CarouselImaging

@Suite("ImageScaler: fit geometry, letterbox colour, filtering, alpha")
struct ScalerTests {
    static let background = PixelColor(red: 0x10, green: 0x20, blue: 0x30)
    static let backgroundPixel = rgb(0x10, 0x20, 0x30)

    /// XRGB output: the X byte is not part of the colour.
    static func color(_ image: DecodedImage, _ x: Int, _ y: Int) -> UInt32 { image.pixel(x: x, y: y) | 0xFF00_0000 }

    @Test("placement for each fit mode", arguments: [
        (PixelSize(width: 64, height: 32), PixelSize(width: 100, height: 100), FitMode.contain, PixelRect(x: 0, y: 25, width: 100, height: 50)),
        (PixelSize(width: 32, height: 64), PixelSize(width: 100, height: 100), FitMode.contain, PixelRect(x: 25, y: 0, width: 50, height: 100)),
        (PixelSize(width: 64, height: 32), PixelSize(width: 100, height: 100), FitMode.cover, PixelRect(x: -50, y: 0, width: 200, height: 100)),
        (PixelSize(width: 32, height: 64), PixelSize(width: 100, height: 100), FitMode.cover, PixelRect(x: 0, y: -50, width: 100, height: 200)),
        (PixelSize(width: 64, height: 32), PixelSize(width: 100, height: 100), FitMode.stretch, PixelRect(x: 0, y: 0, width: 100, height: 100)),
        (PixelSize(width: 64, height: 32), PixelSize(width: 100, height: 100), FitMode.none, PixelRect(x: 18, y: 34, width: 64, height: 32)),
        (PixelSize(width: 64, height: 32), PixelSize(width: 40, height: 20), FitMode.none, PixelRect(x: -12, y: -6, width: 64, height: 32)),
        (PixelSize(width: 1920, height: 1080), PixelSize(width: 1024, height: 600), FitMode.contain, PixelRect(x: 0, y: 12, width: 1024, height: 576)),
        (PixelSize(width: 1920, height: 1080), PixelSize(width: 1024, height: 600), FitMode.cover, PixelRect(x: -22, y: 0, width: 1067, height: 600)),
        (PixelSize(width: 3, height: 1), PixelSize(width: 10, height: 10), FitMode.contain, PixelRect(x: 0, y: 3, width: 10, height: 3)),
        // Same aspect ratio: contain and cover agree and fill the box.
        (PixelSize(width: 800, height: 600), PixelSize(width: 400, height: 300), FitMode.contain, PixelRect(x: 0, y: 0, width: 400, height: 300)),
        (PixelSize(width: 800, height: 600), PixelSize(width: 400, height: 300), FitMode.cover, PixelRect(x: 0, y: 0, width: 400, height: 300)),
    ])
    func placement(image: PixelSize, box: PixelSize, fit: FitMode, expected: PixelRect) {
        #expect(ImageScaler.placement(of: image, in: box, fit: fit) == expected)
    }

    @Test("a picture already the box's size is handed on as it is, not copied; one with alpha or another size is not",
          arguments: [FitMode.contain, .cover, .stretch, .none])
    func sameSizeIsNotCopied(fit: FitMode) throws {
        let box = PixelSize(width: 40, height: 30)
        let opaque = try DecodedImage(width: 40, height: 30, format: .xrgb8888) { raw, _ in
            raw.bindMemory(to: UInt32.self).initialize(repeating: 0xFF12_3456)
        }
        #expect(try ImageScaler.scale(opaque, to: box, fit: fit, background: .black) === opaque)
        let translucent = try DecodedImage(width: 40, height: 30, format: .argb8888Premultiplied) { raw, _ in
            raw.bindMemory(to: UInt32.self).initialize(repeating: 0x8000_0000)
        }
        let composed = try ImageScaler.scale(translucent, to: box, fit: fit, background: .black)
        #expect(composed !== translucent && composed.format == .xrgb8888)
        let other = try ImageScaler.scale(opaque, to: PixelSize(width: 41, height: 30), fit: fit, background: .black)
        #expect(other !== opaque && other.size == PixelSize(width: 41, height: 30))
    }

    @Test("contain letterboxes in the background colour")
    func contain() throws {
        let source = try ImageDecoder.decode(path: Fixtures.path("quadrants.png"))
        let out = try ImageScaler.scale(source, to: PixelSize(width: 100, height: 100), fit: .contain, background: Self.background)
        #expect(out.size == PixelSize(width: 100, height: 100))
        #expect(out.format == .xrgb8888 && !out.hasAlpha)
        // Bars above (rows 0..<25) and below (75..<100), exactly the background.
        for y in Array(0..<25) + Array(75..<100) {
            for x in 0..<100 where Self.color(out, x, y) != Self.backgroundPixel {
                Issue.record("bar pixel (\(x), \(y)) is \(hex(out.pixel(x: x, y: y)))")
                return
            }
        }
        // The image: 100x50 at y = 25; quadrant centres.
        #expect(Self.color(out, 25, 37) == Quadrant.red)
        #expect(Self.color(out, 75, 37) == Quadrant.green)
        #expect(Self.color(out, 25, 62) == Quadrant.blue)
        #expect(Self.color(out, 75, 62) == Quadrant.yellow)
        // Edge rows of the image are the image, not a blend with the bar (PAD repeat).
        #expect(Self.color(out, 10, 25) == Quadrant.red)
        #expect(Self.color(out, 90, 74) == Quadrant.yellow)
    }

    @Test("cover fills the box and crops the sides evenly")
    func cover() throws {
        let source = try ImageDecoder.decode(path: Fixtures.path("quadrants.png"))
        let out = try ImageScaler.scale(source, to: PixelSize(width: 100, height: 100), fit: .cover, background: Self.background)
        // Scaled to 200x100 at x = -50: the middle half of the image shows.
        #expect(Self.color(out, 0, 0) == Quadrant.red)
        #expect(Self.color(out, 99, 0) == Quadrant.green)
        #expect(Self.color(out, 0, 99) == Quadrant.blue)
        #expect(Self.color(out, 99, 99) == Quadrant.yellow)
        for y in 0..<100 { for x in 0..<100 where Self.color(out, x, y) == Self.backgroundPixel {
            Issue.record("background showing at (\(x), \(y))")
            return
        } }
    }

    @Test("stretch fills the box, distorting")
    func stretch() throws {
        let source = try ImageDecoder.decode(path: Fixtures.path("quadrants.png"))
        let out = try ImageScaler.scale(source, to: PixelSize(width: 30, height: 90), fit: .stretch, background: Self.background)
        #expect(Self.color(out, 7, 22) == Quadrant.red)
        #expect(Self.color(out, 22, 22) == Quadrant.green)
        #expect(Self.color(out, 7, 67) == Quadrant.blue)
        #expect(Self.color(out, 22, 67) == Quadrant.yellow)
        #expect(Self.color(out, 0, 0) == Quadrant.red && Self.color(out, 29, 89) == Quadrant.yellow)
    }

    @Test("none centres the image unscaled, cropped when larger")
    func none() throws {
        let source = try ImageDecoder.decode(path: Fixtures.path("quadrants.png"))
        let larger = try ImageScaler.scale(source, to: PixelSize(width: 100, height: 100), fit: .none, background: Self.background)
        // At (18, 34): an exact copy, background around it.
        for y in 0..<32 { for x in 0..<64 where Self.color(larger, 18 + x, 34 + y) != source.pixel(x: x, y: y) {
            Issue.record("copy differs at (\(x), \(y))")
            return
        } }
        #expect(Self.color(larger, 17, 34) == Self.backgroundPixel)
        #expect(Self.color(larger, 82, 65) == Self.backgroundPixel)
        #expect(Self.color(larger, 18, 33) == Self.backgroundPixel)

        let smaller = try ImageScaler.scale(source, to: PixelSize(width: 40, height: 20), fit: .none, background: Self.background)
        // The middle 40x20: source (12, 6) ..< (52, 26).
        for y in 0..<20 { for x in 0..<40 where Self.color(smaller, x, y) != source.pixel(x: x + 12, y: y + 6) {
            Issue.record("crop differs at (\(x), \(y))")
            return
        } }
    }

    @Test("translucent pixels are composited over the background (OVER)")
    func alphaOverBackground() throws {
        let source = try ImageDecoder.decode(path: Fixtures.path("alpha.png"))
        let white = PixelColor(red: 255, green: 255, blue: 255)
        let out = try ImageScaler.scale(source, to: source.size, fit: .contain, background: white)
        // premultiplied src + (1 - a) * dst: red at 128 -> (255, 127, 127); transparent -> white;
        // opaque blue; yellow at 64 -> (255, 255, 191).
        expectPixel(out, 16, 8, rgb(255, 127, 127), tolerance: 1)
        expectPixel(out, 48, 8, rgb(255, 255, 255))
        expectPixel(out, 16, 24, rgb(0, 0, 255))
        expectPixel(out, 48, 24, rgb(255, 255, 191), tolerance: 1)
    }

    @Test("a translucent background is premultiplied over black")
    func translucentBackground() throws {
        let source = try ImageDecoder.decode(path: Fixtures.path("quadrants.png"))
        let out = try ImageScaler.scale(source, to: PixelSize(width: 64, height: 64), fit: .contain,
                                        background: PixelColor(red: 255, green: 0, blue: 0, alpha: 128))
        #expect(Self.color(out, 0, 0) == rgb(128, 0, 0))
    }

    @Test("drawing into a caller's buffer writes every pixel of the box and nothing past each row")
    func callerBuffer() throws {
        let source = try ImageDecoder.decode(path: Fixtures.path("quadrants.png"))
        let width = 50, height = 40, stride = (width + 6) * 4
        let sentinel: UInt32 = 0xDEAD_BEEF
        let words = stride / 4 * height
        let buffer = UnsafeMutablePointer<UInt32>.allocate(capacity: words)
        defer { buffer.deallocate() }
        buffer.initialize(repeating: sentinel, count: words)
        try ImageScaler.scale(source, into: UnsafeMutableRawPointer(buffer), size: PixelSize(width: width, height: height),
                              stride: stride, fit: .contain, background: Self.background)
        for y in 0..<height {
            for x in 0..<(stride / 4) {
                let value = buffer[y * stride / 4 + x]
                if x < width && value == sentinel { Issue.record("pixel (\(x), \(y)) not written"); return }
                if x >= width && value != sentinel { Issue.record("padding (\(x), \(y)) overwritten"); return }
            }
        }
        // contain 64x32 in 50x40: 50x25 at y = 7.
        #expect(buffer[0] | 0xFF00_0000 == Self.backgroundPixel)
        #expect(buffer[10 * stride / 4 + 12] | 0xFF00_0000 == Quadrant.red)
    }

    @Test("large reductions keep solid areas exact and colours blended at edges")
    func largeReduction() throws {
        let source = try ImageDecoder.decode(path: Fixtures.path("large.jpg"))  // 800x600
        let out = try ImageScaler.scale(source, to: PixelSize(width: 80, height: 60), fit: .contain, background: Self.background)
        expectQuadrants(out, Quadrant.red, Quadrant.green, Quadrant.blue, Quadrant.yellow, tolerance: 6)
        // No letterbox: same aspect ratio.
        #expect(Self.color(out, 0, 0) != Self.backgroundPixel)
    }

    /// A 1-pixel black and white checkerboard: the worst case for aliasing.
    static func checkerboard(_ size: Int) throws -> DecodedImage {
        try DecodedImage(width: size, height: size, format: .xrgb8888) { buffer, stride in
            for y in 0..<size { for x in 0..<size {
                buffer.storeBytes(of: (x + y) % 2 == 0 ? UInt32(0xFF00_0000) : 0xFFFF_FFFF,
                                  toByteOffset: y * stride + x * 4, as: UInt32.self)
            } }
        }
    }

    @Test("downscaling averages instead of sampling (no aliasing)", arguments: [256, 192, 160, 96])
    func antiAliasing(size: Int) throws {
        let out = try ImageScaler.scale(Self.checkerboard(size), to: PixelSize(width: 64, height: 64),
                                        fit: .stretch, background: .black)
        // Point sampling would give pure black or white; an area filter gives grey.
        var worst = 0
        for y in 0..<64 { for x in 0..<64 { worst = max(worst, abs(Int(out.pixel(x: x, y: y) & 0xFF) - 128)) } }
        #expect(worst <= (size % 64 == 0 ? 2 : 45), "\(size) -> 64: a pixel is \(worst) away from grey")
    }

    @Test("halving averages 2x2 blocks with rounding, odd edges repeat")
    func halving() throws {
        let image = try DecodedImage(width: 3, height: 3, format: .argb8888Premultiplied) { buffer, stride in
            let values: [UInt32] = [0x0000_0000, 0xFFFF_FFFF, 0x1020_3040,
                                    0x0101_0101, 0x0303_0303, 0x1020_3040,
                                    0x8000_0080, 0x8000_0080, 0xFF00_FF00]
            for i in 0..<9 { buffer.storeBytes(of: values[i], toByteOffset: (i / 3) * stride + (i % 3) * 4, as: UInt32.self) }
        }
        let half = try ImageScaler.halved(image, x: true, y: true)
        #expect(half.size == PixelSize(width: 2, height: 2))
        // (0 + 255 + 1 + 3 + 2) >> 2 = 65 = 0x41 per channel.
        #expect(half.pixel(x: 0, y: 0) == 0x4141_4141)
        #expect(half.pixel(x: 1, y: 0) == 0x1020_3040)
        #expect(half.pixel(x: 0, y: 1) == 0x8000_0080)
        #expect(half.pixel(x: 1, y: 1) == 0xFF00_FF00)
        #expect(half.hasAlpha && half.format == .argb8888Premultiplied)
    }

    @Test("enlarging a tiny image keeps its colours")
    func enlarge() throws {
        let source = try ImageDecoder.decode(path: Fixtures.path("quadrants.png"))
        let out = try ImageScaler.scale(source, to: PixelSize(width: 640, height: 320), fit: .contain, background: Self.background)
        expectQuadrants(out, Quadrant.red, Quadrant.green, Quadrant.blue, Quadrant.yellow)
    }

    @Test("rectangle subtraction gives the bars around a hole")
    func subtract() {
        let box = PixelRect(x: 0, y: 0, width: 100, height: 100)
        #expect(box.subtracting(PixelRect(x: 0, y: 25, width: 100, height: 50)) == [
            PixelRect(x: 0, y: 0, width: 100, height: 25), PixelRect(x: 0, y: 75, width: 100, height: 25),
        ])
        #expect(box.subtracting(box).isEmpty)
        #expect(box.subtracting(PixelRect(x: 10, y: 10, width: 80, height: 80)).count == 4)
        #expect(box.subtracting(PixelRect(x: 0, y: 0, width: 0, height: 0)) == [box])
    }
}
