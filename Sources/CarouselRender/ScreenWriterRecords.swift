import CarouselCore
import CarouselDisplay
import CarouselImaging
#if canImport(Glibc)
import Glibc
#endif

// What ScreenWriter keeps about each buffer and a frame's pieces: its own
// types, nested so that their short names stay its own.
extension ScreenWriter {
    // MARK: - What a buffer holds

    /// A buffer's memory as the writer sees it.
    struct Target {
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

    enum Content: Equatable {
        /// Never written by this writer, or written over (dots restored off screen).
        case unknown
        case background
        /// Picture `identity`, its axis coordinate 0 at buffer coordinate `origin`.
        case image(UInt64, origin: Int)
        /// A zoomed picture, drawn through this map.
        case zoomed(ZoomKey)
    }

    /// A zoomed span's picture and map, in buffer coordinates.
    struct ZoomKey: Equatable {
        var picture: UInt64
        var scaleX, scaleY, offsetX, offsetY: Double
    }

    struct Piece {
        var start: Int
        var end: Int
        var content: Content
    }

    /// A stretch along the panel axis from one picture (`source`, see
    /// `addStrips`; its rows `stride` bytes apart) or background (`source` nil
    /// and `zoom` negative). A plain value: row loops copy it freely.
    struct Strip {
        var x0: Int
        var x1: Int
        var source: UnsafeRawPointer?
        var stride: Int
        /// A zoomed picture's stretch, drawn scaled: its index in `ScreenWriter.zooms`; -1: none.
        var zoom = -1
        /// The source's bytes a pixel: 4, or 3 for a picture kept packed
        /// (`PixelFormat.rgb888`), widened as it is copied.
        var pixelBytes = 4
    }

    /// The clock as `ScreenWriter.blend` draws it: its rectangle in buffer
    /// coordinates (clipped to the window), its pixels, and where its top-left
    /// corner lies in the buffer.
    struct OverlayClock {
        var rect: Rect
        var pixels: UnsafeRawPointer
        var stride: Int
        var x: Int
        var y: Int
    }

    /// The clock, the pushed text and the dots of one rectangle or crossfade frame (`ScreenWriter.withOverlay`).
    struct Overlay {
        var clock: OverlayClock?
        /// The pushed text, drawn as the clock is.
        var text: OverlayClock?
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
    struct Fade {
        var start: Int
        var end: Int
        var outgoing: UnsafeRawPointer
        var outgoingStride: Int
        var incoming: UnsafeRawPointer
        var incomingStride: Int
        /// Whether either side is a picture kept packed (`Strip.pixelBytes` 3),
        /// widened into a row of its own before it is blended.
        var outgoingPacked = false
        var incomingPacked = false
    }

    struct Interval {
        var start: Int
        var end: Int
    }

    struct DotsKey: Equatable {
        var page: Int
        var pageCount: Int
    }

    struct Rect: Equatable {
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

    struct DotsMark {
        var key: DotsKey
        var rect: Rect
    }

    struct StampMark {
        var key: UInt64
        var rect: Rect
    }

    struct DotsPlan {
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

    struct Record {
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
        /// Where the pushed text was drawn, and which picture of it.
        var textStamp: StampMark?
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
}
