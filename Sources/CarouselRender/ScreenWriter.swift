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
    public internal(set) var pixelsWritten = 0
    /// The panel axis: the one along which room extends a buffer.
    public var axis: ScanoutAxis { compositor.panelAxisIsHorizontal ? .horizontal : .vertical }

    var records: [Record] = []
    /// One panel row in ordinary memory, where dots are blended.
    let scratch: UnsafeMutablePointer<UInt32>
    let scratchCount: Int
    var dotsPlan: DotsPlan?
    var dotsPlanKey: DotsKey?
    /// The empty-folder picture in panel orientation, drawn once when needed.
    var emptyPicture: Frame?
    /// Reused between frames (no allocation per frame).
    var desired: [Piece] = []
    var repaint: [Interval] = []
    var merged: [Piece] = []
    var strips: [Strip] = []
    /// The zoomed pictures of the strips being drawn (`Strip.zoom`); empty
    /// between frames, so that a zoom's picture (up to several screens of
    /// pixels) is not kept alive after the zoom ended.
    var zooms: [SpanZoom] = []
    /// A dots or clock rectangle's stretches (reused, as `strips`).
    var rectStrips: [Strip] = []
    /// A panel row of background, where a crossfade blends a scene's background from.
    let backgroundRow: UnsafeMutablePointer<UInt32>
    /// A crossfade's column stretches (reused between frames, as `strips`).
    var incomingStrips: [Strip] = []
    var fades: [Fade] = []
    /// Two panel rows where a crossfade widens pictures kept packed before
    /// blending them (`widenedRows`); made at the first such crossfade.
    var wideRows: UnsafeMutablePointer<UInt32>?
    /// A packed picture being zoomed, widened to 4 bytes a pixel once for
    /// the zoom's frames (`zoomSource`), and the identity of the picture it
    /// was widened from; let go by the first frame without a zoom.
    var widenedZoom: (of: UInt64, picture: DecodedImage)?
    /// The packed pictures a crossfade shows, widened once for its frames
    /// (`widenedForFade`), by the identity of the picture each was widened
    /// from; let go by the first frame without a crossfade.
    var widenedFade: [(of: UInt64, picture: DecodedImage)] = []
    /// The most pictures `widenedFade` holds: those on screen in both
    /// scenes (three each with `item_size` below 1).
    var fadeCopiesAllowed = 6

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
        wideRows?.deallocate()
    }

    /// `wideRows`, made if need be.
    func widenedRows() -> UnsafeMutablePointer<UInt32> {
        if let wideRows { return wideRows }
        let rows = UnsafeMutablePointer<UInt32>.allocate(capacity: 2 * scratchCount)
        rows.initialize(repeating: 0, count: 2 * scratchCount)
        wideRows = rows
        return rows
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

    /// Writes `scene` into `buffer`, the one on screen with `shown` the
    /// window it shows (`DisplayBackend.acquireShown`), only outside that
    /// window, and returns the window to present; nil, having written
    /// nothing, when that cannot be done. It can when nothing is drawn over
    /// the pictures (dots, the clock and pushed text stay put on the screen
    /// while the window moves, so each frame writes them where the window
    /// shows: they need the other buffer), and the pictures the scene wants
    /// fit in the buffer around what shows. A slide then writes the picture
    /// coming in once, beside the one on screen, where two buffers took it
    /// twice, and its frames move the window over one buffer.
    public func drawBeside(into buffer: ScanoutBuffer, shown: PixelPoint) -> PixelPoint? {
        guard fade == nil, !scene.empty, scene.stamp == nil, scene.textStamp == nil,
              !scene.spans.contains(where: { $0.zoom != nil }),
              plan(page: scene.page, pageCount: scene.pageCount) == nil else { return nil }
        let target = Target(buffer, axis: axis)
        let at = axis == .horizontal ? shown.x : shown.y
        guard let i = records.firstIndex(where: { $0.index == buffer.index && $0.matches(target) }),
              !records[i].empty, records[i].window == at,
              records[i].dots == nil, records[i].stamp == nil, records[i].textStamp == nil else { return nil }
        var record = records[i]
        let extent = compositor.axisExtent
        let room = target.length - extent
        pixelsWritten = 0
        repaint.removeAll(keepingCapacity: true)
        let window: Int
        if let match = matchingWindow(scene, record: record, room: room) {
            window = match
        } else if let beside = placement(scene, record: record, avoiding: at, length: target.length) {
            window = beside
            setDesired(scene, window: window, from: scene.low, to: scene.high, length: target.length)
            collectRepaint(record)
            writeContent(scene, window: window, into: target)
            record.replace(with: desired, scratch: &merged)
        } else {
            return nil
        }
        record.window = window
        records[i] = record
        return axis == .horizontal ? PixelPoint(x: window, y: 0) : PixelPoint(x: 0, y: window)
    }

    /// The window at which the buffer can hold all of `scene` (`low..<high`)
    /// writing the least, and (`avoiding`) none of it inside `shown..<shown +
    /// extent`, the window on screen: the scene at either end of the buffer,
    /// or where a picture of it already lies. nil: every such window would
    /// write where the screen shows.
    func placement(_ scene: Scene, record: Record, avoiding shown: Int? = nil, length: Int) -> Int? {
        let extent = compositor.axisExtent
        // At the end the content comes from, first (it wins a tie): the
        // picture coming to rest then lies where the next one has room.
        var candidates = scene.low < 0 && scene.high <= extent ? [length - scene.high, -scene.low] : [-scene.low, length - scene.high]
        for span in scene.spans {
            guard let image = span.image, span.zoom == nil else { continue }
            for piece in record.content {
                guard case let .image(id, origin) = piece.content, id == image.identity else { continue }
                candidates.append(origin - span.start + span.source)
            }
        }
        var best: (window: Int, cost: Int)?
        for s in candidates where s + scene.low >= 0 && s + scene.high <= length && s != best?.window {
            setDesired(scene, window: s, from: scene.low, to: scene.high, length: length)
            repaint.removeAll(keepingCapacity: true)
            collectRepaint(record)
            if let shown, repaint.contains(where: { $0.start < shown + extent && shown < $0.end }) { continue }
            let cost = Self.total(repaint)
            if best == nil || cost < best!.cost { best = (s, cost) }
        }
        repaint.removeAll(keepingCapacity: true)
        return best?.window
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

    func write(_ scene: Scene, into target: Target, record: inout Record) -> Int {
        pixelsWritten = 0
        // A zoom's widened picture goes with the zoom.
        if widenedZoom != nil, !scene.spans.contains(where: { $0.zoom != nil }) { widenedZoom = nil }
        let extent = compositor.axisExtent
        if let fade, !scene.empty, !incoming.empty {
            writeCrossfade(widenedForFade(scene), widenedForFade(incoming), fraction: fade, into: target, record: &record)
            return 0
        }
        // A crossfade's widened pictures go with it.
        if !widenedFade.isEmpty { widenedFade.removeAll() }
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
            // Moving, with room: lay the stretch ahead out too, where the
            // least is written (at an end of the buffer, or where a picture
            // of it already lies).
            window = placement(scene, record: record, length: target.length) ?? -scene.low
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
        writeStamp(scene.stamp, scene, window: window, into: target, mark: \.stamp, record: &record)
        writeStamp(scene.textStamp, scene, window: window, into: target, mark: \.textStamp, record: &record)
        record.window = window
        return window
    }

    /// A window at which the buffer already holds everything `scene` shows
    /// in the panel's window (a frame of a slide over laid-out content).
    func matchingWindow(_ scene: Scene, record: Record, room: Int) -> Int? {
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

    func windowMatches(_ scene: Scene, record: Record, window s: Int) -> Bool {
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

    func content(_ span: SceneSpan, window s: Int) -> Content {
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
    func setDesired(_ scene: Scene, window s: Int, from: Int, to: Int, length: Int) {
        desired.removeAll(keepingCapacity: true)
        for span in scene.spans {
            let a = max(span.start, from) + s, b = min(span.end, to) + s
            let lo = max(a, 0), hi = min(b, length)
            guard hi > lo else { continue }
            desired.append(Piece(start: lo, end: hi, content: content(span, window: s)))
        }
    }

    /// The stretches where the buffer holds something else than `desired`.
    func collectRepaint(_ record: Record) {
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

    func addRepaint(_ a: Int, _ b: Int) {
        if let last = repaint.last, last.end == a {
            repaint[repaint.count - 1].end = b
        } else {
            repaint.append(Interval(start: a, end: b))
        }
    }

    static func total(_ intervals: [Interval]) -> Int { intervals.reduce(0) { $0 + $1.end - $1.start } }
}
