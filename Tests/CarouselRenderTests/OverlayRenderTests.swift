// Text over pictures in the frame path: the clock (a stamp that stays put
// on the screen) through the writer's damage tracking and window slides,
// its blending against ImageMagick's composite, and a caption drawn into its
// picture by the decode cache, against ImageMagick too.

import CarouselCore
import CarouselDisplay
import CarouselImaging
import CarouselText
import Foundation
import Testing
@testable import CarouselRender

/// A translucent stamp of `size` whose pixels differ per `seed` (a new minute).
func testStamp(_ size: PixelSize, seed: Int) -> DecodedImage {
    try! DecodedImage(width: size.width, height: size.height, format: .argb8888Premultiplied) { raw, stride in
        for y in 0..<size.height {
            let row = (raw.baseAddress! + y * stride).assumingMemoryBound(to: UInt32.self)
            for x in 0..<size.width {
                let a = UInt32((x * 37 + y * 11 + seed * 53) % 256)
                let c = UInt32((x * 5 + seed * 29) % 256) * a / 255
                row[x] = a << 24 | c << 16 | (a / 2) << 8 | (a / 3)
            }
        }
    }
}

@Suite("The clock in the frame path") struct ClockStampTests {
    typealias Session = ScreenWriterTests.Session

    @Test("frames with a clock that changes and moves always show the whole frame (200 runs)", arguments: [false, true])
    func incrementalFramesWithAClockShowTheWholeFrame(room: Bool) throws {
        var r = ScreenWriterTests.Random(state: room ? 11 : 5)
        for run in 0..<200 {
            var setup = ScreenWriterTests.Setup.random(&r)
            setup.count = r.int(1...6)
            let session = try Session(setup, room: room)
            var offset = Double(r.int(0...setup.count - 1))
            var seed = 0
            func newStamp() -> SceneStamp {
                seed += 1
                let size = PixelSize(width: r.int(1...setup.panel.width), height: r.int(1...max(1, setup.panel.height / 2)))
                return SceneStamp(image: testStamp(size, seed: seed), x: r.int(-2...setup.panel.width - size.width),
                                  y: r.int(0...setup.panel.height - size.height))
            }
            session.writer.scene.stamp = newStamp()
            // Pushed text in half the runs: a second stamp, the clock's mirrored
            // (beside it, or over it where they meet), drawn without touching
            // the random sequence, so that the runs stay those without it.
            func mirrored() {
                guard run % 2 == 0, let clock = session.writer.scene.stamp else { return }
                let w = clock.image.width, h = clock.image.height
                session.writer.scene.textStamp = SceneStamp(image: testStamp(clock.image.size, seed: seed + 1000),
                                                            x: setup.panel.width - clock.x - w, y: setup.panel.height - clock.y - h)
            }
            mirrored()
            for step in 0..<12 {
                switch r.int(0...6) {
                case 0, 1:
                    let travel = r.bool() ? 1 : -1
                    offset += Double(travel) * r.double(0.01...0.45)
                    let wrong = try session.frame(offset, page: r.int(0...setup.count - 1), moving: true, travel: travel)
                    #expect(wrong == 0, "run \(run) step \(step): slide: \(wrong) pixels wrong")
                    if wrong > 0 { return }
                case 2:  // a new minute, maybe wider, maybe elsewhere (and a new text)
                    session.writer.scene.stamp = newStamp()
                    mirrored()
                    fallthrough
                case 3:  // the clock turned off (a reload), and the text with it
                    if r.int(0...5) == 0 { session.writer.scene.stamp = nil; session.writer.scene.textStamp = nil }
                    fallthrough
                default:
                    if r.bool() { offset = offset.rounded() }
                    let wrong = try session.frame(offset, page: r.int(0...setup.count - 1), moving: false)
                    #expect(wrong == 0, "run \(run) step \(step): rest: \(wrong) pixels wrong")
                    if wrong > 0 { return }
                }
            }
        }
    }

    @Test("at rest a new minute writes the clock's rectangle only; during a slide with room, the clock and the dots",
          arguments: Rotation.allCases)
    func aNewMinuteWritesOnlyTheClock(rotation: Rotation) throws {
        let session = try Session(ScreenWriterTests.fullScreen(rotation: rotation), room: true)
        let size = rotation == .clockwise90 || rotation == .clockwise270 ? PixelSize(width: 20, height: 60) : PixelSize(width: 60, height: 20)
        let corner = (x: session.compositor.panel.width - size.width - 8, y: 8)
        session.writer.scene.stamp = SceneStamp(image: testStamp(size, seed: 1), x: corner.x, y: corner.y)
        for _ in 0..<2 { try session.frame(0, page: 0, moving: false) }
        for minute in 2...4 {
            session.writer.scene.stamp = SceneStamp(image: testStamp(size, seed: minute), x: corner.x, y: corner.y)
            #expect(try session.frame(0, page: 0, moving: false) == 0)
            #expect(session.writer.pixelsWritten == size.width * size.height, "minute \(minute)")
        }
        // A slide: the window moves, the clock stays where it is on the screen.
        var written: [Int] = []
        for step in 1...20 {
            let offset = Double(step) / 20
            #expect(try session.frame(offset, page: offset < 0.5 ? 0 : 1, moving: step < 20) == 0)
            written.append(session.writer.pixelsWritten)
        }
        #expect(written[2...].allSatisfy { $0 <= 2 * 120 * 14 + 2 * size.width * size.height }, "\(written)")
        #expect(session.display.window != .zero)
    }
}

@Suite("Text blended over pictures against ImageMagick", .enabled(if: Tools.imageMagickAvailable, Comment(rawValue: imageMagickMissing)))
struct OverlayReferenceTests {
    /// A premultiplied sprite as straight RGBA bytes, what ImageMagick reads as `rgba:`.
    func straightRGBA(_ sprite: DecodedImage) -> [UInt8] {
        var out: [UInt8] = []
        for y in 0..<sprite.height {
            for x in 0..<sprite.width {
                let p = sprite.pixel(x: x, y: y), a = Int(p >> 24)
                func c(_ shift: UInt32) -> UInt8 {
                    a == 0 ? 0 : UInt8(min(255, (Int((p >> shift) & 0xFF) * 255 + a / 2) / a))
                }
                out += [c(16), c(8), c(0), UInt8(a)]
            }
        }
        return out
    }

    /// ImageMagick's composite of `sprite` over `base` at (x, y), as RGB.
    func composite(base: String, sprite: DecodedImage, x: Int, y: Int, in scratch: Scratch) throws -> RGBImage {
        let raw = try scratch.write("sprite.rgba", bytes: straightRGBA(sprite))
        let out = scratch.file("expected.png")
        try Tools.magick([base, "(", "-size", "\(sprite.width)x\(sprite.height)", "-depth", "8", "rgba:\(raw)", ")",
                          "-geometry", String(format: "%+d%+d", x, y), "-composite", out])
        return try RGBImage(file: out)
    }

    @Test func theClockOverAFrameIsImageMagicksComposite() throws {
        let scratch = try Scratch("clock")
        let setup = ScreenWriterTests.fullScreen()
        let session = try Session(setup, room: false)
        try session.frame(0.3, page: 0, moving: false)
        let plain = ScreenWriterTests.frame(session.compositor, session.writer.scene)
        try plain.writePNG(to: scratch.file("plain.png"))
        // A real clock sprite: text, shadow, premultiplied.
        let renderer = try TextRenderer(pattern: "DejaVu Sans", pixelSize: 24)
        let sprite = try TextSprite.make(try #require(renderer.render(lines: ["10:42"])), style: TextStyle(), size: 24)
        session.writer.scene.stamp = SceneStamp(image: sprite, x: 230, y: 12)
        #expect(try session.frame(0.3, page: 0, moving: false) == 0)
        let ours = ScreenWriterTests.frame(session.compositor, session.writer.scene)
        try ours.writePNG(to: scratch.file("ours.png"))
        let expected = try composite(base: scratch.file("plain.png"), sprite: sprite, x: 230, y: 12, in: scratch)
        let actual = try RGBImage(file: scratch.file("ours.png"))
        var worst = 0
        for y in 0..<actual.height { for x in 0..<actual.width { worst = max(worst, actual.pixel(x, y).distance(to: expected.pixel(x, y))) } }
        #expect(worst <= 3, "largest channel difference \(worst)")
        #expect(try actual.differingPixels(from: RGBImage(file: scratch.file("plain.png"))) > 100, "the clock is drawn")
        if worst > 3 { scratch.keep() }
    }

    typealias Session = ScreenWriterTests.Session

    @Test(arguments: [Rotation.none, .clockwise90])
    func aCaptionIsDrawnIntoItsPictureUprightAtItsCorner(rotation: Rotation) throws {
        let scratch = try Scratch("caption")
        try Tools.magick(["-size", "160x100", "gradient:#336699-#99CC33", scratch.file("Lake Constance.png")])
        let picture = scratch.file("Lake Constance.png")
        let size = PixelSize(width: 160, height: 100)
        var settings = ItemCache.Settings(itemSize: size, fit: .contain, background: .black, maxPixels: 1_000_000,
                                          budgetBytes: 1 << 20)
        let plainImage = try ItemCache.prepare(PageKey(picture), settings: settings)
        let captioning = Captioning(kind: .name, position: .bottomRight, style: TextStyle(), size: 14)
        settings.caption = captioning
        settings.rotation = rotation
        let captioned = try ItemCache.prepare(PageKey(picture), settings: settings)
        // Turned back upright, the captioned picture is the plain one with the sprite composited at its corner.
        let upright = rotation == .none ? captioned : try captioned.turned(.clockwise270)
        let placed = try #require(Captioner.sprite(for: picture, in: size, captioning))
        #expect(placed.x + placed.sprite.width > 140 && placed.y + placed.sprite.height > 85, "bottom-right")
        func png(_ image: DecodedImage, _ name: String) throws -> String {
            let f = Frame(width: image.width, height: image.height)
            for y in 0..<image.height { for x in 0..<image.width { f.row(y)[x] = image.pixel(x: x, y: y) } }
            try f.writePNG(to: scratch.file(name))
            return scratch.file(name)
        }
        let expected = try composite(base: try png(plainImage, "plain.png"), sprite: placed.sprite, x: placed.x, y: placed.y,
                                     in: scratch)
        let actual = try RGBImage(file: try png(upright, "ours.png"))
        var worst = 0
        for y in 0..<actual.height { for x in 0..<actual.width { worst = max(worst, actual.pixel(x, y).distance(to: expected.pixel(x, y))) } }
        #expect(worst <= 3, "largest channel difference \(worst)")
        #expect(try actual.differingPixels(from: RGBImage(file: scratch.file("plain.png"))) > 50, "the caption is drawn")
    }
}

@Suite("carouseld render draws [overlay]", .enabled(if: Tools.imageMagickAvailable, Comment(rawValue: imageMagickMissing)))
struct RenderOverlayTests {
    func render(_ scratch: Scratch, overlay: String, extra: [String] = []) throws -> (status: Int32, image: RGBImage?, stderr: String) {
        let binary = try Tools.requireCarouseld()
        let folder = scratch.file("images")
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: folder + "/beach.png") {
            try Tools.magick(["-size", "320x200", "xc:#406080", folder + "/beach.png"])
        }
        let ini = try scratch.write("c.ini", "[images]\npath = \(folder)\n[indicator]\nenabled = false\n[overlay]\n" + overlay)
        let out = scratch.file("out-\(UUID().uuidString).png")
        let run = try Tools.run(binary, ["render", "--config", ini, "--size", "320x200", "--out", out] + extra)
        return (run.status, run.status == 0 ? try RGBImage(file: out) : nil, run.stderr)
    }

    func box(_ a: RGBImage, _ b: RGBImage) -> (x0: Int, y0: Int, x1: Int, y1: Int)? {
        var r: (x0: Int, y0: Int, x1: Int, y1: Int)?
        for y in 0..<a.height {
            for x in 0..<a.width where a.pixel(x, y) != b.pixel(x, y) {
                r = r.map { (min($0.x0, x), min($0.y0, y), max($0.x1, x), max($0.y1, y)) } ?? (x, y, x, y)
            }
        }
        return r
    }

    @Test func theCaptionAndTheClockAtItsTime() throws {
        let scratch = try Scratch("render-overlay")
        let plain = try #require(try render(scratch, overlay: "").image)
        let captioned = try #require(try render(scratch, overlay: "caption = name\nsize = 16\n").image)
        let c = try #require(box(plain, captioned), "the caption is drawn")
        #expect(c.x0 < 30 && c.y1 > 170, "bottom-left: \(c)")
        let before = try #require(try render(scratch, overlay: "clock = HH:MM\nsize = 16\n", extra: ["--clock-time", "09:59"]).image)
        let after = try #require(try render(scratch, overlay: "clock = HH:MM\nsize = 16\n", extra: ["--clock-time", "10:00"]).image)
        let t = try #require(box(before, after), "the time shows")
        #expect(t.x1 > 280 && t.y0 < 30 && t.x0 > 200, "top-right: \(t)")
        let bad = try render(scratch, overlay: "clock = HH:MM\n", extra: ["--clock-time", "25:00"])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("--clock-time must be HH:MM"))
    }
}

extension RenderOverlayTests {
    @Test func theTextFileIsDrawnAtItsPositionAndAnUnshownFileIsOneLine() throws {
        let scratch = try Scratch("render-text")
        let plain = try #require(try render(scratch, overlay: "size = 16\n").image)
        let file = try scratch.write("weather.txt", "Sunny 21 °C\nRain from 16:00\n")
        let shown = try render(scratch, overlay: "size = 16\ntext_file = \(file)\ntext_position = bottom-right\n")
        let image = try #require(shown.image, "\(shown.stderr)")
        let b = try #require(box(plain, image), "the text is drawn")
        // Two lines of 16 px in the bottom-right corner, right-aligned, within half the width.
        #expect(b.x0 >= 160 && b.x1 > 290 && b.y0 > 120 && b.y1 > 180, "\(b)")
        #expect(b.y1 - b.y0 > 30, "two lines: \(b)")
        // The default corner is top-left.
        let topLeft = try #require(try render(scratch, overlay: "size = 16\ntext_file = \(file)\n").image)
        let t = try #require(box(plain, topLeft))
        #expect(t.x0 < 30 && t.y0 < 30 && t.x1 < 160, "\(t)")
        // A binary file: one warning line, and the frame without text.
        let binary = try scratch.write("binary.txt", "PNG\u{0}binary")
        let refused = try render(scratch, overlay: "size = 16\ntext_file = \(binary)\n")
        #expect(refused.status == 0)
        #expect(refused.stderr.split(separator: "\n").filter { $0.contains("holds a NUL byte") }.count == 1, "\(refused.stderr)")
        #expect(box(plain, try #require(refused.image)) == nil)
    }
}

/// A zoom's sharper decode replaces the screen's picture enlarged while the
/// zoom stays: it must be that picture, fill and caption included, only with
/// more pixels (it was drawn with the default fill and no caption).
@Suite("A zoom's decode keeps the picture's fill and caption", .enabled(if: Tools.imageMagickAvailable, Comment(rawValue: imageMagickMissing)))
struct ZoomDecodeLooksTests {
    @Test func theZoomDecodeShrunkIsTheScreenPicture() throws {
        let scratch = try Scratch("zoomlooks")
        let picture = scratch.file("Lake Constance.png")
        try Tools.magick(["-size", "240x480", "gradient:#C03010-#1060C0", picture])
        let item = PixelSize(width: 160, height: 100)
        var settings = ItemCache.Settings(itemSize: item, fit: .blur, background: .black, maxPixels: 1_000_000,
                                          budgetBytes: 8 << 20, blur: BlurStyle(radius: 6, dim: 0.6))
        settings.caption = Captioning(kind: .name, position: .bottomRight, style: TextStyle(), size: 12)
        let screen = try ItemCache.prepare(PageKey(picture), settings: settings)
        let factor = 3
        let zoomed = try #require(try ItemCache.prepareZoom(PageKey(picture), settings: settings, factor: Double(factor)))
        try #require(zoomed.width == item.width * factor && zoomed.height == item.height * factor)
        // The zoom decode averaged back down to the screen's size, per channel.
        func shrunk(_ x: Int, _ y: Int, _ shift: UInt32) -> Int {
            var sum = 0
            for dy in 0..<factor { for dx in 0..<factor { sum += Int(zoomed.pixel(x: x * factor + dx, y: y * factor + dy) >> shift & 0xFF) } }
            return sum / (factor * factor)
        }
        func difference(_ rect: PixelRect) -> Double {
            var total = 0
            for y in rect.y..<(rect.y + rect.height) {
                for x in rect.x..<(rect.x + rect.width) {
                    for shift: UInt32 in [0, 8, 16] { total += abs(shrunk(x, y, shift) - Int(screen.pixel(x: x, y: y) >> shift & 0xFF)) }
                }
            }
            return Double(total) / Double(rect.width * rect.height * 3)
        }
        // The fill on both sides of the contained picture.
        let fill = difference(PixelRect(x: 0, y: 0, width: 50, height: 100))
        #expect(fill <= 3, "mean channel difference in the fill: \(fill)")
        // The caption in the same corner: text drawn at 3 times the size is
        // hinted differently, so its ink is compared, not its pixels. White
        // text over a dark fill and a red-to-blue picture: the ink is where
        // every channel is light.
        let placed = try #require(Captioner.sprite(for: picture, in: item, settings.caption!))
        func ink(_ channel: (Int, Int, UInt32) -> Int) -> Int {
            var count = 0
            for y in placed.y..<(placed.y + placed.sprite.height) {
                for x in placed.x..<(placed.x + placed.sprite.width) where [0, 8, 16].allSatisfy({ channel(x, y, $0) > 170 }) {
                    count += 1
                }
            }
            return count
        }
        let screenInk = ink { x, y, shift in Int(screen.pixel(x: x, y: y) >> shift & 0xFF) }
        let zoomInk = ink(shrunk)
        #expect(screenInk > 50, "the screen's picture has its caption (\(screenInk) light pixels)")
        #expect(Double(zoomInk) >= 0.6 * Double(screenInk) && Double(zoomInk) <= 1.6 * Double(screenInk),
                "light pixels of the caption: \(zoomInk) in the zoom decode shrunk, \(screenInk) on the screen's picture")
    }
}
