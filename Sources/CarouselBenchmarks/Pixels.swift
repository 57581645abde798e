import CarouselCore
import CarouselDisplay
import CarouselImaging
import CarouselRender
#if canImport(Glibc)
import Glibc
#endif

// Issue 3's figures: composition against the memory-copy floor, DCT-scaled
// decoding against full decoding, and resident memory for 10 vs 10,000 images.

/// Runs a shell command (ImageMagick makes the test pictures); true on success.
func shell(_ command: String) -> Bool {
    fflush(nil)  // the child writes to the same stdout: keep the lines in order
    return system(command) == 0
}

/// Resident set size of this process, from /proc/self/status (kB).
func residentKB() -> Int {
    guard let f = fopen("/proc/self/status", "r") else { return -1 }
    defer { fclose(f) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, 256, f) != nil {
        let s = String(cString: line)
        if s.hasPrefix("VmRSS:") {
            return Int(s.split(separator: " ").dropFirst().first ?? "") ?? -1
        }
    }
    return -1
}

struct PixelBenchmarks {
    let folder: String

    init(folder: String) { self.folder = folder }

    init() {
        var template = Array("/tmp/carousel-bench-XXXXXX".utf8CString)
        folder = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    /// Compose a 1920x1080 frame mid-scroll (two items on screen) vs. copying
    /// the same two strips with memcpy: the CPU floor for this frame.
    func composeVersusMemcpy() -> [String] {
        var settings = CarouselSettings()
        settings.wrap = true
        let geometry = Geometry(viewport: Viewport(width: 1920, height: 1080), settings: settings)
        let compositor = Compositor(geometry: geometry, style: RenderStyle())
        let size = compositor.itemPixelSize
        let images = (0..<2).map { i in
            try! DecodedImage(width: size.width, height: size.height, format: .xrgb8888) { buffer, _ in
                buffer.bindMemory(to: UInt32.self).initialize(repeating: 0xFF10_2030 &+ UInt32(i))
            }
        }
        let frame = Frame(width: 1920, height: 1080)
        let frames = 200
        let compose = measure("compose 1920x1080 mid-scroll", operations: frames) {
            var sum = 0
            for k in 0..<frames {
                let offset = 0.3 + Double(k % 10) * 0.01
                compositor.compose(into: frame, offset: offset, count: 10, wrap: true, page: 0, pageCount: 10) { images[$0 % 2] }
                sum &+= Int(frame.pixels[k])
            }
            return sum
        }
        let split = 1920 * 7 / 10
        let copy = measure("memcpy two strips 1920x1080", operations: frames) {
            var sum = 0
            for k in 0..<frames {
                images[0].withUnsafeBytes { a in
                    images[1].withUnsafeBytes { b in
                        for y in 0..<1080 {
                            let row = frame.row(y)
                            memcpy(row, a.baseAddress! + y * images[0].stride + (1920 - split) * 4, split * 4)
                            memcpy(row + split, b.baseAddress! + y * images[1].stride, (1920 - split) * 4)
                        }
                    }
                }
                sum &+= Int(frame.pixels[k])
            }
            return sum
        }
        let ratio = compose.perOperation[0] / copy.perOperation[0]
        return [line(compose), line(copy), "  compose / memcpy: \(format2(ratio))x (target: within 1.5x)"]
    }

    /// Decode + scale a 6000x4000 JPEG to 1920x1080: DCT-scaled vs. full size then scaled.
    func dctVersusFullDecode() -> [String] {
        let path = folder + "/big.jpg"
        guard shell("convert -size 6000x4000 plasma:fractal -quality 90 \(path) 2>/dev/null") else {
            return ["  (skipped: ImageMagick's convert is needed to make the 6000x4000 JPEG)"]
        }
        let box = PixelSize(width: 1920, height: 1080)
        let dct = measure("decode+scale 6000x4000 JPEG, DCT scaling", operations: 1, rounds: 5) {
            let image = try! ImageDecoder.decode(path: path, targetSize: box, fit: .contain)
            return try! ImageScaler.scale(image, to: box, fit: .contain, background: .black).width
        }
        let full = measure("decode+scale 6000x4000 JPEG, full decode", operations: 1, rounds: 3) {
            let image = try! ImageDecoder.decode(path: path, targetSize: nil, fit: .contain)
            return try! ImageScaler.scale(image, to: box, fit: .contain, background: .black).width
        }
        return [line(dct), line(full), "  full / DCT: \(format2(full.perOperation[0] / dct.perOperation[0]))x"]
    }

    /// The album's listing: reading the upright size of 500 pictures from
    /// their headers (`ImageShape`), against decoding each at full size.
    /// The pictures are camera-sized, of every format, some turned by EXIF;
    /// 10 distinct files, each linked 50 times. Warm page cache: on a board's
    /// SD card the probe's few reads (and a decode's whole file) cost more.
    func shapesVersusDecode() -> [String] {
        let sub = folder + "/shapes"
        let sources = [
            "-size 4032x3024 plasma:fractal -quality 90 a.jpg",
            "-size 4032x3024 plasma:fractal -quality 90 -orient RightTop b.jpg",
            "-size 4000x3000 plasma:fractal -quality 85 -interlace JPEG c.jpg",
            "-size 3024x4032 plasma:fractal -quality 90 -orient LeftBottom d.jpg",
            "-size 2000x1500 plasma:fractal e.png",
            "-size 1500x2000 plasma:fractal f.png",
            "-size 3000x2000 plasma:fractal -quality 85 g.webp",
            "-size 3000x2000 plasma:fractal -quality 85 h.heic",
            "-size 2000x3000 plasma:fractal -quality 60 i.avif",
            "-size 800x600 plasma:fractal j.gif",
        ]
        guard shell("mkdir -p \(sub)") else { return ["  (skipped: no scratch folder)"] }
        for source in sources {
            let name = String(source.split(separator: " ").last!)
            if access("\(sub)/\(name)", F_OK) != 0 {
                guard shell("cd \(sub) && convert \(source) 2>/dev/null") else {
                    return ["  (skipped: ImageMagick's convert is needed to make \(name))"]
                }
            }
        }
        let names = sources.map { String($0.split(separator: " ").last!) }
        var paths: [String] = []
        for copy in 0..<50 {
            for name in names {
                let link = "\(sub)/\(copy)-\(name)"
                if copy > 0 { link.withCString { l in "\(sub)/\(name)".withCString { _ = Glibc.link($0, l) } } }
                paths.append(copy == 0 ? "\(sub)/\(name)" : link)
            }
        }
        var portraits = 0
        let probe = measure("probe 500 headers (ImageShape)", operations: 1, rounds: 7) {
            var count = 0
            for path in paths {
                if let size = ImageShape.uprightSize(path: path), size.height > size.width { count += 1 }
            }
            portraits = count
            return count
        }
        let decode = measure("decode the 10 distinct pictures at full size", operations: 10, rounds: 3) {
            var total = 0
            for name in names { total &+= (try? ImageDecoder.decode(path: "\(sub)/\(name)"))?.width ?? 0 }
            return total
        }
        // The figure is only worth having if the probe says what the decoder gives.
        let disagreeing = names.filter { name in
            let path = "\(sub)/\(name)"
            return ImageShape.uprightSize(path: path) != (try? ImageDecoder.decode(path: path))?.size
        }
        let perProbe = probe.perOperation[0] / Double(paths.count)
        return [line(probe),
                "  per picture: probe \(format(perProbe)), full decode \(format(decode.perOperation[0])) (\(portraits) of 500 portraits)",
                "  decode / probe: \(Int((decode.perOperation[0] / perProbe).rounded()))x",
                "  probe and decode agree on " + (disagreeing.isEmpty ? "all 10" : "all but \(disagreeing.joined(separator: ", "))")]
    }

    /// Scroll through `count` images (links to 10 distinct 1920x1080 JPEGs)
    /// with the cache as the daemon uses it, and report resident memory.
    func memory(count: Int) -> String {
        let sub = folder + "/album\(count)"
        _ = shell("mkdir -p \(sub)")
        for i in 0..<10 where access("\(folder)/src\(i).jpg", F_OK) != 0 {
            _ = shell("convert -size 1920x1080 plasma:fractal -quality 85 \(folder)/src\(i).jpg 2>/dev/null")
        }
        for i in 0..<count { symlink("\(folder)/src\(i % 10).jpg", "\(sub)/img\(i).jpg") }
        let pages = (0..<count).map { PageKey("\(sub)/img\($0).jpg") }
        let cache = ItemCache(settings: .init(itemSize: PixelSize(width: 1920, height: 1080), fit: .contain,
                                              background: .black, maxPixels: 64_000_000, budgetBytes: 64 << 20))
        var peak = 0
        let before = residentKB()
        for step in 0..<40 {
            let i = step * max(1, count / 40)
            cache.want([pages[i % count], pages[(i + 1) % count], pages[(i + 2) % count], pages[(i + count - 1) % count]])
            cache.waitUntilIdle()
            peak = max(peak, residentKB())
        }
        return "  scroll through \(count) images: RSS \(before / 1024) MiB before, peak \(peak / 1024) MiB; cache holds \(cache.residentBytes >> 20) MiB in \(cache.residentCount) pictures"
    }

    func line(_ r: Result) -> String {
        "  \(r.name): \(format(r.perOperation[0])) / \(format(r.perOperation[r.perOperation.count / 2]))"
    }

    func cleanUp() { _ = shell("rm -rf \(folder)") }
}

func format2(_ x: Double) -> String {
    let hundredths = Int((x * 100).rounded())
    return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
}

/// The floor every frame is measured against: `frames` memcpys of `source`
/// into `display`'s buffers, as `name`.
func measureMemcpy(_ name: String, of source: Frame, into display: OffscreenBackend, frames: Int) -> Result {
    measure(name, operations: frames) {
        var sum = 0
        for k in 0..<frames {
            let b = display.acquire()!
            memcpy(b.pixels, source.pixels, source.stride * source.height)
            sum &+= Int(b.pixels.load(fromByteOffset: k * 4, as: UInt32.self))
        }
        return sum
    }
}

/// Issue 11's figures: the cost of a frame on its way to the screen, for
/// every rotation, and of a slide with and without moving the scan-out
/// window, each as a ratio to a memcpy of the frame in the same run. Frames
/// go into an offscreen display's buffers (ordinary memory, two of them,
/// as a DRM backend hands out).
struct FramePathBenchmarks {
    /// The panel (`--frame-path WIDTHxHEIGHT`; 4K is issue 31's item 4).
    var panel = PixelSize(width: 1920, height: 1080)

    /// Three upright pictures of `size`, a flat colour each.
    static func pictures(_ size: PixelSize) -> [DecodedImage] {
        (0..<3).map { i in
            try! DecodedImage(width: size.width, height: size.height, format: .xrgb8888) { buffer, _ in
                buffer.bindMemory(to: UInt32.self).initialize(repeating: 0xFF10_2030 &+ UInt32(i))
            }
        }
    }

    /// A full-screen wrapping carousel turned by `rotation`, its items
    /// prepared (scaled and turned) as the cache hands them out; `packed`:
    /// at 3 bytes a pixel, as the decode cache keeps opaque pictures.
    func carousel(_ rotation: Rotation, packed: Bool = false) -> (Compositor, [DecodedImage]) {
        var settings = CarouselSettings()
        settings.wrap = true
        let logical = rotation.logicalSize(panelWidth: panel.width, panelHeight: panel.height)
        let geometry = Geometry(viewport: Viewport(width: Double(logical.width), height: Double(logical.height)),
                                settings: settings)
        var style = RenderStyle(); style.indicator.enabled = getenv("NODOTS") == nil
        let compositor = Compositor(geometry: geometry, style: style, rotation: rotation)
        let images = Self.pictures(compositor.itemPixelSize).map { try! $0.turned(rotation) }
        return (compositor, packed ? images.map { $0.packed() } : images)
    }

    func run() -> [String] {
        let display = OffscreenBackend(size: panel)
        let source = Frame(width: panel.width, height: panel.height, color: 0xFF33_4455)
        let frames = 60
        func memcpyOfTheFrame(_ name: String) -> Result {
            measureMemcpy(name, of: source, into: display, frames: frames)
        }
        let copy = memcpyOfTheFrame("memcpy of a \(panel) frame into a display buffer")
        // The same bytes copied a row at a time (a row per call: 7680 bytes at 1920): glibc
        // copies one large block with non-temporal stores, rows with ordinary ones.
        let rows = measure("memcpy of the same frame row by row", operations: frames) {
            var sum = 0
            for k in 0..<frames {
                let b = display.acquire()!
                for y in 0..<source.height {
                    memcpy(b.pixels + y * b.stride, source.row(y), source.width * 4)
                }
                sum &+= Int(b.pixels.load(fromByteOffset: k * 4, as: UInt32.self))
            }
            return sum
        }
        var lines = [line(copy), line(rows) + " = \(format2(rows.perOperation[0] / copy.perOperation[0]))x memcpy"]
        // This machine's speed drifts (other work, turbo): each figure is
        // divided by a memcpy measured just before it.
        func ratio(_ r: Result) -> String {
            let floor = memcpyOfTheFrame("memcpy").perOperation[0]
            return "\(format2(r.perOperation[0] / floor))x memcpy"
        }
        for rotation in Rotation.allCases {
            let (compositor, images) = carousel(rotation)
            let writer = ScreenWriter(compositor: compositor)
            // Mid-slide, a new offset every frame: nothing on screen can be reused.
            let onePass = measure("frame mid-slide, rotation \(rotation.rawValue), one pass", operations: frames) {
                var sum = 0
                for k in 0..<frames {
                    compositor.layOut(&writer.scene, offset: 0.3 + Double(k) * 0.005, count: 10, wrap: true, page: 0,
                                      pageCount: 10) { images[$0 % 3] }
                    let b = display.acquire()!
                    let window = writer.draw(into: b)
                    try! display.present(b, window: window)
                    sum &+= writer.pixelsWritten
                }
                return sum
            }
            // The floor for these bytes: the frame's rows memcpy'd from the
            // pictures that hold them, with no bookkeeping at all (the
            // pictures are not cache-resident as one source frame is).
            var scene = CarouselRender.Scene()
            let raw = measure("the same frames memcpy'd from their pictures, rotation \(rotation.rawValue)",
                              operations: frames) {
                var sum = 0
                for k in 0..<frames {
                    compositor.layOut(&scene, offset: 0.3 + Double(k) * 0.005, count: 10, wrap: true, page: 0,
                                      pageCount: 10) { images[$0 % 3] }
                    let b = display.acquire()!
                    for span in scene.spans {
                        guard let image = span.image else { continue }
                        image.withUnsafeBytes { pixels in
                            if writer.axis == .horizontal {
                                for y in 0..<panel.height {
                                    memcpy(b.pixels + y * b.stride + span.start * 4,
                                           pixels.baseAddress! + y * image.stride + span.source * 4,
                                           (span.end - span.start) * 4)
                                }
                            } else {
                                for y in max(span.start, 0)..<min(span.end, panel.height) {
                                    memcpy(b.pixels + y * b.stride, pixels.baseAddress! + (span.source + y - span.start) * image.stride,
                                           panel.width * 4)
                                }
                            }
                        }
                    }
                    try! display.present(b)
                    sum &+= scene.spans.count
                }
                return sum
            }
            // What the renderer did before: compose upright into a shadow frame, then copy it turned.
            let logical = rotation.logicalSize(panelWidth: panel.width, panelHeight: panel.height)
            let shadowCompositor = Compositor(geometry: compositor.geometry, style: RenderStyle())
            let uprightImages = Self.pictures(compositor.itemPixelSize)
            let shadow = Frame(width: logical.width, height: logical.height)
            let twoPass = measure("frame mid-slide, rotation \(rotation.rawValue), shadow + turned copy (before)",
                                  operations: frames) {
                var sum = 0
                for k in 0..<frames {
                    shadowCompositor.compose(into: shadow, offset: 0.3 + Double(k) * 0.005, count: 10, wrap: true,
                                             page: 0, pageCount: 10) { uprightImages[$0 % 3] }
                    let b = display.acquire()!
                    Scanout.write(shadow, rotation: rotation, to: b.pixels, stride: b.stride,
                                  panelWidth: panel.width, panelHeight: panel.height)
                    try! display.present(b)
                    sum &+= Int(shadow.pixels[k])
                }
                return sum
            }
            lines += [line(onePass) + " = " + ratio(onePass)
                        + " (\(format2(onePass.perOperation[0] / raw.perOperation[0]))x the same bytes memcpy'd)",
                      line(raw) + " = " + ratio(raw), line(twoPass) + " = " + ratio(twoPass)]
        }
        lines += slides(floor: copy.perOperation[0])
        lines += pinches(floor: copy.perOperation[0])
        return lines
    }

    /// Frames of a pinch: the zoom changes every frame, so the zoomed
    /// picture is drawn scaled (pixman) over the whole screen, the dots
    /// composed over it; upright and turned 90° (a column of dots).
    func pinches(floor: Double) -> [String] {
        var lines: [String] = []
        for (rotation, packed) in [(Rotation.none, false), (.none, true), (.clockwise90, false), (.clockwise90, true)] {
            let display = OffscreenBackend(size: panel)
            let (compositor, images) = carousel(rotation, packed: packed)
            let writer = ScreenWriter(compositor: compositor)
            let frames = 20
            let r = measure("pinch frame, rotation \(rotation.rawValue), pictures at \(packed ? 3 : 4) bytes a pixel",
                            operations: frames) {
                var sum = 0
                for k in 0..<frames {
                    let view = ZoomView(item: 0, scale: 1.5 + Double(k) * 0.01, translation: Point(x: -100 - Double(k), y: -50))
                    compositor.layOut(&writer.scene, offset: 0, count: 10, wrap: true, page: 0, pageCount: 10,
                                      zoom: ZoomLayer(view: view)) { images[$0 % 3] }
                    let b = display.acquire()!
                    try! display.present(b, window: writer.draw(into: b))
                    sum &+= writer.pixelsWritten
                }
                return sum
            }
            lines.append(line(r) + " = \(format2(r.perOperation[0] / floor))x / \(format2(r.median / floor))x memcpy, best / median")
        }
        return lines
    }

    /// A whole 0.5 s slide at 60 Hz (30 frames, from rest to rest, dots on),
    /// with the scan-out window moving over a buffer one screen longer, and
    /// without (every frame written); upright and on a panel turned 90°
    /// (portrait: the window moves down the buffer, the dots are a column).
    func slides(floor: Double) -> [String] {
        var lines: [String] = []
        for rotation in [Rotation.none, .clockwise90] {
            for room in [true, false] { lines += slide(rotation, room: room, floor: floor) }
            // Written whole from pictures packed at 3 bytes, as the decode cache keeps them.
            lines += slide(rotation, room: false, packed: true, floor: floor)
        }
        return lines
    }

    func slide(_ rotation: Rotation, room: Bool, packed: Bool = false, floor: Double) -> [String] {
        var lines: [String] = []
        do {
            let display = OffscreenBackend(size: panel)
            let (compositor, images) = carousel(rotation, packed: packed)
            let writer = ScreenWriter(compositor: compositor)
            let granted = room ? display.reserveWindowRoom(compositor.axisExtent, along: writer.axis) : 0
            var page = 0
            func frame(_ offset: Double, moving: Bool) -> Int {
                compositor.layOut(&writer.scene, offset: offset, count: 10, wrap: true, page: page % 10, pageCount: 10,
                                  ahead: moving ? granted : 0) { images[$0 % 3] }
                let b = display.acquire()!
                let window = writer.draw(into: b)
                try! display.present(b, window: window)
                return writer.pixelsWritten
            }
            var steady: [Double] = []
            // Pixels the steady frames wrote: with the window moved, the dots alone.
            var steadyPixels: [Int] = []
            let clock = ContinuousClock()
            let kind = (room ? "window moved (zero copy)" : "every frame written") + (packed ? ", pictures at 3 bytes a pixel" : "")
            let whole = measure("slide of 30 frames, rotation \(rotation.rawValue), \(kind)", operations: 30) {
                var sum = 0
                // Two frames at rest (one per buffer), then the slide.
                sum &+= frame(Double(page), moving: false) + frame(Double(page), moving: false)
                for k in 1...30 {
                    let t = Double(k) / 30
                    let eased = 1 - (1 - t) * (1 - t)
                    let started = clock.now
                    let written = frame(Double(page) + eased, moving: k < 30)
                    sum &+= written
                    if k > 2, k < 30 {
                        let d = clock.now - started
                        steady.append(Double(d.components.attoseconds) / 1e9 + Double(d.components.seconds) * 1e9)
                        steadyPixels.append(written)
                    }
                }
                page += 1
                return sum
            }
            steady.sort()
            lines.append(line(whole) + " = " + "\(format2(whole.perOperation[0] / floor))x memcpy per frame, amortised")
            steadyPixels.sort()
            lines.append("  its steady frames (3 to 29), median: \(format(steady[steady.count / 2])) = "
                         + "\(format2(steady[steady.count / 2] / floor))x memcpy; pixels written per frame: "
                         + "median \(steadyPixels[steadyPixels.count / 2]), most \(steadyPixels.last!) "
                         + "of the panel's \(panel.width * panel.height)")
        }
        return lines
    }

    func line(_ r: Result) -> String {
        "  \(r.name): \(format(r.perOperation[0])) / \(format(r.perOperation[r.perOperation.count / 2]))"
    }
}
