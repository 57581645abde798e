// `fit = cover` keeps the faces a picture's XMP marks (issue 47), through
// `carouseld render`: a landscape picture whose face is at its left edge,
// on a portrait screen, shows the whole face; the same picture without the
// region is cropped around its centre and the face is cut (so the test can
// fail). References are ImageMagick's crops of its own scaling.

import CarouselCore
import CarouselImaging
import CarouselRender
import Foundation
import Testing

@Suite("Cover crops keep faces", .enabled(if: Tools.imageMagickAvailable, Comment(rawValue: imageMagickMissing)))
struct FaceCropTests {
    static let fixtures: String = {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(2)
        return parts.joined(separator: "/") + "/CarouselImagingTests/Fixtures"
    }()

    /// The frame of `fixture` alone with `fit = cover` on a 200x400 panel, and
    /// ImageMagick's picture scaled to 800x400 cropped at `referenceX`.
    func frame(_ fixture: String, referenceX: Int, rotation: String = "0") throws -> (RGBImage, RGBImage, Scratch) {
        let scratch = try Scratch("faces")
        let folder = scratch.file("images")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.fixtures + "/" + fixture, toPath: folder + "/" + fixture)
        let turned = rotation == "90" || rotation == "270"
        let ini = try scratch.write("c.ini", """
            [images]
            path = \(folder)
            fit = cover
            [display]
            rotation = \(rotation)
            [indicator]
            enabled = false
            """)
        let out = scratch.file("frame.png")
        let size = turned ? "400x200" : "200x400"
        let run = try Tools.run(try Tools.requireCarouseld(), ["render", "--config", ini, "--size", size, "--out", out])
        try #require(run.status == 0, "carouseld render: \(run.stderr)")
        let reference = try RGBImage(ppm: [UInt8](try Tools.magick([
            Self.fixtures + "/" + fixture, "-filter", "Triangle", "-resize", "800x400!",
            "-crop", "200x400+\(referenceX)+0", "+repage", "-rotate", rotation, "-depth", "8", "ppm:-",
        ])))
        return (try RGBImage(file: out), reference, scratch)
    }

    /// Pixels that are the face's red (JPEG's loss allowed for).
    func red(_ image: RGBImage) -> Int {
        var n = 0
        for y in 0..<image.height {
            for x in 0..<image.width {
                let p = image.pixel(x, y)
                if p.r > 200 && p.g < 60 && p.b < 60 { n += 1 }
            }
        }
        return n
    }

    @Test("a face at the left edge on a portrait screen is wholly on screen, every rotation",
          arguments: ["0", "90", "180", "270"])
    func theFaceIsKept(rotation: String) throws {
        let (actual, reference, scratch) = try frame("faces-mwg.jpg", referenceX: 0, rotation: rotation)
        let psnr = actual.psnr(against: reference)
        // The face is x 2 to 33, y 40 to 79 of 240x120: 106x133 pixels at 800x400.
        let face = red(actual)
        if psnr < minimumPSNR || face < 100 * 125 { scratch.keep() }
        #expect(psnr >= minimumPSNR, "PSNR \(psnr) against the crop at the left edge (\(scratch.path))")
        #expect(face >= 100 * 125 && face <= 110 * 137, "\(face) red pixels")
    }

    @Test("Microsoft's regions keep it too")
    func microsoftRegions() throws {
        let (actual, reference, _) = try frame("faces-mp.jpg", referenceX: 0)
        #expect(actual.psnr(against: reference) >= minimumPSNR)
        #expect(red(actual) >= 100 * 125)
    }

    @Test("the two halves of a pair's page keep their faces too")
    func pairHalves() throws {
        // A page of 200x160: two halves of 100x160, each cropping its
        // picture's sides; the face is at each picture's left edge.
        let settings = ItemCache.Settings(itemSize: PixelSize(width: 200, height: 160), fit: .cover, background: .black,
                                          maxPixels: 1_000_000, budgetBytes: 1 << 20)
        func redColumns(_ a: String, _ b: String) throws -> [Int] {
            let page = try ItemCache.prepare(PageKey(pair: Self.fixtures + "/" + a, Self.fixtures + "/" + b), settings: settings)
            return (0..<page.width).filter { x in
                (0..<page.height).contains { y in
                    let p = page.pixel(x: x, y: y)
                    return (p >> 16) & 0xFF > 200 && (p >> 8) & 0xFF < 60 && p & 0xFF < 60
                }
            }
        }
        let kept = try redColumns("faces-mwg.jpg", "faces-mp.jpg")
        // The face, 2 to 33 of 240 at 320 wide: columns 3 to 44 of each half.
        #expect(kept.contains(5) && kept.contains(40) && kept.contains(105) && kept.contains(140), "\(kept)")
        #expect(try redColumns("faces-none.jpg", "faces-none.jpg").isEmpty)
    }

    @Test("without the region the crop is the centre's, and the face is cut")
    func withoutTheRegionTheFaceIsCut() throws {
        let (actual, reference, _) = try frame("faces-none.jpg", referenceX: 300)
        #expect(actual.psnr(against: reference) >= minimumPSNR)
        #expect(red(actual) == 0)
    }
}
