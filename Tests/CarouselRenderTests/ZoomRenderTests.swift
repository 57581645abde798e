import Foundation
import Testing
import CarouselCore
import CarouselDisplay
import CarouselImaging
@testable import CarouselRender

/// A zoomed picture on screen (issue 13): drawn scaled and cropped to what
/// the zoom shows, from a decode at the resolution it needs, in any
/// rotation, and written into the display's buffers only where it changed.
@Suite("zoom: the zoomed picture on screen")
struct ZoomRenderTests {
    typealias Setup = ScreenWriterTests.Setup

    static func channelsClose(_ a: UInt32, _ b: UInt32, _ tolerance: Int) -> Bool {
        for shift in [0, 8, 16] as [UInt32] where abs(Int((a >> shift) & 0xFF) - Int((b >> shift) & 0xFF)) > tolerance {
            return false
        }
        return true
    }

    /// A picture whose channels change smoothly (a bilinear sample is then
    /// the same whichever way the frame is turned, within rounding).
    static func smoothPictures(_ compositor: Compositor, count: Int) throws -> [DecodedImage] {
        let size = compositor.itemPixelSize
        return try (0..<max(count, 1)).map { i in
            try DecodedImage(width: size.width, height: size.height, format: .xrgb8888) { raw, stride in
                for y in 0..<size.height {
                    let row = (raw.baseAddress! + y * stride).assumingMemoryBound(to: UInt32.self)
                    for x in 0..<size.width {
                        let r = UInt32(x * 255 / max(size.width - 1, 1)), g = UInt32(y * 255 / max(size.height - 1, 1))
                        row[x] = 0xFF00_0000 | r << 16 | g << 8 | UInt32(40 * i)
                    }
                }
            }
        }
    }

    @Test("a zoomed frame in every rotation is the upright zoomed frame turned (100 random layouts and zooms)")
    func everyRotation() throws {
        var r = ScreenWriterTests.Random(state: 23)
        for round in 0..<100 {
            var setup = Setup.random(&r)
            setup.count = r.int(1...4)
            setup.style.indicator.enabled = false
            let upright = setup.compositor(rotation: .none)
            let turned = setup.compositor(rotation: setup.rotation)
            let pictures = try Self.smoothPictures(upright, count: setup.count)
            let panelPictures = try pictures.map { try $0.turned(setup.rotation) }
            let offset = Double(r.int(0...setup.count - 1))
            let item = upright.geometry.item(at: Point(x: upright.geometry.viewport.width / 2,
                                                       y: upright.geometry.viewport.height / 2),
                                             offset: offset, count: setup.count, wrap: setup.settings.wrap) ?? 0
            // Quarter pixels: sample positions that fixed point holds exactly.
            let view = ZoomView(item: item, scale: Double(r.int(4...14)) / 4,
                                translation: Point(x: -Double(r.int(0...80)) / 4, y: -Double(r.int(0...60)) / 4))
            var logicalScene = CarouselRender.Scene(), panelScene = CarouselRender.Scene()
            upright.layOut(&logicalScene, offset: offset, count: setup.count, wrap: setup.settings.wrap, page: 0,
                           pageCount: setup.count, zoom: ZoomLayer(view: view)) { pictures[$0] }
            turned.layOut(&panelScene, offset: offset, count: setup.count, wrap: setup.settings.wrap, page: 0,
                          pageCount: setup.count, zoom: ZoomLayer(view: view)) { panelPictures[$0] }
            #expect(logicalScene.spans.contains { $0.zoom != nil }, "round \(round): nothing zoomed")
            let logical = ScreenWriterTests.frame(upright, logicalScene)
            let expected = Frame(width: setup.panel.width, height: setup.panel.height)
            Scanout.write(logical, rotation: setup.rotation, to: UnsafeMutableRawPointer(expected.pixels),
                          stride: expected.stride, panelWidth: setup.panel.width, panelHeight: setup.panel.height)
            let actual = ScreenWriterTests.frame(turned, panelScene)
            var wrong = 0
            for y in 0..<expected.height {
                for x in 0..<expected.width where !Self.channelsClose(expected.row(y)[x], actual.row(y)[x], 3) { wrong += 1 }
            }
            #expect(wrong == 0, "round \(round): rotation \(setup.rotation.rawValue), \(setup.panel), \(view): \(wrong) pixels differ")
            if wrong > 0 { return }
        }
    }

    @Test("zoomed frames written into the same buffers show what the frame written whole shows; a still zoom writes nothing")
    func damage() throws {
        var r = ScreenWriterTests.Random(state: 5)
        for run in 0..<120 {
            var setup = Setup.random(&r)
            setup.count = r.int(1...5)
            let session = try ScreenWriterTests.Session(setup, room: r.bool())
            var offset = Double(r.int(0...setup.count - 1))
            var view: ZoomView? = nil
            for step in 0..<10 {
                switch r.int(0...4) {
                case 0:
                    view = nil
                case 1, 2:
                    let item = Int(offset.rounded()) % setup.count
                    view = ZoomView(item: (item + setup.count) % setup.count, scale: r.double(0.7...4),
                                    translation: Point(x: -r.double(0...60), y: -r.double(0...40)))
                default:
                    offset += r.double(-0.3...0.3)   // a zoomed picture handed over to paging moves too
                }
                let zoom = view.map { ZoomLayer(view: $0) }
                session.compositor.layOut(&session.writer.scene, offset: offset, count: setup.count,
                                          wrap: setup.settings.wrap, page: 0, pageCount: setup.count, zoom: zoom) {
                    session.pictures[$0]
                }
                let buffer = try #require(session.display.acquire())
                try session.display.present(buffer, window: session.writer.draw(into: buffer))
                let whole = ScreenWriterTests.frame(session.compositor, session.writer.scene)
                var wrong = 0
                for y in 0..<whole.height {
                    for x in 0..<whole.width where session.display.pixel(x: x, y: y) != whole.row(y)[x] | 0xFF00_0000 {
                        wrong += 1
                    }
                }
                #expect(wrong == 0, "run \(run) step \(step): \(String(describing: view)) at \(offset): \(wrong) pixels wrong")
                if wrong > 0 { return }
            }
            // The same zoomed scene again, into both buffers: the second time each writes nothing.
            view = ZoomView(item: Int(offset.rounded()).quotientAndRemainder(dividingBy: setup.count).remainder
                                .advanced(by: setup.count) % setup.count,
                            scale: 2, translation: Point(x: -3, y: -2))
            for pass in 0..<4 {
                session.compositor.layOut(&session.writer.scene, offset: offset, count: setup.count,
                                          wrap: setup.settings.wrap, page: 0, pageCount: setup.count,
                                          zoom: ZoomLayer(view: view!)) { session.pictures[$0] }
                let buffer = try #require(session.display.acquire())
                try session.display.present(buffer, window: session.writer.draw(into: buffer))
                if pass >= 2 { #expect(session.writer.pixelsWritten == 0, "run \(run): a still zoom wrote pixels") }
            }
        }
    }

    /// `convert`'s independent picture of what a zoom shows: the visible
    /// part of the file cropped and resized to the screen.
    static func reference(_ source: String, crop: String, size: PixelSize, rotate: Int, into scratch: Scratch) throws -> RGBImage {
        let out = scratch.file("reference.png")
        _ = try Tools.magick([source, "-crop", crop, "+repage", "-filter", "Triangle", "-resize",
                              "\(size.width)x\(size.height)!", "-rotate", "\(rotate)", out])
        return try RGBImage(file: out)
    }

    struct ReferenceCase: CustomStringConvertible, Sendable {
        var picture: PixelSize
        var scale: Double
        var translation: Point
        var crop: String
        var rotation: Rotation
        var description: String { "\(picture.width)x\(picture.height) at \(scale) \(translation) \(rotation)" }
    }

    /// A 320x200 screen. A 640x400 file has the pixels a zoom of 2.5 needs
    /// (decoded for the zoom at twice the screen); a 320x200 file has none
    /// beyond the screen (scaled up).
    static let referenceCases: [ReferenceCase] = [
        // u from (100, 40) to (228, 120), file pixels twice that.
        ReferenceCase(picture: PixelSize(width: 640, height: 400), scale: 2.5, translation: Point(x: -250, y: -100),
                      crop: "256x160+200+80", rotation: .none),
        ReferenceCase(picture: PixelSize(width: 640, height: 400), scale: 2.5, translation: Point(x: -250, y: -100),
                      crop: "256x160+200+80", rotation: .clockwise90),
        ReferenceCase(picture: PixelSize(width: 640, height: 400), scale: 2, translation: Point(x: -100, y: -50),
                      crop: "320x200+100+50", rotation: .upsideDown),
        // u from (80, 50) to (240, 150) of the file itself.
        ReferenceCase(picture: PixelSize(width: 320, height: 200), scale: 2, translation: Point(x: -160, y: -100),
                      crop: "160x100+80+50", rotation: .none),
    ]

    @Test("the writer keeps no zoom picture between frames: it is let go with the zoom",
          arguments: [Rotation.none, .clockwise90])
    func zoomPictureLetGo(rotation: Rotation) throws {
        var setup = Setup()
        setup.rotation = rotation
        setup.panel = PixelSize(width: 64, height: 40)
        setup.count = 3
        let session = try ScreenWriterTests.Session(setup, room: false)
        weak var letGo: DecodedImage?
        do {
            // The sharper decode a zoom draws from (the largest pictures the carousel holds).
            let size = session.compositor.itemPixelSize
            let sharp = try DecodedImage(width: size.width * 2, height: size.height * 2, format: .xrgb8888) { _, _ in }
            letGo = sharp
            let zoom = ZoomLayer(view: ZoomView(item: 0, scale: 2, translation: Point(x: -5, y: -3)), picture: sharp)
            session.compositor.layOut(&session.writer.scene, offset: 0, count: 3, wrap: true, page: 0, pageCount: 3,
                                      zoom: zoom) { session.pictures[$0] }
            #expect(session.writer.scene.spans.contains { $0.zoom?.picture === sharp })
            let buffer = try #require(session.display.acquire())
            try session.display.present(buffer, window: session.writer.draw(into: buffer))
            // The zoom ends; no frame is drawn yet (at rest there may be none for hours).
            session.compositor.layOut(&session.writer.scene, offset: 0, count: 3, wrap: true, page: 0,
                                      pageCount: 3) { session.pictures[$0] }
        }
        #expect(letGo == nil, "the writer still holds the zoom's picture")
    }

    @Test("a zoomed frame against ImageMagick's crop and resize of the file", arguments: referenceCases)
    func againstImageMagick(_ c: ReferenceCase) throws {
        guard Tools.imageMagickAvailable else {
            Issue.record(Comment(rawValue: imageMagickMissing))
            return
        }
        let scratch = try Scratch("zoom")
        // Structure at every scale, so that a crop a few pixels off shows.
        let source = scratch.file("plasma.png")
        _ = try Tools.magick(["-size", "\(c.picture.width)x\(c.picture.height)", "-seed", "13", "plasma:red-blue",
                              "-blur", "0x1", source])
        let turned = c.rotation == .clockwise90 || c.rotation == .clockwise270
        let panel = turned ? PixelSize(width: 200, height: 320) : PixelSize(width: 320, height: 200)
        var style = RenderStyle()
        style.indicator.enabled = false
        let painter = FramePainter(panel: panel, rotation: c.rotation, settings: CarouselSettings(), style: style,
                                   pages: [PageKey(source)], maxPixels: 64_000_000, budgetBytes: 64 << 20)
        let (frame, failures) = painter.paint(offset: 0, count: 1, page: 0, pageCount: 1,
                                              zoom: ZoomView(item: 0, scale: c.scale, translation: c.translation))
        #expect(failures.isEmpty)
        let hiRes = c.picture.width > 320
        #expect((painter.cache.zoomImage(for: PageKey(source)) != nil) == hiRes, "a decode for the zoom only with pixels to gain")
        try frame.writePNG(to: scratch.file("actual.png"))
        let actual = try RGBImage(file: scratch.file("actual.png"))
        let expected = try Self.reference(source, crop: c.crop, size: PixelSize(width: 320, height: 200),
                                          rotate: c.rotation.rawValue, into: scratch)
        let psnr = actual.psnr(against: expected)
        if psnr < 34 { scratch.keep() }
        #expect(psnr >= 34, "\(c): PSNR \(psnr) dB against the reference (kept in \(scratch.path))")
        // And not by luck: the unzoomed frame is far from it.
        let (plain, _) = painter.paint(offset: 0, count: 1, page: 0, pageCount: 1)
        try plain.writePNG(to: scratch.file("plain.png"))
        #expect(try RGBImage(file: scratch.file("plain.png")).psnr(against: expected) < 25)
    }
}
