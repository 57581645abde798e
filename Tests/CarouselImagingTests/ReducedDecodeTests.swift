// PNG decodes reduced to the target as libpng delivers rows (issue 10, finding 6):
// a 62 MP PNG for a 1280x800 screen must not need 250 MB of pixels.
import CarouselCore
import Foundation
import Testing
@testable import CarouselImaging

@Suite("PNG decodes reduced to the target, in bounded memory")
struct ReducedDecodeTests {
    typealias Allocations = PixelLimitTests.Allocations

    /// Decodes with the allocation observer on; returns the image and every
    /// pixel allocation the decoder made (output, scratch, orientation copy).
    func decode(_ name: String, target: PixelSize?, fit: FitMode = .cover) throws -> (DecodedImage, [Int]) {
        let allocations = Allocations()
        let image = try DecodedImage.$allocationObserver.withValue({ allocations.record($0) }) {
            try ImageDecoder.decode(path: Fixtures.path(name), targetSize: target, fit: fit)
        }
        return (image, allocations.all)
    }

    @Test("a 62 MP PNG for a 1280x800 screen needs memory for the screen, not the picture", arguments: [
        // cover needs both sides: the square picture reduced to 1280x1280.
        (FitMode.cover, PixelSize(width: 1280, height: 1280)),
        // contain shows it at 800x800.
        (FitMode.contain, PixelSize(width: 800, height: 800)),
    ])
    func hugePNG(fit: FitMode, expected: PixelSize) throws {
        let box = PixelSize(width: 1280, height: 800)
        let (image, allocations) = try decode("huge-gray1.png", target: box, fit: fit)
        #expect(image.size == expected)
        // The bound: what the screen needs, whatever the picture's size. The
        // covering output is at most 1.6 boxes here (a square into 16:10);
        // twice the box's bytes, plus 1 MiB for the rows and accumulators
        // (about 12 bytes per source column and 48 per output column), is
        // that with room to spare. A full-size decode is 7900 * 7900 * 4 =
        // 250 MB, 25 times this.
        let bound = 2 * box.width * box.height * 4 + (1 << 20)
        let total = allocations.reduce(0, +)
        #expect(total <= bound, "the decode allocated \(allocations) = \(total) bytes, bound \(bound)")
        // The checker survives: black, white / white, black, exact in the
        // middle of each quadrant and at its edges (3950 source pixels per
        // quadrant, whose edge falls on an output pixel edge only for cover;
        // contain's edge pixel is a mix, skipped).
        expectQuadrants(image, rgb(0, 0, 0), rgb(255, 255, 255), rgb(255, 255, 255), rgb(0, 0, 0))
        if fit == .cover {
            expectPixel(image, 639, 639, rgb(0, 0, 0))
            expectPixel(image, 640, 639, rgb(255, 255, 255))
            expectPixel(image, 640, 640, rgb(0, 0, 0))
        }
    }

    @Test("an Adam7 PNG reduces from its 7 passes, within 16 bytes per output pixel of scratch")
    func interlacedPNG() throws {
        // 3000x3000 covering 300x200: 300x300, a 10x reduction.
        let (image, allocations) = try decode("large-gray1-interlaced.png", target: PixelSize(width: 300, height: 200))
        #expect(image.size == PixelSize(width: 300, height: 300))
        let output = 300 * 300 * 4
        let bound = output + 4 * output + (1 << 16)
        #expect(allocations.reduce(0, +) <= bound, "allocated \(allocations), bound \(bound)")
        for (x, y) in [(0, 0), (149, 149), (150, 149), (149, 150), (150, 150), (299, 299), (10, 290)] {
            let white = (x >= 150) != (y >= 150)
            expectPixel(image, x, y, white ? rgb(255, 255, 255) : rgb(0, 0, 0))
        }
    }

    @Test("no target, or a target the picture does not exceed, decodes at full size as before")
    func fullSize() throws {
        let (image, allocations) = try decode("quadrants.png", target: nil)
        #expect(image.size == PixelSize(width: 64, height: 32))
        #expect(allocations == [64 * 32 * 4])
        // cover must fill 100x100: the 64x32 picture is enlarged by the scaler, not here.
        let (small, _) = try decode("quadrants.png", target: PixelSize(width: 100, height: 100))
        #expect(small.size == PixelSize(width: 64, height: 32))
    }

    /// The exact area average of `image` at `size`, computed in Double from
    /// the full-size decode: each output pixel the mean of the source area
    /// under it, partial pixels weighted by the part covered. Channels as
    /// stored (premultiplied where the image has alpha).
    static func areaAverage(_ image: DecodedImage, to size: PixelSize) -> [[Double]] {
        func spans(_ source: Int, _ target: Int) -> [[(Int, Double)]] {
            let step = Double(source) / Double(target)
            return (0..<target).map { o in
                let start = Double(o) * step, end = start + step
                return (Int(start.rounded(.down))..<min(source, Int(end.rounded(.up)))).compactMap { i in
                    let w = min(end, Double(i + 1)) - max(start, Double(i))
                    return w > 1e-9 ? (i, w / step) : nil
                }
            }
        }
        let xs = spans(image.width, size.width), ys = spans(image.height, size.height)
        var out: [[Double]] = []
        for oy in 0..<size.height {
            for ox in 0..<size.width {
                var c = [0.0, 0.0, 0.0, 0.0]
                for (y, wy) in ys[oy] {
                    for (x, wx) in xs[ox] {
                        let p = image.pixel(x: x, y: y)
                        for k in 0..<4 { c[k] += Double((p >> (8 * UInt32(k))) & 0xFF) * wx * wy }
                    }
                }
                out.append(c)
            }
        }
        return out
    }

    @Test("the reduction is the exact area average of the full decode, to one level", arguments: [
        // 64x32 fixtures to 21x9 (ratios 3.05 and 3.56: output edges fall
        // inside source pixels), every PNG flavour the decoder normalises;
        // the logo (640x480 to 150x100) as a real picture.
        ("quadrants.png", PixelSize(width: 21, height: 9)),
        ("palette.png", PixelSize(width: 21, height: 9)),
        ("interlaced.png", PixelSize(width: 21, height: 9)),
        ("rgb16.png", PixelSize(width: 21, height: 9)),
        ("gray1.png", PixelSize(width: 21, height: 9)),
        ("palette-trns.png", PixelSize(width: 21, height: 9)),
        ("alpha.png", PixelSize(width: 21, height: 9)),
        ("alpha16.png", PixelSize(width: 21, height: 9)),
        ("gray-alpha.png", PixelSize(width: 21, height: 9)),
        ("logo.png", PixelSize(width: 150, height: 100)),
        ("logo-trns.png", PixelSize(width: 150, height: 100)),
    ])
    func exactAreaAverage(name: String, box: PixelSize) throws {
        let full = try ImageDecoder.decode(path: Fixtures.path(name))
        let reduced = try ImageDecoder.decode(path: Fixtures.path(name), targetSize: box, fit: .stretch)
        // stretch draws the picture at the box's size: each axis on its own.
        #expect(reduced.size == box)
        #expect(reduced.size.width < full.width && reduced.size.height < full.height)
        #expect(reduced.format == full.format && reduced.hasAlpha == full.hasAlpha)
        let reference = Self.areaAverage(full, to: reduced.size)
        var worst = 0.0
        for y in 0..<reduced.height {
            for x in 0..<reduced.width {
                let p = reduced.pixel(x: x, y: y)
                let alpha = p >> 24
                // Premultiplied: no colour channel above alpha.
                if (0..<3).contains(where: { (p >> (8 * UInt32($0))) & 0xFF > alpha }) {
                    Issue.record("\(name): pixel (\(x), \(y)) \(hex(p)) has colour above alpha")
                }
                for k in 0..<4 {
                    let value = Double((p >> (8 * UInt32(k))) & 0xFF)
                    worst = max(worst, abs(value - reference[y * reduced.width + x][k]))
                }
            }
        }
        // Rounding to 8 bits is half a level; the 8.8 fixed point along x
        // adds under 1/512; the clamp to alpha at most one more level.
        #expect(worst <= 1.0, "\(name): worst channel \(worst) levels from the exact area average")
    }

    /// `reference` (premultiplied B, G, R, A as Doubles) over `background`,
    /// as the scaler composites a translucent picture.
    static func over(_ reference: [[Double]], _ background: PixelColor) -> [[Double]] {
        let bg = [Double(background.blue), Double(background.green), Double(background.red)]
        return reference.map { c in (0..<3).map { k in c[k] + bg[k] * (255 - c[3]) / 255 } }
    }

    /// PSNR in dB over the colour channels: `image` against Double values.
    static func psnr(_ image: DecodedImage, _ reference: [[Double]]) -> Double {
        var sum = 0.0
        for y in 0..<image.height {
            for x in 0..<image.width {
                let p = image.pixel(x: x, y: y), r = reference[y * image.width + x]
                for k in 0..<3 {
                    let d = Double((p >> (8 * UInt32(k))) & 0xFF) - r[k]
                    sum += d * d
                }
            }
        }
        let mse = sum / Double(image.width * image.height * 3)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    static func values(_ image: DecodedImage) -> [[Double]] {
        var out: [[Double]] = []
        for y in 0..<image.height { for x in 0..<image.width {
            let p = image.pixel(x: x, y: y)
            out.append((0..<4).map { Double((p >> (8 * UInt32($0))) & 0xFF) })
        } }
        return out
    }

    @Test("drawn in its item, the reduced decode is as close to the exact area average as the full decode was", arguments: [
        // Item sizes the logo (640x480) is drawn at: contain in 200x125, cover
        // of 160x100 (160x120), and two stretches; every ratio non-integer.
        ("logo.png", PixelSize(width: 167, height: 125)),
        ("logo.png", PixelSize(width: 160, height: 120)),
        ("logo.png", PixelSize(width: 111, height: 97)),
        ("logo-trns.png", PixelSize(width: 167, height: 125)),
        ("logo-trns.png", PixelSize(width: 148, height: 111)),
    ])
    func sameAsFullDecode(name: String, size: PixelSize) throws {
        let background = PixelColor(red: 40, green: 90, blue: 160)
        // Before: the full-size picture reduced by the scaler (halvings, then
        // pixman's box convolution, or bilinear for the last step under 1.35x).
        let full = try ImageDecoder.decode(path: Fixtures.path(name))
        let before = try ImageScaler.scale(full, to: size, fit: .stretch, background: background)
        // After: the decode reduced to the drawn size; the scaler only composites.
        let reduced = try ImageDecoder.decode(path: Fixtures.path(name), targetSize: size, fit: .stretch)
        #expect(reduced.size == size)
        let after = try ImageScaler.scale(reduced, to: size, fit: .stretch, background: background)
        // The truth both approximate: the exact area average, computed here
        // in Double from the full decode.
        let exact = Self.over(Self.areaAverage(full, to: size), background)
        let beforeQuality = Self.psnr(before, exact), afterQuality = Self.psnr(after, exact)
        let between = Self.psnr(after, Self.values(before))
        // After is the exact average to within a level or so (over 45 dB) and
        // never further from it than before was.
        #expect(afterQuality >= 45, "\(name) at \(size): \(afterQuality) dB from the exact average")
        #expect(afterQuality >= beforeQuality, "\(name) at \(size): after \(afterQuality) dB, before \(beforeQuality) dB")
        // And close to what was drawn before. On this picture of 1-pixel text
        // strokes and hard colour edges the old pipeline's last step (pixman's
        // 16 filter phases, bilinear below 1.35x) moves edges by a fraction of
        // a pixel, which alone costs a 30-35 dB match; 28 dB (an RMS error of
        // 10 levels) is that with a margin. A resampling bug (a shifted row,
        // a lost pass, a swapped channel) falls far below: under 20 dB.
        #expect(between >= 28, "\(name) at \(size): \(between) dB between before and after")
    }

    @Test("an EXIF-rotated PNG is reduced first, then turned: the copy is output-sized")
    func orientedAfterReduction() throws {
        // Stored 64x32 with orientation 6, upright 32x64. An upright 8x16
        // target is 16x8 stored: the reduction is 16x8, the turned copy 8x16.
        let (image, allocations) = try decode("orientation-6.png", target: PixelSize(width: 8, height: 16))
        #expect(image.size == PixelSize(width: 8, height: 16))
        #expect(allocations.filter { $0 == 8 * 16 * 4 }.count == 2, "allocations \(allocations)")
        #expect(allocations.allSatisfy { $0 < 64 * 32 * 4 }, "a full-size buffer in \(allocations)")
        // ImageMagick's -auto-orient of the same file, reduced the same way.
        let upright = try ImageDecoder.decode(path: Fixtures.path("upright-6.png"), targetSize: PixelSize(width: 8, height: 16))
        #expect(upright.size == image.size)
        // The reference went through JPEG (orientation-6.jpg): a level or two off.
        for y in 0..<16 { for x in 0..<8 { expectPixel(image, x, y, upright.pixel(x: x, y: y), tolerance: 4) } }
    }

    @Test("a 24 MP JPEG for 1280x800 decodes at 1/4 (DCT scaling), never at full size")
    func jpegScale() {
        // 6000x4000 covering 1280x800 (cover) or 1200x800 (contain): 2/8.
        let size = PixelSize(width: 6000, height: 4000)
        #expect(JPEGDecompressor.scaleEighths(for: size, covering: PixelSize(width: 1280, height: 800)) == 2)
        #expect(JPEGDecompressor.scaleEighths(for: size, covering: PixelSize(width: 1200, height: 800)) == 2)
    }
}
