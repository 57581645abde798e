import Synchronization
import Testing
import CarouselCore
import CarouselDisplay
@testable import CarouselImaging
@testable import CarouselRender
import CarouselText

/// The screen writer lays out pictures kept at 3 bytes a pixel (issue 31)
/// exactly as it lays out the same pictures at 4: slides, rests, crossfades
/// (each side packed or not) and zooms, in every rotation, the dots and a
/// clock over them.
@Suite("ScreenWriter: pictures kept at 3 bytes a pixel")
struct PackedPictureWriterTests {
    typealias Random = ScreenWriterTests.Random

    /// `image`'s pixels in a picture of their own, packed.
    static func packedCopy(_ image: DecodedImage) throws -> DecodedImage {
        try DecodedImage(width: image.width, height: image.height, format: .xrgb8888) { raw, stride in
            image.withUnsafeBytes { from in
                for y in 0..<image.height {
                    (raw.baseAddress! + y * stride).copyMemory(from: from.baseAddress! + y * image.stride,
                                                               byteCount: image.width * 4)
                }
            }
        }.packed()
    }

    static func differences(_ a: Frame, _ b: Frame) -> Int {
        var n = 0
        for y in 0..<a.height {
            for x in 0..<a.width where a.row(y)[x] != b.row(y)[x] { n += 1 }
        }
        return n
    }

    @Test("frames, crossfades and zooms from packed pictures equal those from the same pictures at 4 bytes (150 runs)")
    func packedEqualsWide() throws {
        var r = Random(state: 31)
        for run in 0..<150 {
            var setup = ScreenWriterTests.Setup.random(&r)
            setup.count = r.int(2...5)
            let compositor = setup.compositor(rotation: setup.rotation)
            let wide = try setup.pictures(setup.compositor(rotation: .none)).map { try $0.turned(setup.rotation) }
            let packed = try wide.map(Self.packedCopy)
            #expect(packed.allSatisfy { $0.format == .rgb888 })
            let stamp: SceneStamp? = r.bool()
                ? SceneStamp(image: testStamp(PixelSize(width: r.int(1...setup.panel.width), height: r.int(1...max(1, setup.panel.height / 2))),
                                              seed: run), x: 0, y: 0)
                : nil
            let offset = Double(r.int(0...setup.count - 1)) + (r.bool() ? r.double(-0.45...0.45) : 0)
            let to = Double(r.int(-1...setup.count))
            let fade = r.double(0.0...1.0)
            let page = r.int(0...setup.count - 1)
            // Which pictures of the crossfade's incoming scene are packed: all, none or some.
            let mix = r.int(0...2)
            let item = compositor.geometry.item(at: Point(x: compositor.geometry.viewport.width / 2,
                                                          y: compositor.geometry.viewport.height / 2),
                                                offset: offset.rounded(), count: setup.count, wrap: setup.settings.wrap) ?? 0
            let zoom = ZoomView(item: item, scale: Double(r.int(3...14)) / 4,
                                translation: Point(x: -Double(r.int(0...40)) / 4, y: -Double(r.int(0...30)) / 4))
            /// The frame with the pictures `pictures(i)`: a slide frame, a crossfade or a zoom.
            func frame(_ kind: Int, _ pictures: @escaping (Int) -> DecodedImage, _ incoming: @escaping (Int) -> DecodedImage) -> Frame {
                let writer = ScreenWriter(compositor: compositor)
                let f = Frame(width: setup.panel.width, height: setup.panel.height, color: 0xDEAD_BEEF)
                switch kind {
                case 0:
                    compositor.layOut(&writer.scene, offset: offset, count: setup.count, wrap: setup.settings.wrap,
                                      page: page, pageCount: setup.count, image: pictures)
                    writer.scene.stamp = stamp
                    writer.render(writer.scene, into: f)
                case 1:
                    compositor.layOut(&writer.scene, offset: offset.rounded(), count: setup.count, wrap: setup.settings.wrap,
                                      page: page, pageCount: setup.count, image: pictures)
                    compositor.layOut(&writer.incoming, offset: to, count: setup.count, wrap: setup.settings.wrap,
                                      page: page, pageCount: setup.count, image: incoming)
                    writer.scene.stamp = stamp
                    writer.fade = fade
                    let target = ScreenWriter.Target(pixels: UnsafeMutableRawPointer(f.pixels), stride: f.stride,
                                                     panel: compositor.panel, extent: compositor.panel, index: -1,
                                                     generation: 0, axis: writer.axis)
                    var record = ScreenWriter.Record(target)
                    _ = writer.write(writer.scene, into: target, record: &record)
                default:
                    compositor.layOut(&writer.scene, offset: offset.rounded(), count: setup.count, wrap: setup.settings.wrap,
                                      page: page, pageCount: setup.count, zoom: ZoomLayer(view: zoom), image: pictures)
                    writer.render(writer.scene, into: f)
                }
                return f
            }
            for kind in 0..<3 {
                let a = frame(kind, { wide[$0] }, { wide[$0] })
                let b = frame(kind, { packed[$0] }, { mix == 0 ? packed[$0] : mix == 1 ? wide[$0] : ($0 % 2 == 0 ? packed[$0] : wide[$0]) })
                let wrong = Self.differences(a, b)
                #expect(wrong == 0, "run \(run), \(["slide", "crossfade", "zoom"][kind]), rotation \(setup.rotation): \(wrong) pixels differ")
                if wrong > 0 { return }
            }
        }
    }

    @Test("a zoom widens a packed picture once for all its frames, draws what the picture at 4 bytes draws, and lets the copy go after")
    func zoomWidensOnce() throws {
        var setup = ScreenWriterTests.Setup()
        setup.settings.wrap = true
        let compositor = setup.compositor(rotation: .none)
        let wide = setup.pictures(compositor)
        let packed = try wide.map(Self.packedCopy)
        let writer = ScreenWriter(compositor: compositor), reference = ScreenWriter(compositor: compositor)
        /// A frame of `writer` from `pictures`, zoomed by `scale` (1: no zoom).
        func frame(_ writer: ScreenWriter, _ pictures: [DecodedImage], scale: Double) -> Frame {
            let zoom = scale == 1 ? nil : ZoomLayer(view: ZoomView(item: 0, scale: scale, translation: Point(x: -3 * scale, y: -2)))
            compositor.layOut(&writer.scene, offset: 0, count: setup.count, wrap: true, page: 0, pageCount: setup.count,
                              zoom: zoom) { pictures[$0] }
            let f = Frame(width: setup.panel.width, height: setup.panel.height, color: 0xDEAD_BEEF)
            writer.render(writer.scene, into: f)
            return f
        }
        var copies: Set<UInt64> = []
        for scale in [1.25, 1.5, 2.75, 4] {
            let wrong = Self.differences(frame(writer, packed, scale: scale), frame(reference, wide, scale: scale))
            #expect(wrong == 0, "zoom \(scale): \(wrong) pixels differ")
            #expect(writer.widenedZoom?.of == packed[0].identity && writer.widenedZoom?.picture.format == .xrgb8888)
            if let copy = writer.widenedZoom?.picture.identity { copies.insert(copy) }
        }
        #expect(copies.count == 1, "widened \(copies.count) times")
        // Pictures at 4 bytes are scaled as they are.
        #expect(reference.widenedZoom == nil)
        // The zoom over: the copy goes.
        _ = frame(writer, packed, scale: 1)
        #expect(writer.widenedZoom == nil)
    }

    @Test("a crossfade widens each packed picture once for all its frames, lets the copies go after, and blends the same from packed rows when it may not copy",
          arguments: [Rotation.none, .clockwise90])
    func crossfadeWidensOnce(rotation: Rotation) throws {
        var setup = ScreenWriterTests.Setup()
        setup.settings.wrap = true
        setup.rotation = rotation
        let compositor = setup.compositor(rotation: rotation)
        let wide = try setup.pictures(setup.compositor(rotation: .none)).map { try $0.turned(rotation) }
        let packed = try wide.map(Self.packedCopy)
        let writer = ScreenWriter(compositor: compositor), reference = ScreenWriter(compositor: compositor)
        let rowsOnly = ScreenWriter(compositor: compositor)
        rowsOnly.fadeCopiesAllowed = 0
        /// A frame of `writer` from `pictures`, fading from item 0 to 1 by `fraction` (nil: at rest on 1).
        func frame(_ writer: ScreenWriter, _ pictures: [DecodedImage], _ fraction: Double?) -> Frame {
            compositor.layOut(&writer.scene, offset: fraction == nil ? 1 : 0, count: setup.count, wrap: true, page: 0,
                              pageCount: setup.count) { pictures[$0] }
            compositor.layOut(&writer.incoming, offset: 1, count: setup.count, wrap: true, page: 1,
                              pageCount: setup.count) { pictures[$0] }
            writer.fade = fraction
            let f = Frame(width: setup.panel.width, height: setup.panel.height, color: 0xDEAD_BEEF)
            writer.render(writer.scene, into: f)
            return f
        }
        var copies: Set<UInt64> = []
        for fraction in [0.1, 0.35, 0.5, 0.9] {
            let want = frame(reference, wide, fraction)
            let wrong = Self.differences(frame(writer, packed, fraction), want)
            #expect(wrong == 0, "fade \(fraction): \(wrong) pixels differ")
            #expect(Set(writer.widenedFade.map(\.of)) == [packed[0].identity, packed[1].identity])
            #expect(writer.widenedFade.allSatisfy { $0.picture.format == .xrgb8888 })
            copies.formUnion(writer.widenedFade.map { $0.picture.identity })
            // Without copies: blended from the packed rows, the same pixels.
            #expect(Self.differences(frame(rowsOnly, packed, fraction), want) == 0, "fade \(fraction) from packed rows")
            #expect(rowsOnly.widenedFade.isEmpty)
        }
        #expect(copies.count == 2, "widened \(copies.count) times for two pictures")
        #expect(reference.widenedFade.isEmpty)
        // The crossfade over: the copies go.
        _ = frame(writer, packed, nil)
        #expect(writer.widenedFade.isEmpty)
    }

    @Test("a JPEG the item's size goes into the cache with no 32-bit copy; one drawn over or turned is packed after",
          .enabled(if: Tools.imageMagickAvailable, Comment(rawValue: imageMagickMissing)))
    func jpegOfTheItemsSize() throws {
        let scratch = try Scratch("packed-jpeg")
        let path = scratch.file("exact.jpg")
        try Tools.magick(["-size", "96x60", "plasma:", "-quality", "92", path])
        let item = PixelSize(width: 96, height: 60)
        var settings = ItemCache.Settings(itemSize: item, fit: .contain, background: .black, maxPixels: 64_000_000,
                                          budgetBytes: 1 << 20)
        /// The picture prepared, and the pixel buffers allocated on the way.
        func prepared() throws -> (DecodedImage, [Int]) {
            let sizes = Mutex<[Int]>([])
            let image = try DecodedImage.$allocationObserver.withValue({ bytes in sizes.withLock { $0.append(bytes) } }) {
                try ItemCache.prepare(PageKey(path), settings: settings)
            }
            return (image, sizes.withLock { $0 })
        }
        let (direct, allocated) = try prepared()
        #expect(direct.format == .rgb888 && direct.size == item)
        #expect(allocated == [96 * 3 * 60], "buffers allocated: \(allocated)")
        // Drawn over (a caption) or turned: made at 4 bytes, then packed by the cache.
        settings.caption = Captioning(kind: .name, position: .bottomRight, style: TextStyle(), size: 12)
        #expect(try prepared().0.format == .xrgb8888)
        settings.caption = nil
        settings.rotation = .clockwise90
        #expect(try prepared().0.format == .xrgb8888)
        // The same pixels either way, once packed.
        settings.rotation = .none
        let wide = try ImageDecoder.decode(path: path, targetSize: item, fit: .contain)
        var wrong = 0
        for y in 0..<60 {
            for x in 0..<96 where direct.pixel(x: x, y: y) != wide.pixel(x: x, y: y) { wrong += 1 }
        }
        #expect(wrong == 0)
    }
}
