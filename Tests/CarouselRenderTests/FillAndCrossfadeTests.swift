// `fit = blur` and a crossfade frame against ImageMagick references built
// from the rules alone (issue 13): the fill is the picture covering the
// screen, Gaussian-blurred (ImageMagick's own -gaussian-blur, edges
// extended) and multiplied by 1 − dim, with the picture contained over it;
// a crossfade at f is the two frames mixed per pixel as u + (v − u)·f.

import Foundation
import Testing
import CarouselCore
import CarouselImaging
import CarouselRender

@Suite("fit = blur and crossfade frames match ImageMagick references",
       .enabled(if: Tools.imageMagickAvailable, Comment(rawValue: imageMagickMissing)))
struct FillAndCrossfadeTests {
    let panel = (w: 320, h: 180)

    func ini(_ picture: String, fit: String, radius: Double, dim: Double) -> String {
        """
        [display]
        background = #203040

        [autoplay]
        enabled = false

        [images]
        files = \(picture)
        fit = \(fit)
        blur_radius = \(radius)
        dim = \(dim)

        [indicator]
        enabled = false

        """
    }

    @Test("a portrait picture on a landscape screen: contained over its own blurred, dimmed cover",
          arguments: [(12.0, 0.3), (40.0, 0.6), (3.0, 0.0)])
    func blurFill(radius: Double, dim: Double) throws {
        let scratch = try Scratch("blur")
        let picture = try PictureSpec.quadrants(width: 90, height: 150, palette: 0).make(in: scratch, name: "portrait")
        let config = try scratch.write("blur.ini", ini(picture.path, fit: "blur", radius: radius, dim: dim))
        let binary = try Tools.requireCarouseld()
        let out = scratch.file("render.png")
        let run = try Tools.run(binary, ["render", "--config", config, "--size", "\(panel.w)x\(panel.h)", "--offset=0", "--out", out])
        try #require(run.status == 0, "carouseld render: \(run.stderr)")
        let actual = try RGBImage(file: out)

        let place = fitPlacement(image: (picture.width, picture.height), box: panel, fit: "contain")
        let png = scratch.file("reference.png")
        let reference = try RGBImage(ppm: [UInt8](try Tools.magick([
            picture.path, "-filter", "Triangle", "-resize", "\(panel.w)x\(panel.h)^", "-gravity", "center",
            "-extent", "\(panel.w)x\(panel.h)", "-virtual-pixel", "edge", "-gaussian-blur", "0x\(radius)",
            "-evaluate", "multiply", "\(1 - dim)",
            "(", picture.path, "-filter", "Triangle", "-resize", "\(place.width)x\(place.height)!", ")",
            "-gravity", "northwest", "-geometry", "+\(place.x)+\(place.y)", "-composite",
            "-write", png, "-depth", "8", "ppm:-",
        ])))
        let psnr = actual.psnr(against: reference)
        // Measured 41-70 dB: the box passes only approximate a Gaussian, and
        // the fill is shrunk and enlarged by other filters than ImageMagick's.
        // fit = contain's bars against these references measure 10-21 dB.
        #expect(psnr >= 32, "PSNR \(psnr) dB against \(png)")
        // The sharp picture is exactly itself (quadrant centres).
        for (q, (fx, fy)) in [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)].enumerated() {
            let x = place.x + Int(Double(place.width) * fx), y = place.y + Int(Double(place.height) * fy)
            #expect(actual.pixel(x, y).distance(to: picture.quadrants[q]) <= 1, "quadrant \(q) at (\(x), \(y))")
        }
        // No pixel of the bars is the background: the fill covers them.
        var background = 0
        for y in 0..<panel.h { for x in 0..<place.x where actual.pixel(x, y) == RGB(0x20, 0x30, 0x40) { background += 1 } }
        #expect(background == 0)
        if psnr < 32 { scratch.keep() }
    }

    @Test("contain keeps its bars in the background colour (the blur reference tells them apart)")
    func containIsNotBlur() throws {
        let scratch = try Scratch("contain")
        let picture = try PictureSpec.quadrants(width: 90, height: 150, palette: 0).make(in: scratch, name: "portrait")
        let config = try scratch.write("contain.ini", ini(picture.path, fit: "contain", radius: 12, dim: 0.3))
        let out = scratch.file("render.png")
        let run = try Tools.run(try Tools.requireCarouseld(),
                                ["render", "--config", config, "--size", "\(panel.w)x\(panel.h)", "--offset=0", "--out", out])
        try #require(run.status == 0, "carouseld render: \(run.stderr)")
        let actual = try RGBImage(file: out)
        let place = fitPlacement(image: (picture.width, picture.height), box: panel, fit: "contain")
        #expect(actual.count(of: RGB(0x20, 0x30, 0x40)) == panel.h * (panel.w - place.width))
    }

    @Test("a crossfade frame at fraction f is the two frames mixed per pixel", arguments: [0.3, 0.5, 0.85])
    func crossfadeFrame(fraction: Double) throws {
        let scratch = try Scratch("fade")
        let pictures = try [0, 1].map { try PictureSpec.quadrants(width: 160, height: 100, palette: $0).make(in: scratch, name: "item\($0)") }
        var style = RenderStyle()
        style.indicator.enabled = false
        let painter = FramePainter(panel: PixelSize(width: panel.w, height: panel.h), rotation: .none,
                                   settings: CarouselSettings(), style: style, pages: pictures.map { PageKey($0.path) },
                                   maxPixels: 64_000_000, budgetBytes: 64 << 20)
        let (frame, failures) = painter.paint(offset: 0, count: 2, page: 0, pageCount: 2,
                                              crossfade: Crossfade(from: 0, to: 1, fraction: fraction))
        #expect(failures.isEmpty)
        let out = scratch.file("fade.png")
        try frame.writePNG(to: out)
        let actual = try RGBImage(file: out)

        let place = fitPlacement(image: (160, 100), box: panel, fit: "contain")
        func framed(_ p: Picture) -> [String] {
            ["(", "-size", "\(panel.w)x\(panel.h)", "xc:black", "(", p.path, "-filter", "Triangle", "-resize",
             "\(place.width)x\(place.height)!", ")", "-geometry", "+\(place.x)+\(place.y)", "-composite", ")"]
        }
        let png = scratch.file("reference.png")
        let reference = try RGBImage(ppm: [UInt8](try Tools.magick(
            framed(pictures[0]) + framed(pictures[1]) + ["-fx", "u+(v-u)*\(fraction)", "-write", png, "-depth", "8", "ppm:-"]
        )))
        let psnr = actual.psnr(against: reference)
        #expect(psnr >= 40, "PSNR \(psnr) dB against \(png)")
        for (q, (fx, fy)) in [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)].enumerated() {
            let x = place.x + Int(Double(place.width) * fx), y = place.y + Int(Double(place.height) * fy)
            let want = pictures[0].quadrants[q].under(pictures[1].quadrants[q], alpha: fraction)
            #expect(actual.pixel(x, y).distance(to: want) <= 2, "quadrant \(q) at (\(x), \(y)): \(actual.pixel(x, y)) vs \(want)")
        }
        if psnr < 40 { scratch.keep() }
    }

    @Test("carouseld render --crossfade F draws that crossfade frame; a fraction outside 0 to 1 is refused")
    func renderCrossfade() throws {
        let scratch = try Scratch("render-fade")
        let pictures = try [0, 1].map { try PictureSpec.quadrants(width: 160, height: 100, palette: $0).make(in: scratch, name: "item\($0)") }
        let config = try scratch.write("fade.ini", ini(pictures.map(\.path).joined(separator: ", "), fit: "contain", radius: 40, dim: 0.4)
            .replacingOccurrences(of: "#203040", with: "#000000"))
        let binary = try Tools.requireCarouseld()
        let out = scratch.file("render.png")
        let run = try Tools.run(binary, ["render", "--config", config, "--size", "\(panel.w)x\(panel.h)", "--offset=0",
                                         "--crossfade", "0.3", "--out", out])
        try #require(run.status == 0, "carouseld render: \(run.stderr)")
        let actual = try RGBImage(file: out)
        let place = fitPlacement(image: (160, 100), box: panel, fit: "contain")
        for (q, (fx, fy)) in [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)].enumerated() {
            let x = place.x + Int(Double(place.width) * fx), y = place.y + Int(Double(place.height) * fy)
            let want = pictures[0].quadrants[q].under(pictures[1].quadrants[q], alpha: 0.3)
            #expect(actual.pixel(x, y).distance(to: want) <= 2, "quadrant \(q) at (\(x), \(y)): \(actual.pixel(x, y)) vs \(want)")
        }
        for bad in ["1.5", "-0.1", "nan"] {
            let refused = try Tools.run(binary, ["render", "--config", config, "--size", "\(panel.w)x\(panel.h)",
                                                 "--crossfade", bad, "--out", scratch.file("bad.png")])
            #expect(refused.status != 0 && refused.stderr.contains("--crossfade must be a fraction from 0 to 1"),
                    "--crossfade \(bad): \(refused.status) \(refused.stderr)")
        }
    }
}

@Suite("carouseld render tries every file within the decode budget")
struct RenderBudgetTests {
    /// The 512 MB board run found `render` trying each file first with no
    /// budget: a 48 MP HEIC got its decoding process killed for memory
    /// before the budget refused it.
    @Test("removeUndecodable refuses a picture over the budget with the budget's line, and keeps one within it")
    func triesWithinTheBudget() throws {
        let scratch = try Scratch("budget")
        let big = try PictureSpec.quadrants(width: 400, height: 300, palette: 0).make(in: scratch, name: "big")
        let small = try PictureSpec.quadrants(width: 40, height: 30, palette: 1).make(in: scratch, name: "small")
        // What each needs on this 160x100 screen, as the decoder counts it.
        func needs(_ path: String) -> Int {
            // A budget of the file's size: past the check before reading, refused by the whole count.
            let file = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            do {
                _ = try ImageDecoder.decode(path: path, targetSize: PixelSize(width: 160, height: 100), fit: .contain,
                                            decodeBudget: file)
            } catch {
                if case let .overDecodeBudget(needs, _, _, _) = error.reason { return needs }
            }
            return 0
        }
        // Room for the small one, not the big one (libpng's rows of 400 pixels).
        let budget = needs(small.path)
        #expect(budget > 0 && needs(big.path) > budget)
        let painter = FramePainter(panel: PixelSize(width: 160, height: 100), rotation: .none,
                                   settings: CarouselSettings(), style: RenderStyle(), pages: [PageKey(big.path), PageKey(small.path)],
                                   maxPixels: 64_000_000, budgetBytes: 64 << 20, decodeBudget: budget)
        let failures = painter.removeUndecodable()
        #expect(failures.map(\.key) == [PageKey(big.path)], "\(failures) budget \(budget)")
        #expect(failures.first?.message.contains("decode budget ([images] decode_mb)") == true, "\(failures)")
    }
}
