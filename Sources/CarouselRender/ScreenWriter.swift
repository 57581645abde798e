import CarouselCore
import CarouselDisplay
import CarouselImaging
#if canImport(Glibc)
import Glibc
#endif

/// Writes scenes into the display's buffers in one pass, in panel
/// orientation, and only what changed.
///
/// It remembers, per buffer, what each stretch along the panel axis holds
/// (which picture at which position, background, or unknown) and where the
/// dots were drawn. A frame then writes only the stretches whose content
/// differs: at rest, a decoded neighbour repaints its own stretch and a dot
/// change the dots' rectangle. A buffer longer than the panel (room granted
/// by the backend) holds the content ahead of a slide, and the slide moves
/// the scan-out window over it: frames of a slide write nothing but the dots.
///
/// Scanout memory is written in rows and never read: dots are blended in a
/// scratch row in ordinary memory, over pixels taken from the pictures.
public final class ScreenWriter {
    public let compositor: Compositor
    /// What the next frame shows; `Compositor.layOut` fills it in place.
    public var scene = Scene()
    /// During a crossfade: the scene fading in over `scene`, and how much
    /// of it shows (0 to 1); `fade` is nil otherwise.
    public var incoming = Scene()
    public var fade: Double?
    /// Pixels written by the last `draw` (content, dots and their repairs).
    public private(set) var pixelsWritten = 0
    /// The panel axis: the one along which room extends a buffer.
    public var axis: ScanoutAxis { compositor.panelAxisIsHorizontal ? .horizontal : .vertical }

    private var records: [Record] = []
    /// One panel row in ordinary memory, where dots are blended.
    private let scratch: UnsafeMutablePointer<UInt32>
    private let scratchCount: Int
    private var dotsPlan: DotsPlan?
    private var dotsPlanKey: DotsKey?
    /// The empty-folder picture in panel orientation, drawn once when needed.
    private var emptyPicture: Frame?
    /// Reused between frames (no allocation per frame).
    private var desired: [Piece] = []
    private var repaint: [Interval] = []
    private var merged: [Piece] = []
    private var strips: [Strip] = []
    /// The zoomed pictures of the strips being drawn (`Strip.zoom`); empty
    /// between frames, so that a zoom's picture (up to several screens of
    /// pixels) is not kept alive after the zoom ended.
    private var zooms: [SpanZoom] = []
    /// A dots or clock rectangle's stretches (reused, as `strips`).
    private var rectStrips: [Strip] = []
    /// A panel row of background, where a crossfade blends a scene's background from.
    private let backgroundRow: UnsafeMutablePointer<UInt32>
    /// A crossfade's column stretches (reused between frames, as `strips`).
    private var incomingStrips: [Strip] = []
    private var fades: [Fade] = []

    public init(compositor: Compositor) {
        self.compositor = compositor
        scratchCount = max(compositor.panel.width, 1)
        scratch = UnsafeMutablePointer<UInt32>.allocate(capacity: scratchCount)
        scratch.initialize(repeating: 0, count: scratchCount)
        backgroundRow = UnsafeMutablePointer<UInt32>.allocate(capacity: scratchCount)
        backgroundRow.initialize(repeating: compositor.background, count: scratchCount)
    }

    deinit {
        scratch.deallocate()
        backgroundRow.deallocate()
    }

    /// How many rows ahead a row of column stretches asks for its pixels.
    static let prefetchRows = 2

    /// Forgets what every buffer holds (they were made anew, or something
    /// outside the writer wrote them): the next frame in each is written whole.
    public func invalidate() { records.removeAll() }

    /// Writes `scene` into `buffer` (written since it was last handed to this
    /// writer only by this writer) and returns the window to present. With
    /// room in the buffer the window may lie anywhere along the axis.
    public func draw(into buffer: ScanoutBuffer) -> PixelPoint {
        let target = Target(buffer, axis: axis)
        var record = records.first { $0.index == buffer.index && $0.matches(target) } ?? Record(target)
        records.removeAll { $0.index == buffer.index }
        let window = write(scene, into: target, record: &record)
        records.append(record)
        return axis == .horizontal ? PixelPoint(x: window, y: 0) : PixelPoint(x: 0, y: window)
    }

    /// Writes `scene` whole into `frame` (the panel's size, ordinary memory):
    /// screenshots and `render`.
    public func render(_ scene: Scene, into frame: Frame) {
        precondition(frame.width == compositor.panel.width && frame.height == compositor.panel.height,
                     "a \(frame.width)x\(frame.height) frame for a \(compositor.panel) panel")
        let target = Target(pixels: UnsafeMutableRawPointer(frame.pixels), stride: frame.stride,
                            panel: compositor.panel, extent: compositor.panel, index: -1, generation: 0, axis: axis)
        var record = Record(target)
        _ = write(scene, into: target, record: &record)
    }

    // MARK: - One frame

    private func write(_ scene: Scene, into target: Target, record: inout Record) -> Int {
        pixelsWritten = 0
        let extent = compositor.axisExtent
        if let fade, !scene.empty, !incoming.empty {
            writeCrossfade(scene, incoming, fraction: fade, into: target, record: &record)
            return 0
        }
        if scene.empty {
            if !(record.empty && record.window == 0) { writeEmpty(into: target, record: &record) }
            return 0
        }
        if record.empty {
            record.empty = false
            record.content = [Piece(start: 0, end: target.length, content: .unknown)]
        }
        let room = target.length - extent
        repaint.removeAll(keepingCapacity: true)
        var window: Int
        if let match = matchingWindow(scene, record: record, room: room) {
            window = match
        } else if (scene.low < 0 || scene.high > extent), scene.high - scene.low <= target.length {
            // Moving, with room: lay the stretch ahead out too.
            window = -scene.low
            setDesired(scene, window: window, from: scene.low, to: scene.high, length: target.length)
            collectRepaint(record)
        } else {
            // The window where the least must be written: where it was, or the start.
            window = 0
            setDesired(scene, window: 0, from: 0, to: extent, length: target.length)
            collectRepaint(record)
            if record.window != 0, record.window <= room {
                let first = repaint
                setDesired(scene, window: record.window, from: 0, to: extent, length: target.length)
                repaint.removeAll(keepingCapacity: true)
                collectRepaint(record)
                if Self.total(repaint) < Self.total(first) {
                    window = record.window
                } else {
                    setDesired(scene, window: 0, from: 0, to: extent, length: target.length)
                    repaint = first
                }
            }
        }
        if !repaint.isEmpty {
            writeContent(scene, window: window, into: target)
            record.replace(with: desired, scratch: &merged)
        }
        writeDots(scene, window: window, into: target, record: &record)
        writeStamp(scene, window: window, into: target, record: &record)
        record.window = window
        return window
    }

    /// A window at which the buffer already holds everything `scene` shows
    /// in the panel's window (a frame of a slide over laid-out content).
    private func matchingWindow(_ scene: Scene, record: Record, room: Int) -> Int? {
        let extent = compositor.axisExtent
        func fits(_ s: Int) -> Bool { s >= 0 && s <= room && windowMatches(scene, record: record, window: s) }
        // Where the buffer holds the first picture in the window, aligned as the
        // scene wants it (a picture may lie there more than once with wrap).
        guard let span = scene.spans.first(where: { $0.image != nil && $0.end > 0 && $0.start < extent }),
              let image = span.image else {
            return fits(record.window) ? record.window : nil
        }
        for piece in record.content {
            guard case let .image(id, origin) = piece.content, id == image.identity else { continue }
            let s = origin - span.start + span.source
            if fits(s) { return s }
        }
        return nil
    }

    private func windowMatches(_ scene: Scene, record: Record, window s: Int) -> Bool {
        let extent = compositor.axisExtent
        var r = 0
        for span in scene.spans {
            let a = max(span.start, 0), b = min(span.end, extent)
            guard b > a else { continue }
            let want = content(span, window: s)
            var x = a + s
            while x < b + s {
                while r < record.content.count, record.content[r].end <= x { r += 1 }
                guard r < record.content.count else { return false }
                let piece = record.content[r]
                if piece.start > x || piece.content != want || piece.content == .unknown { return false }
                x = piece.end
            }
        }
        return true
    }

    private func content(_ span: SceneSpan, window s: Int) -> Content {
        guard let image = span.image else { return .background }
        if let z = span.zoom {
            // A zoomed picture is the same pixels only for the same picture,
            // scale and offset (in buffer coordinates): every change of the
            // zoom rewrites the picture's area.
            let horizontal = axis == .horizontal
            return .zoomed(ZoomKey(picture: z.picture.identity, scaleX: z.scaleX, scaleY: z.scaleY,
                                   offsetX: horizontal ? z.offsetX - Double(s) * z.scaleX : z.offsetX,
                                   offsetY: horizontal ? z.offsetY : z.offsetY - Double(s) * z.scaleY))
        }
        return .image(image.identity, origin: span.start + s - span.source)
    }

    /// What the buffer should hold from `from` to `to` (window coordinates)
    /// with the window at `s`, clipped to the buffer.
    private func setDesired(_ scene: Scene, window s: Int, from: Int, to: Int, length: Int) {
        desired.removeAll(keepingCapacity: true)
        for span in scene.spans {
            let a = max(span.start, from) + s, b = min(span.end, to) + s
            let lo = max(a, 0), hi = min(b, length)
            guard hi > lo else { continue }
            desired.append(Piece(start: lo, end: hi, content: content(span, window: s)))
        }
    }

    /// The stretches where the buffer holds something else than `desired`.
    private func collectRepaint(_ record: Record) {
        var r = 0
        for piece in desired {
            var x = piece.start
            while x < piece.end {
                while r < record.content.count, record.content[r].end <= x { r += 1 }
                let held = r < record.content.count ? record.content[r] : Piece(start: x, end: piece.end, content: .unknown)
                let end = min(piece.end, held.end)
                if held.content != piece.content || held.content == .unknown { addRepaint(x, end) }
                x = end
            }
        }
    }

    private func addRepaint(_ a: Int, _ b: Int) {
        if let last = repaint.last, last.end == a {
            repaint[repaint.count - 1].end = b
        } else {
            repaint.append(Interval(start: a, end: b))
        }
    }

    private static func total(_ intervals: [Interval]) -> Int { intervals.reduce(0) { $0 + $1.end - $1.start } }

    // MARK: - Pixels

    /// Writes the `repaint` stretches from `scene`, row after row.
    private func writeContent(_ scene: Scene, window s: Int, into target: Target) {
        let cross = axis == .horizontal ? compositor.panel.height : compositor.panel.width
        // Where each stretch comes from, worked out once: the row loops are
        // then copies and fills only, and touch nothing reference-counted
        // (strips are plain values: a zoom there was retained and released
        // per strip of every row).
        strips.removeAll(keepingCapacity: true)
        defer { zooms.removeAll(keepingCapacity: true) }
        for interval in repaint { addStrips(scene, window: s, from: interval.start, to: interval.end, to: &strips) }
        let background = compositor.background
        // The pictures stay alive: the scene holds them until this returns.
        withExtendedLifetime(scene) {
            if axis == .horizontal {
                // Column stretches, every row: `source` is in row 0.
                strips.withUnsafeBufferPointer { strips in
                    for y in 0..<cross {
                        let row = target.row(y)
                        for strip in strips where strip.zoom < 0 {
                            if let source = strip.source {
                                // Each row's stretch is a new stream for the
                                // hardware prefetcher: ask for the one two rows on.
                                if y + Self.prefetchRows < cross {
                                    PixelMemory.prefetch(source + (y + Self.prefetchRows) * strip.stride,
                                                         bytes: (strip.x1 - strip.x0) * 4)
                                }
                                memcpy(row + strip.x0, source + y * strip.stride, (strip.x1 - strip.x0) * 4)
                            } else {
                                (row + strip.x0).update(repeating: background, count: strip.x1 - strip.x0)
                            }
                        }
                    }
                }
                // Zoomed pictures are scaled, a rectangle at a time.
                for strip in strips where strip.zoom >= 0 {
                    drawZoomed(zooms[strip.zoom], into: target.row(0) + strip.x0, stride: target.stride,
                               x: strip.x0, y: 0, width: strip.x1 - strip.x0, height: cross, window: s)
                }
            } else {
                // Row stretches, each from one picture (or background): whole-row
                // copies; `source` is the stretch's first row.
                for strip in strips {
                    if strip.zoom >= 0 {
                        drawZoomed(zooms[strip.zoom], into: target.row(strip.x0), stride: target.stride, x: 0,
                                   y: strip.x0, width: cross, height: strip.x1 - strip.x0, window: s)
                    } else if let source = strip.source {
                        for row in strip.x0..<strip.x1 {
                            memcpy(target.row(row), source + (row - strip.x0) * strip.stride, cross * 4)
                        }
                    } else {
                        for row in strip.x0..<strip.x1 { target.row(row).update(repeating: background, count: cross) }
                    }
                }
            }
        }
        pixelsWritten += cross * Self.total(repaint)
    }

    /// Appends to `list` where the stretch `x0..<x1` along the panel axis
    /// (buffer coordinates, the window at `s`) comes from: stretches of the
    /// scene's pictures and of background, in order, covering `x0..<x1`
    /// exactly. A picture's `source` is its first pixel in the stretch: in
    /// row 0 with the axis horizontal (columns), the stretch's first row
    /// with it vertical (rows). A zoomed picture's stretch is appended to
    /// `zooms` too, which the caller empties when it has drawn them.
    private func addStrips(_ scene: Scene, window s: Int, from x0: Int, to x1: Int, to list: inout [Strip]) {
        let horizontal = axis == .horizontal
        var x = x0
        for span in scene.spans {
            let a = max(span.start + s, x), b = min(span.end + s, x1)
            guard b > a else { continue }
            if a > x { list.append(Strip(x0: x, x1: a, source: nil, stride: 0)) }
            if let zoom = span.zoom {
                // Drawn scaled, not copied (never part of a crossfade: a
                // change of picture drops the zoom first).
                zooms.append(zoom)
                list.append(Strip(x0: a, x1: b, source: nil, stride: 0, zoom: zooms.count - 1))
                x = b
                continue
            }
            let source = span.image.map { image in
                image.withUnsafeBytes { UnsafeRawPointer($0.baseAddress!) }
                    + (span.source + a - span.start - s) * (horizontal ? 4 : image.stride)
            }
            list.append(Strip(x0: a, x1: b, source: source, stride: span.image?.stride ?? 0))
            x = b
        }
        if x < x1 { list.append(Strip(x0: x, x1: x1, source: nil, stride: 0)) }
    }

    /// Writes the buffer's rectangle at (`x`, `y`), `width × height`, whose
    /// first pixel is at `base` (rows `stride` bytes apart), from a zoomed
    /// picture, the window at `s`: the picture scaled where it reaches,
    /// background around it (a picture pinched below 1, or pushed past an edge).
    private func drawZoomed(_ zoom: SpanZoom, into base: UnsafeMutablePointer<UInt32>, stride: Int, x: Int, y: Int,
                            width: Int, height: Int, window s: Int) {
        guard width > 0, height > 0 else { return }
        // The map in buffer coordinates.
        let horizontal = axis == .horizontal
        let ox = horizontal ? zoom.offsetX - Double(s) * zoom.scaleX : zoom.offsetX
        let oy = horizontal ? zoom.offsetY : zoom.offsetY - Double(s) * zoom.scaleY
        // The buffer pixels whose centres fall on the picture, its border
        // included on both sides (so that a turned frame draws the same pixels).
        func covered(_ offset: Double, _ scale: Double, _ size: Int) -> (Int, Int) {
            let a = (0 - offset) / scale - 0.5, b = (Double(size) - offset) / scale - 0.5
            let lo = min(a, b), hi = max(a, b)
            guard lo.isFinite, hi.isFinite else { return (0, 0) }
            return (Int(max(min((lo - 1e-9).rounded(.up), 1e9), -1e9)),
                    Int(max(min((hi + 1e-9).rounded(.down) + 1, 1e9), -1e9)))
        }
        let (cx0, cx1) = covered(ox, zoom.scaleX, zoom.picture.width)
        let (cy0, cy1) = covered(oy, zoom.scaleY, zoom.picture.height)
        let x0 = max(x, cx0), x1 = min(x + width, cx1), y0 = max(y, cy0), y1 = min(y + height, cy1)
        let background = compositor.background
        let rowWords = stride / 4
        for row in 0..<height {
            let line = base + row * rowWords
            let by = y + row
            if by < y0 || by >= y1 || x1 <= x0 {
                line.update(repeating: background, count: width)
                continue
            }
            if x0 > x { line.update(repeating: background, count: x0 - x) }
            if x + width > x1 { (line + (x1 - x)).update(repeating: background, count: x + width - x1) }
        }
        guard x1 > x0, y1 > y0 else { return }
        let start = UnsafeMutableRawPointer(base + (y0 - y) * rowWords + (x0 - x))
        do {
            try ImageScaler.drawTransformed(zoom.picture, into: start, width: x1 - x0, height: y1 - y0, stride: stride,
                                            scaleX: zoom.scaleX, scaleY: zoom.scaleY,
                                            offsetX: ox + Double(x0) * zoom.scaleX, offsetY: oy + Double(y0) * zoom.scaleY)
        } catch {
            // pixman could not allocate its image headers: background, and the next frame tries again.
            for row in (y0 - y)..<(y1 - y) { (base + row * rowWords + (x0 - x)).update(repeating: background, count: x1 - x0) }
        }
    }

    private func writeEmpty(into target: Target, record: inout Record) {
        let picture: Frame
        if let emptyPicture {
            picture = emptyPicture
        } else {
            let size = compositor.rotation.logicalSize(panelWidth: compositor.panel.width, panelHeight: compositor.panel.height)
            let logical = Frame(width: size.width, height: size.height)
            compositor.drawEmpty(into: logical)
            picture = Frame(width: compositor.panel.width, height: compositor.panel.height)
            Scanout.write(logical, rotation: compositor.rotation, to: UnsafeMutableRawPointer(picture.pixels),
                          stride: picture.stride, panelWidth: picture.width, panelHeight: picture.height)
            emptyPicture = picture
        }
        for y in 0..<picture.height { target.row(y).update(from: picture.row(y), count: picture.width) }
        pixelsWritten += picture.width * picture.height
        record.content = [Piece(start: 0, end: target.length, content: .unknown)]
        record.empty = true
        record.dots = nil
        record.stamp = nil
        record.window = 0
    }

    // MARK: - Crossfade

    /// Writes the window whole as `outgoing` with `incoming` over it at
    /// `fraction`, dots on top, at window 0. Each row is blended straight
    /// from the two scenes' pictures (or the background row where a scene
    /// shows background) into the buffer, which is only written: every
    /// pixel costs two reads and a write, as near a memcpy as a blend gets
    /// (issue 13: within 2x). Rows under the dots or the clock are blended
    /// in the scratch row instead, the clock and the dots drawn over them
    /// there (drawing them needs reads), and then copied; in rows they
    /// cross, only the columns they cover. The window does not move during
    /// a crossfade, and what it held is unknown afterwards, so the first
    /// frame after one is written whole again.
    private func writeCrossfade(_ outgoing: Scene, _ incoming: Scene, fraction: Double, into target: Target,
                                record: inout Record) {
        let width = compositor.panel.width, height = compositor.panel.height
        let horizontal = axis == .horizontal
        let plan = plan(page: outgoing.page, pageCount: outgoing.pageCount)
        // Dots drawn elsewhere in a longer buffer are off screen; their stretch is unknown now.
        if let old = record.dots {
            record.markUnknown(horizontal ? old.rect.x0 : old.rect.y0, horizontal ? old.rect.x1 : old.rect.y1,
                               scratch: &merged)
        }
        // Where each stretch along the panel axis comes from in both scenes,
        // worked out once: the row loop is then blends only, and touches
        // nothing reference-counted (a span's picture retained and released
        // per row took most of the blend's own time in perf).
        strips.removeAll(keepingCapacity: true)
        defer { zooms.removeAll(keepingCapacity: true) }
        addStrips(outgoing, window: 0, from: 0, to: compositor.axisExtent, to: &strips)
        incomingStrips.removeAll(keepingCapacity: true)
        addStrips(incoming, window: 0, from: 0, to: compositor.axisExtent, to: &incomingStrips)
        fades.removeAll(keepingCapacity: true)
        let background = UnsafeRawPointer(backgroundRow)
        // Along a vertical axis a step is a row of the picture; background is one row, repeated.
        let step = { (strip: Strip) in horizontal ? 4 : strip.stride }
        var i = 0, j = 0, x = 0
        // Both lists cover the window exactly: cut at every end of either.
        while x < compositor.axisExtent {
            let p = strips[i], q = incomingStrips[j]
            let end = min(p.x1, q.x1)
            fades.append(Fade(start: x, end: end,
                              outgoing: p.source.map { $0 + (x - p.x0) * step(p) } ?? background + (horizontal ? x * 4 : 0),
                              outgoingStride: p.stride,
                              incoming: q.source.map { $0 + (x - q.x0) * step(q) } ?? background + (horizontal ? x * 4 : 0),
                              incomingStride: q.stride))
            x = end
            if p.x1 == end { i += 1 }
            if q.x1 == end { j += 1 }
        }
        let clock = outgoing.stamp
        let clockRect = clock.map { stampRect($0, window: 0) }
        let dotsRect = plan?.bounds
        let fades = self.fades
        let scratch = self.scratch
        var k = 0
        /// Blends columns `x0..<x1` of row `y` into `row` (indexed by column).
        func crossfade(row y: Int, from x0: Int, to x1: Int, into row: UnsafeMutablePointer<UInt32>, streaming: Bool) {
            guard x1 > x0 else { return }
            if horizontal {
                for f in fades where f.end > x0 && f.start < x1 {
                    let a = max(f.start, x0), b = min(f.end, x1)
                    ImageScaler.crossfade((f.outgoing + y * f.outgoingStride).assumingMemoryBound(to: UInt32.self) + (a - f.start),
                                          (f.incoming + y * f.incomingStride).assumingMemoryBound(to: UInt32.self) + (a - f.start),
                                          into: row + a, count: b - a, fraction: fraction, streaming: streaming)
                }
            } else {
                // Each row comes whole from one picture (or background) in each scene.
                while fades[k].end <= y { k += 1 }
                let f = fades[k], r = y - f.start
                ImageScaler.crossfade((f.outgoing + r * f.outgoingStride).assumingMemoryBound(to: UInt32.self) + x0,
                                      (f.incoming + r * f.incomingStride).assumingMemoryBound(to: UInt32.self) + x0,
                                      into: row + x0, count: x1 - x0, fraction: fraction, streaming: streaming)
            }
        }
        // The pictures stay alive: the scenes hold them until this returns.
        withExtendedLifetime((outgoing, incoming)) { withOverlay(clock, plan, window: 0) { overlay in
            for y in 0..<height {
                // The columns under the clock or the dots in this row (none: c0 == c1).
                var c0 = width, c1 = 0
                func cover(_ r: Rect?) {
                    guard let r, y >= r.y0, y < r.y1, r.x1 > r.x0 else { return }
                    c0 = min(c0, max(r.x0, 0))
                    c1 = max(c1, min(r.x1, width))
                }
                cover(clockRect)
                cover(dotsRect)
                // Whole cache lines (16 pixels) either way: a line streamed in
                // part and written through the cache in part costs a partial
                // write-combining flush (rows of 90° dots: 5-8% of the frame).
                if c1 > c0 { c0 &= ~15; c1 = min((c1 + 15) & ~15, width) }
                c1 = max(c1, c0)
                let row = target.row(y)
                // The buffer's rows are streamed past the cache, which is
                // better left to the pictures; the scratch row is read back.
                crossfade(row: y, from: 0, to: c0, into: row, streaming: true)
                if c1 > c0 {
                    // The clock and the dots stay on top of both pictures:
                    // drawn over the blend in the scratch row, then copied.
                    let composed = scratch - c0
                    crossfade(row: y, from: c0, to: c1, into: composed, streaming: false)
                    blend(overlay, into: composed, y: y, from: c0, to: c1)
                    (row + c0).update(from: scratch, count: c1 - c0)
                }
                crossfade(row: y, from: max(c0, c1), to: width, into: row, streaming: true)
            }
        } }
        // Once per frame: a fence per row made the frame a third slower.
        ImageScaler.fenceStreamedStores()
        pixelsWritten = width * height
        record.empty = false
        record.markUnknown(0, compositor.axisExtent, scratch: &merged)
        record.dots = nil
        record.stamp = nil
        record.window = 0
    }

    // MARK: - Dots and the clock

    /// Runs `body` with the clock (`stamp`) and the dots (`plan`) as drawn
    /// with the window at `s`, ready for `blend(_:into:y:from:to:)`: worked
    /// out once per rectangle (or crossfade frame), so that the per-row blend
    /// touches nothing reference-counted. Per row, retaining the plan's
    /// arrays and the clock's picture cost more than the blending in a
    /// column of dots on a turned panel (hundreds of short rows).
    private func withOverlay<R>(_ stamp: SceneStamp?, _ plan: DotsPlan?, window s: Int, _ body: (Overlay) -> R) -> R {
        let horizontal = axis == .horizontal
        let clock = stamp.map { stamp in
            OverlayClock(rect: stampRect(stamp, window: s),
                         // The picture stays alive: `stamp` is held until this returns.
                         pixels: stamp.image.withUnsafeBytes { UnsafeRawPointer($0.baseAddress!) },
                         stride: stamp.image.stride,
                         x: stamp.x + (horizontal ? s : 0), y: stamp.y + (horizontal ? 0 : s))
        }
        let dots = plan?.dots ?? [], weights = plan?.weights ?? []
        return withExtendedLifetime(stamp) {
            dots.withUnsafeBufferPointer { dots in
                weights.withUnsafeBufferPointer { weights in
                    body(Overlay(clock: clock, dots: dots, weights: weights,
                                 dotsRect: plan?.bounds.shifted(by: s, horizontal: horizontal), shift: s,
                                 horizontal: horizontal))
                }
            }
        }
    }

    /// The clock's pixels (premultiplied OVER), then the dots', of row `y`
    /// between `x0` and `x1`.
    private func blend(_ overlay: Overlay, into row: UnsafeMutablePointer<UInt32>, y: Int, from x0: Int, to x1: Int) {
        if let clock = overlay.clock, y >= clock.rect.y0, y < clock.rect.y1 {
            let a = max(x0, clock.rect.x0), b = min(x1, clock.rect.x1)
            // (x, y) of the buffer is (x - clock.x, y - clock.y) of the picture (the rectangle may be clipped).
            let source = (clock.pixels + (y - clock.y) * clock.stride).assumingMemoryBound(to: UInt32.self) - clock.x
            for x in a..<max(a, b) {
                let p = source[x]
                let alpha = p >> 24
                if alpha == 0 { continue }
                if alpha == 255 { row[x] = p; continue }
                let d = row[x], keep = 255 - alpha
                @inline(__always) func channel(_ shift: UInt32) -> UInt32 {
                    let t = ((d >> shift) & 0xFF) * keep + 128
                    return min(255, ((p >> shift) & 0xFF) + ((t + (t >> 8)) >> 8))
                }
                row[x] = 0xFF00_0000 | channel(16) << 16 | channel(8) << 8 | channel(0)
            }
        }
        guard let all = overlay.dotsRect, y >= all.y0, y < all.y1 else { return }
        for dot in overlay.dots {
            let b = dot.bounds.shifted(by: overlay.shift, horizontal: overlay.horizontal)
            guard y >= b.y0, y < b.y1 else { continue }
            let lo = max(b.x0, x0), hi = min(b.x1, x1)
            guard hi > lo else { continue }
            let first = dot.firstWeight + (y - b.y0) * (b.x1 - b.x0) - b.x0
            for x in lo..<hi {
                let weight = overlay.weights[first + x]
                guard weight > 0 else { continue }
                row[x] = compositor.blend(row[x], dot.color, weight)
            }
        }
    }

    /// The clock's rectangle in buffer coordinates with the window at `s`,
    /// clipped to the window.
    private func stampRect(_ stamp: SceneStamp, window s: Int) -> Rect {
        let panel = compositor.panel
        let x0 = max(stamp.x, 0), y0 = max(stamp.y, 0)
        let x1 = max(x0, min(stamp.x + stamp.image.width, panel.width)), y1 = max(y0, min(stamp.y + stamp.image.height, panel.height))
        return Rect(x0: x0, y0: y0, x1: x1, y1: y1).shifted(by: s, horizontal: axis == .horizontal)
    }

    /// Writes `rect` (buffer coordinates, at most a panel row wide) as the
    /// frame shows it, row by row through the scratch row: the pictures,
    /// the clock over them, the dots over both (blending reads the row, so
    /// it is composed in ordinary memory, then copied). Where each stretch
    /// comes from and the overlay are worked out once for the rectangle:
    /// on a turned panel the dots are a column of hundreds of short rows.
    private func writeComposed(_ rect: Rect, _ scene: Scene, window s: Int, into target: Target, dots plan: DotsPlan?) {
        precondition(rect.x1 - rect.x0 <= scratchCount, "a rectangle wider than the scratch row")
        guard rect.x1 > rect.x0, rect.y1 > rect.y0 else { return }
        let horizontal = axis == .horizontal
        rectStrips.removeAll(keepingCapacity: true)
        defer { zooms.removeAll(keepingCapacity: true) }
        addStrips(scene, window: s, from: horizontal ? rect.x0 : rect.y0, to: horizontal ? rect.x1 : rect.y1,
                  to: &rectStrips)
        let background = compositor.background
        let width = rect.x1 - rect.x0
        // Indexed by buffer column.
        let row = scratch - rect.x0
        // The pictures stay alive: the scene holds them until this returns.
        withExtendedLifetime(scene) { withOverlay(scene.stamp, plan, window: s) { overlay in
            rectStrips.withUnsafeBufferPointer { strips in
                var k = 0
                for y in rect.y0..<rect.y1 {
                    if horizontal {
                        // Column stretches; `source` is in row 0.
                        for strip in strips {
                            let n = strip.x1 - strip.x0
                            if strip.zoom >= 0 {
                                drawZoomed(zooms[strip.zoom], into: row + strip.x0, stride: n * 4, x: strip.x0, y: y,
                                           width: n, height: 1, window: s)
                            } else if let source = strip.source {
                                memcpy(row + strip.x0, source + y * strip.stride, n * 4)
                            } else {
                                (row + strip.x0).update(repeating: background, count: n)
                            }
                        }
                    } else {
                        // Row stretches; `source` is the stretch's first row, column 0.
                        while strips[k].x1 <= y { k += 1 }
                        let strip = strips[k]
                        if strip.zoom >= 0 {
                            drawZoomed(zooms[strip.zoom], into: row + rect.x0, stride: width * 4, x: rect.x0, y: y,
                                       width: width, height: 1, window: s)
                        } else if let source = strip.source {
                            memcpy(row + rect.x0, source + (y - strip.x0) * strip.stride + rect.x0 * 4, width * 4)
                        } else {
                            (row + rect.x0).update(repeating: background, count: width)
                        }
                    }
                    blend(overlay, into: row, y: y, from: rect.x0, to: rect.x1)
                    (target.row(y) + rect.x0).update(from: scratch, count: width)
                }
            }
        } }
        pixelsWritten += width * (rect.y1 - rect.y0)
    }

    private func touched(_ r: Rect) -> Bool {
        let (a, b) = axis == .horizontal ? (r.x0, r.x1) : (r.y0, r.y1)
        return repaint.contains { $0.start < b && a < $0.end }
    }

    private func writeDots(_ scene: Scene, window s: Int, into target: Target, record: inout Record) {
        let plan = plan(page: scene.page, pageCount: scene.pageCount)
        let key = plan.map { _ in DotsKey(page: scene.page, pageCount: scene.pageCount) }
        let rect = plan.map { $0.bounds.shifted(by: s, horizontal: axis == .horizontal) }
        let redraw = rect.map { new in record.dots?.key != key || record.dots?.rect != new || touched(new) } ?? false
        // Moved a little (a slide frame moves the window, the dots go with
        // it): the old place and the new one written in one pass, where the
        // old one lies wholly in the scene (else restore marks what it cannot).
        if redraw, let old = record.dots, let plan, let key, let rect, let both = old.rect.joined(with: rect, horizontal: axis == .horizontal),
           both.x1 - both.x0 <= scratchCount, within(old.rect, scene, window: s) {
            writeComposed(both, scene, window: s, into: target, dots: plan)
            record.dots = DotsMark(key: key, rect: rect)
            return
        }
        if let old = record.dots, redraw || rect == nil || old.key != key || old.rect != rect {
            restore(old.rect, scene, window: s, into: target, record: &record, dots: plan)
            record.dots = nil
        }
        guard redraw, let plan, let key, let rect else { return }
        writeComposed(rect, scene, window: s, into: target, dots: plan)
        record.dots = DotsMark(key: key, rect: rect)
    }

    /// Draws the clock where the scene puts it: again when it changed (a new
    /// minute), when the window moved (a slide: it stays put on the screen)
    /// or when pictures were written under it; what lay under its old place
    /// is put back.
    private func writeStamp(_ scene: Scene, window s: Int, into target: Target, record: inout Record) {
        let plan = plan(page: scene.page, pageCount: scene.pageCount)
        let key = scene.stamp?.image.identity
        let rect = scene.stamp.map { stampRect($0, window: s) }
        let redraw = rect.map { new in record.stamp?.key != key || record.stamp?.rect != new || touched(new) } ?? false
        if let old = record.stamp, redraw || rect == nil {
            if old.rect != rect { restore(old.rect, scene, window: s, into: target, record: &record, dots: plan) }
            record.stamp = nil
        }
        guard redraw, let key, let rect else { return }
        writeComposed(rect, scene, window: s, into: target, dots: plan)
        record.stamp = StampMark(key: key, rect: rect)
    }

    /// Whether `rect` lies within what `scene` shows with the window at `s`.
    private func within(_ rect: Rect, _ scene: Scene, window s: Int) -> Bool {
        let lo = scene.low + s, hi = scene.high + s
        return axis == .horizontal ? rect.x0 >= lo && rect.x1 <= hi : rect.y0 >= lo && rect.y1 <= hi
    }

    /// Puts back what lay under dots or the clock drawn at `rect`: from the
    /// scene where it reaches (with what else is drawn there now);
    /// elsewhere the stretch is marked unknown (it is off screen).
    private func restore(_ rect: Rect, _ scene: Scene, window s: Int, into target: Target, record: inout Record,
                         dots plan: DotsPlan?) {
        let lo = scene.low + s, hi = scene.high + s
        if axis == .horizontal {
            let a = max(rect.x0, lo), b = min(rect.x1, hi)
            if b > a { writeComposed(Rect(x0: a, y0: rect.y0, x1: b, y1: rect.y1), scene, window: s, into: target, dots: plan) }
            if rect.x0 < a || b < rect.x1 {
                record.markUnknown(rect.x0, min(rect.x1, max(a, rect.x0)), scratch: &merged)
                record.markUnknown(max(b, rect.x0), rect.x1, scratch: &merged)
            }
        } else {
            let a = max(rect.y0, lo), b = min(rect.y1, hi)
            if b > a { writeComposed(Rect(x0: rect.x0, y0: a, x1: rect.x1, y1: b), scene, window: s, into: target, dots: plan) }
            if rect.y0 < a || b < rect.y1 {
                record.markUnknown(rect.y0, min(rect.y1, max(a, rect.y0)), scratch: &merged)
                record.markUnknown(max(b, rect.y0), rect.y1, scratch: &merged)
            }
        }
    }

    /// The logical pixel shown at panel pixel (x, y): `Rotation.panel` undone.
    private func logicalPixel(x: Int, y: Int) -> (x: Int, y: Int) {
        let w = compositor.panel.width, h = compositor.panel.height
        switch compositor.rotation {
        case .none: return (x, y)
        case .clockwise90: return (y, w - 1 - x)
        case .upsideDown: return (w - 1 - x, h - 1 - y)
        case .clockwise270: return (h - 1 - y, x)
        }
    }

    /// The dots for a page, in panel pixels (computed when the page changes, not every frame).
    private func plan(page: Int, pageCount: Int) -> DotsPlan? {
        let key = DotsKey(page: page, pageCount: pageCount)
        if key == dotsPlanKey { return dotsPlan }
        dotsPlanKey = key
        let logical = compositor.rotation.logicalSize(panelWidth: compositor.panel.width, panelHeight: compositor.panel.height)
        guard let (centres, current) = compositor.dots(page: page, pageCount: pageCount, width: logical.width,
                                                       height: logical.height) else {
            dotsPlan = nil
            return nil
        }
        let style = compositor.style.indicator
        let radius = style.size / 2
        var dots: [DotsPlan.Dot] = []
        var weights: [Double] = []
        var bounds: Rect?
        for (i, c) in centres.enumerated() {
            // The logical pixels fillCircle would touch, turned onto the panel.
            guard let l = Compositor.discBounds(cx: c.x, cy: c.y, radius: radius, width: logical.width,
                                                height: logical.height) else { continue }
            let p = compositor.rotation.panel(x: l.x0, y: l.y0, panelWidth: compositor.panel.width, panelHeight: compositor.panel.height)
            let q = compositor.rotation.panel(x: l.x1, y: l.y1, panelWidth: compositor.panel.width, panelHeight: compositor.panel.height)
            let r = Rect(x0: min(p.x, q.x), y0: min(p.y, q.y), x1: max(p.x, q.x) + 1, y1: max(p.y, q.y) + 1)
            let color = i == current ? style.currentColor : style.color
            let alpha = Double(color.alpha) / 255
            let firstWeight = weights.count
            // Coverage in logical pixels, as the logical picture would be drawn.
            for y in r.y0..<r.y1 {
                for x in r.x0..<r.x1 {
                    let l = logicalPixel(x: x, y: y)
                    weights.append(alpha * Compositor.coverage(x: l.x, y: l.y, cx: c.x, cy: c.y, radius: radius))
                }
            }
            dots.append(DotsPlan.Dot(color: color, bounds: r, firstWeight: firstWeight))
            bounds = bounds.map { $0.union(r) } ?? r
        }
        dotsPlan = bounds.map { DotsPlan(dots: dots, weights: weights, bounds: $0) }
        return dotsPlan
    }
}

// MARK: - What a buffer holds

/// A buffer's memory as the writer sees it.
private struct Target {
    let pixels: UnsafeMutableRawPointer
    let stride: Int
    let panel: PixelSize
    let extent: PixelSize
    let index: Int
    let generation: Int
    /// The buffer's length along the panel axis.
    let length: Int

    init(pixels: UnsafeMutableRawPointer, stride: Int, panel: PixelSize, extent: PixelSize, index: Int, generation: Int,
         axis: ScanoutAxis) {
        self.pixels = pixels
        self.stride = stride
        self.panel = panel
        // Room along the other axis is of no use: the window stays at its start there.
        self.extent = axis == .horizontal ? PixelSize(width: extent.width, height: panel.height)
            : PixelSize(width: panel.width, height: extent.height)
        self.index = index
        self.generation = generation
        length = axis == .horizontal ? self.extent.width : self.extent.height
    }

    init(_ buffer: ScanoutBuffer, axis: ScanoutAxis) {
        self.init(pixels: buffer.pixels, stride: buffer.stride, panel: buffer.size, extent: buffer.extent,
                  index: buffer.index, generation: buffer.generation, axis: axis)
    }

    func row(_ y: Int) -> UnsafeMutablePointer<UInt32> { (pixels + y * stride).assumingMemoryBound(to: UInt32.self) }
}

private enum Content: Equatable {
    /// Never written by this writer, or written over (dots restored off screen).
    case unknown
    case background
    /// Picture `identity`, its axis coordinate 0 at buffer coordinate `origin`.
    case image(UInt64, origin: Int)
    /// A zoomed picture, drawn through this map.
    case zoomed(ZoomKey)
}

/// A zoomed span's picture and map, in buffer coordinates.
private struct ZoomKey: Equatable {
    var picture: UInt64
    var scaleX, scaleY, offsetX, offsetY: Double
}

private struct Piece {
    var start: Int
    var end: Int
    var content: Content
}

/// A stretch along the panel axis from one picture (`source`, see
/// `addStrips`; its rows `stride` bytes apart) or background (`source` nil
/// and `zoom` negative). A plain value: row loops copy it freely.
private struct Strip {
    var x0: Int
    var x1: Int
    var source: UnsafeRawPointer?
    var stride: Int
    /// A zoomed picture's stretch, drawn scaled: its index in `ScreenWriter.zooms`; -1: none.
    var zoom = -1
}

/// The clock as `ScreenWriter.blend` draws it: its rectangle in buffer
/// coordinates (clipped to the window), its pixels, and where its top-left
/// corner lies in the buffer.
private struct OverlayClock {
    var rect: Rect
    var pixels: UnsafeRawPointer
    var stride: Int
    var x: Int
    var y: Int
}

/// The clock and the dots of one rectangle or crossfade frame (`ScreenWriter.withOverlay`).
private struct Overlay {
    var clock: OverlayClock?
    var dots: UnsafeBufferPointer<DotsPlan.Dot>
    var weights: UnsafeBufferPointer<Double>
    /// The dots' bounds with the window at `shift`; nil: no dots.
    var dotsRect: Rect?
    var shift: Int
    var horizontal: Bool
}

/// A stretch along the panel axis of a crossfade, where its outgoing and
/// its incoming pixels are: as `Strip.source`, a picture's (its rows
/// `stride` bytes apart) or the background row (stride 0).
private struct Fade {
    var start: Int
    var end: Int
    var outgoing: UnsafeRawPointer
    var outgoingStride: Int
    var incoming: UnsafeRawPointer
    var incomingStride: Int
}

private struct Interval {
    var start: Int
    var end: Int
}

private struct DotsKey: Equatable {
    var page: Int
    var pageCount: Int
}

private struct Rect: Equatable {
    var x0, y0, x1, y1: Int
    func union(_ o: Rect) -> Rect { Rect(x0: min(x0, o.x0), y0: min(y0, o.y0), x1: max(x1, o.x1), y1: max(y1, o.y1)) }
    /// The two as one rectangle, when they are the same across the axis and
    /// overlap or touch along it (nothing else inside the union).
    func joined(with o: Rect, horizontal: Bool) -> Rect? {
        if horizontal {
            guard y0 == o.y0, y1 == o.y1, x0 <= o.x1, o.x0 <= x1 else { return nil }
        } else {
            guard x0 == o.x0, x1 == o.x1, y0 <= o.y1, o.y0 <= y1 else { return nil }
        }
        return union(o)
    }
    func shifted(by s: Int, horizontal: Bool) -> Rect {
        horizontal ? Rect(x0: x0 + s, y0: y0, x1: x1 + s, y1: y1) : Rect(x0: x0, y0: y0 + s, x1: x1, y1: y1 + s)
    }
}

private struct DotsMark {
    var key: DotsKey
    var rect: Rect
}

private struct StampMark {
    var key: UInt64
    var rect: Rect
}

private struct DotsPlan {
    struct Dot {
        var color: PixelColor
        /// Panel pixels the dot may touch (window coordinates).
        var bounds: Rect
        /// Where the dot's weights start in `DotsPlan.weights`.
        var firstWeight: Int
    }
    var dots: [Dot]
    /// Per pixel of each dot's `bounds`, row after row: the colour's
    /// opacity times the disc's coverage of the logical pixel shown there.
    /// Worked out once per page, not per pixel of every frame that moves
    /// the dots (a zero-copy slide frame writes nothing else).
    var weights: [Double]
    var bounds: Rect
}

private struct Record {
    let index: Int
    let generation: Int
    let pixels: UnsafeMutableRawPointer
    let extent: PixelSize
    let stride: Int
    /// Along the panel axis, buffer coordinates, covering the whole buffer.
    var content: [Piece]
    var window = 0
    var dots: DotsMark?
    /// Where the clock was drawn, and which picture of it.
    var stamp: StampMark?
    /// The empty-folder picture is in the window.
    var empty = false

    init(_ target: Target) {
        index = target.index
        generation = target.generation
        pixels = target.pixels
        extent = target.extent
        stride = target.stride
        content = [Piece(start: 0, end: target.length, content: .unknown)]
    }

    func matches(_ target: Target) -> Bool {
        generation == target.generation && pixels == target.pixels && extent == target.extent && stride == target.stride
    }

    /// The content from `pieces` where they reach, the rest as it was.
    mutating func replace(with pieces: [Piece], scratch: inout [Piece]) {
        guard let first = pieces.first, let last = pieces.last else { return }
        scratch.removeAll(keepingCapacity: true)
        for p in content where p.start < first.start { append(Piece(start: p.start, end: min(p.end, first.start), content: p.content), to: &scratch) }
        for p in pieces { append(p, to: &scratch) }
        for p in content where p.end > last.end { append(Piece(start: max(p.start, last.end), end: p.end, content: p.content), to: &scratch) }
        swap(&content, &scratch)
    }

    mutating func markUnknown(_ a: Int, _ b: Int, scratch: inout [Piece]) {
        guard b > a else { return }
        replace(with: [Piece(start: a, end: b, content: .unknown)], scratch: &scratch)
    }

    private func append(_ p: Piece, to list: inout [Piece]) {
        guard p.end > p.start else { return }
        if let last = list.last, last.end == p.start, last.content == p.content {
            list[list.count - 1].end = p.end
        } else {
            list.append(p)
        }
    }
}
