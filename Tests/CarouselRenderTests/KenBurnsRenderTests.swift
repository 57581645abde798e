// `carouseld render --ken-burns SECONDS` (issue 47): frames at chosen times
// of a zoom that ends on the face, against ImageMagick's own scaling of the
// expected framing (PSNR, as the other render tests), every rotation.
//
// The expected framing, written out from the rules (not from
// Sources/): the fixture's face spans x 2 to 33 and y 40 to 79 of 240x120;
// on a 320x160 screen (the picture's own shape) it fills the box. A zoom in
// goes from scale 1 to zoom_max 1.3, equal ratios per second, over the
// rest autoplay gives it (interval 4 s), its centre in a straight line
// from the box's middle to where the face (with a quarter of its size
// around it) is in view: x as far left as the box allows (0.5 / 1.3 of the
// box), y the face's middle (0.5).

import Foundation
import Testing

@Suite("Ken Burns frames through carouseld render", .enabled(if: Tools.imageMagickAvailable, Comment(rawValue: imageMagickMissing)))
struct KenBurnsRenderTests {
    static let picture = FaceCropTests.fixtures + "/faces-mwg.jpg"

    func frame(at seconds: Double, rotation: String, scratch: Scratch) throws -> RGBImage {
        let folder = scratch.file("images")
        if !FileManager.default.fileExists(atPath: folder) {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Self.picture, toPath: folder + "/faces-mwg.jpg")
        }
        let ini = try scratch.write("c.ini", """
            [images]
            path = \(folder)
            [display]
            rotation = \(rotation)
            [autoplay]
            interval = 4
            [indicator]
            enabled = false
            [ken_burns]
            enabled = true
            move = zoom_in
            """)
        let turned = rotation == "90" || rotation == "270"
        let out = scratch.file("t\(seconds)-r\(rotation).png")
        let run = try Tools.run(try Tools.requireCarouseld(), ["render", "--config", ini, "--size", turned ? "160x320" : "320x160",
                                                               "--ken-burns", "\(seconds)", "--out", out])
        try #require(run.status == 0, "carouseld render: \(run.stderr)")
        return try RGBImage(file: out)
    }

    /// ImageMagick: the picture on the 320x160 box, magnified `scale` times
    /// about the box point (cx, cy) (fractions), turned as the panel is.
    func reference(scale: Double, cx: Double, cy: Double, rotation: String) throws -> RGBImage {
        try RGBImage(ppm: [UInt8](try Tools.magick([
            Self.picture, "-filter", "Triangle", "-resize", "320x160!", "-virtual-pixel", "edge",
            "-define", "distort:viewport=320x160+0+0",
            "-distort", "SRT", "\(cx * 320),\(cy * 160) \(scale) 0 160,80", "+repage",
            "-rotate", rotation, "-depth", "8", "ppm:-",
        ])))
    }

    @Test("start, half-way and end of the rest, every rotation", arguments: ["0", "90", "180", "270"])
    func framesAtChosenTimes(rotation: String) throws {
        let scratch = try Scratch("ken-burns")
        let end = (scale: 1.3, cx: 0.5 / 1.3, cy: 0.5)
        let cases: [(seconds: Double, scale: Double, cx: Double, cy: Double)] = [
            (0, 1, 0.5, 0.5),
            (2, 1.3.squareRoot(), 0.5 + (end.cx - 0.5) / 2, 0.5),
            (4, end.scale, end.cx, end.cy),
        ]
        var frames: [RGBImage] = []
        for c in cases {
            let actual = try frame(at: c.seconds, rotation: rotation, scratch: scratch)
            let expected = try reference(scale: c.scale, cx: c.cx, cy: c.cy, rotation: rotation)
            let psnr = actual.psnr(against: expected)
            if psnr < minimumPSNR { scratch.keep() }
            #expect(psnr >= minimumPSNR, "t = \(c.seconds) s: PSNR \(psnr) (\(scratch.path))")
            frames.append(actual)
        }
        // The move shows: each frame differs from the one before.
        #expect(frames[0].psnr(against: frames[1]) < 30 && frames[1].psnr(against: frames[2]) < 30)
    }

    @Test func refusedWithAZoomOrACrossfade() throws {
        let scratch = try Scratch("ken-burns-refused")
        let ini = try scratch.write("c.ini", "[images]\npath = \(scratch.path)\n")
        for extra in [["--zoom", "2,0,0"], ["--crossfade", "0.5"], []] {
            let seconds = extra.isEmpty ? "-1" : "1"
            let run = try Tools.run(try Tools.requireCarouseld(), ["render", "--config", ini, "--size", "320x160",
                                                                   "--ken-burns", seconds, "--out", scratch.file("x.png")] + extra)
            #expect(run.status != 0 && run.stderr.contains("--ken-burns"), "\(extra): \(run.stderr)")
        }
    }
}
