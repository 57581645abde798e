import CarouselCore
import CarouselImaging

/// What a frame looks like, beyond the carousel's geometry.
public struct RenderStyle: Equatable, Sendable {
    public var background = PixelColor.black
    public var fit = FitMode.contain
    public var indicator = IndicatorStyle()
    public init() {}
}

/// Draws the carousel into a frame: items at the positions `Geometry` gives
/// (the same numbers the model hit-tests with), background in the gaps and
/// letterbox, then the page dots.
///
/// Items arrive pre-scaled to `itemPixelSize` (fit mode and letterbox already
/// applied by the cache, off the render path), so a frame is row copies and
/// fills: each frame pixel is written once, and nothing is allocated.
public struct Compositor: Sendable {
    public let geometry: Geometry
    public let style: RenderStyle
    /// Item extent along the axis, whole pixels.
    public let itemExtent: Int
    private let background: UInt32

    public init(geometry: Geometry, style: RenderStyle) {
        self.geometry = geometry
        self.style = style
        itemExtent = max(1, Int(geometry.itemExtent.rounded()))
        background = style.background.opaqueWord
    }

    /// The size every item image must have: the item's extent along the axis by the full cross extent.
    public var itemPixelSize: PixelSize {
        let cross = Int(geometry.crossExtent)
        return geometry.vertical ? PixelSize(width: cross, height: itemExtent) : PixelSize(width: itemExtent, height: cross)
    }

    /// Where slot `slot` starts along the axis at `offset`, in whole pixels
    /// (rounded half up, the rule hit-testing in pixels agrees with).
    public func pixelStart(ofSlot slot: Int, offset: Double) -> Int {
        Int((geometry.start(ofSlot: slot, offset: offset) + 0.5).rounded(.down))
    }

    /// One item on screen: which item, where along the axis.
    public struct Placement: Equatable, Sendable {
        public var index: Int
        public var start: Int
    }

    /// The items on screen at `offset`, in slot order.
    public func placements(offset: Double, count: Int, wrap: Bool) -> [Placement] {
        guard let slots = geometry.visibleSlots(offset: offset, count: count, wrap: wrap) else { return [] }
        var result: [Placement] = []
        result.reserveCapacity(slots.count)
        for slot in slots {
            guard let index = Geometry.index(ofSlot: slot, count: count, wrap: wrap) else { continue }
            result.append(Placement(index: index, start: pixelStart(ofSlot: slot, offset: offset)))
        }
        return result
    }

    /// Composes the frame for `offset`. `image(i)` returns item `i`'s
    /// prepared picture, or `nil` when it is not decoded yet (drawn as background).
    /// `page`/`pageCount` drive the dots; with `count == 0` the empty-folder picture is drawn.
    public func compose(into frame: Frame, offset: Double, count: Int, wrap: Bool, page: Int, pageCount: Int,
                        image: (Int) -> DecodedImage?) {
        compose(into: frame, placements: placements(offset: offset, count: count, wrap: wrap), count: count,
                page: page, pageCount: pageCount, image: image)
    }

    /// `compose` with the placements already computed (the render loop needs
    /// them for the decode cache too: one computation per frame).
    public func compose(into frame: Frame, placements placed: [Placement], count: Int, page: Int, pageCount: Int,
                        image: (Int) -> DecodedImage?) {
        guard count > 0 else {
            drawEmpty(into: frame)
            return
        }
        if geometry.vertical {
            composeVertical(frame, placed, image)
        } else {
            composeHorizontal(frame, placed, image)
        }
        drawIndicator(into: frame, page: page, pageCount: pageCount)
    }

    private func composeHorizontal(_ frame: Frame, _ placed: [Placement], _ image: (Int) -> DecodedImage?) {
        // Spans along x, computed once per frame: [x0, x1) from an image or background.
        struct Span { var x0: Int; var x1: Int; var image: DecodedImage?; var sourceX: Int }
        var spans: [Span] = []
        spans.reserveCapacity(placed.count)
        var cursor = 0
        for p in placed {
            let x0 = max(p.start, cursor, 0)
            let x1 = min(p.start + itemExtent, frame.width)
            guard x1 > x0 else { continue }
            var img = image(p.index)
            if let i = img, i.width < x1 - p.start || i.height < frame.height { img = nil }
            spans.append(Span(x0: x0, x1: x1, image: img, sourceX: x0 - p.start))
            cursor = x1
        }
        for y in 0..<frame.height {
            let row = frame.row(y)
            var x = 0
            for span in spans {
                if span.x0 > x { (row + x).update(repeating: background, count: span.x0 - x) }
                if let img = span.image {
                    img.withUnsafeBytes { raw in
                        let source = (raw.baseAddress! + y * img.stride).assumingMemoryBound(to: UInt32.self) + span.sourceX
                        (row + span.x0).update(from: source, count: span.x1 - span.x0)
                    }
                } else {
                    (row + span.x0).update(repeating: background, count: span.x1 - span.x0)
                }
                x = span.x1
            }
            if x < frame.width { (row + x).update(repeating: background, count: frame.width - x) }
        }
    }

    private func composeVertical(_ frame: Frame, _ placed: [Placement], _ image: (Int) -> DecodedImage?) {
        var y = 0
        for p in placed {
            let y0 = max(p.start, y, 0)
            let y1 = min(p.start + itemExtent, frame.height)
            guard y1 > y0 else { continue }
            for row in y..<y0 { frame.row(row).update(repeating: background, count: frame.width) }
            var img = image(p.index)
            if let i = img, i.height < p.start + itemExtent - p.start || i.width < frame.width { img = nil }
            if let img {
                img.withUnsafeBytes { raw in
                    for row in y0..<y1 {
                        let source = (raw.baseAddress! + (row - p.start) * img.stride).assumingMemoryBound(to: UInt32.self)
                        frame.row(row).update(from: source, count: frame.width)
                    }
                }
            } else {
                for row in y0..<y1 { frame.row(row).update(repeating: background, count: frame.width) }
            }
            y = y1
        }
        for row in y..<frame.height { frame.row(row).update(repeating: background, count: frame.width) }
    }

    // MARK: - Page dots

    /// The dot centres and which of them is current, for `pageCount` pages on a frame of `width × height`.
    ///
    /// With more pages than fit along the edge (a folder of thousands), as
    /// many dots as fit are shown and the current dot moves proportionally.
    public func dots(page: Int, pageCount: Int, width: Int, height: Int) -> (centres: [(x: Double, y: Double)], current: Int)? {
        let s = style.indicator
        guard s.enabled, pageCount > 0, !(pageCount == 1 && s.hidesForSinglePage) else { return nil }
        let horizontal = s.position == .bottom || s.position == .top
        let extent = Double(horizontal ? width : height)
        let step = s.size + s.spacing
        let fitting = max(1, Int((extent * 0.9 + s.spacing) / step))
        let shown = min(pageCount, fitting)
        let current = shown == pageCount ? page
            : Int((Double(page) * Double(shown - 1) / Double(max(pageCount - 1, 1))).rounded())
        let length = Double(shown) * s.size + Double(shown - 1) * s.spacing
        let first = (extent - length) / 2 + s.size / 2
        let across: Double
        switch s.position {
        case .bottom: across = Double(height) - s.margin - s.size / 2
        case .top, .left: across = s.margin + s.size / 2
        case .right: across = Double(width) - s.margin - s.size / 2
        }
        let centres = (0..<shown).map { i -> (x: Double, y: Double) in
            let along = first + Double(i) * step
            return horizontal ? (along, across) : (across, along)
        }
        return (centres, min(max(current, 0), shown - 1))
    }

    private func drawIndicator(into frame: Frame, page: Int, pageCount: Int) {
        guard let (centres, current) = dots(page: page, pageCount: pageCount, width: frame.width, height: frame.height) else { return }
        for (i, c) in centres.enumerated() {
            let color = i == current ? style.indicator.currentColor : style.indicator.color
            fillCircle(frame, cx: c.x, cy: c.y, radius: style.indicator.size / 2, color: color)
        }
    }

    /// An anti-aliased disc: coverage is the distance to the edge, clamped to one pixel.
    func fillCircle(_ frame: Frame, cx: Double, cy: Double, radius: Double, color: PixelColor) {
        let x0 = max(0, Int((cx - radius - 1).rounded(.down)))
        let x1 = min(frame.width - 1, Int((cx + radius + 1).rounded(.up)))
        let y0 = max(0, Int((cy - radius - 1).rounded(.down)))
        let y1 = min(frame.height - 1, Int((cy + radius + 1).rounded(.up)))
        guard x0 <= x1, y0 <= y1 else { return }
        let alpha = Double(color.alpha) / 255
        for y in y0...y1 {
            let row = frame.row(y)
            let dy = Double(y) + 0.5 - cy
            for x in x0...x1 {
                let dx = Double(x) + 0.5 - cx
                let coverage = min(max(radius + 0.5 - (dx * dx + dy * dy).squareRoot(), 0), 1)
                guard coverage > 0 else { continue }
                row[x] = blend(row[x], color, alpha * coverage)
            }
        }
    }

    /// `color` over `dst` with opacity `a` (straight alpha in, opaque out).
    func blend(_ dst: UInt32, _ color: PixelColor, _ a: Double) -> UInt32 {
        func channel(_ d: UInt32, _ s: UInt8) -> UInt32 {
            UInt32((Double(s) * a + Double(d & 0xFF) * (1 - a)).rounded())
        }
        return 0xFF00_0000 | channel(dst >> 16, color.red) << 16 | channel(dst >> 8, color.green) << 8 | channel(dst, color.blue)
    }

    // MARK: - Empty folder

    /// No images: the background and a quiet picture-frame icon in the middle
    /// (a frame outline, a sun and a hill), drawn in a colour half-way to grey.
    public func drawEmpty(into frame: Frame) {
        for y in 0..<frame.height { frame.row(y).update(repeating: background, count: frame.width) }
        let bg = style.background
        let ink = PixelColor(red: UInt8((Int(bg.red) + 128) / 2 + 20), green: UInt8((Int(bg.green) + 128) / 2 + 20),
                             blue: UInt8((Int(bg.blue) + 128) / 2 + 20))
        let unit = Double(min(frame.width, frame.height)) / 12
        let cx = Double(frame.width) / 2, cy = Double(frame.height) / 2
        let w = unit * 2, h = unit * 1.5, t = max(2, unit / 12)
        func rect(_ x: Double, _ y: Double, _ rw: Double, _ rh: Double) {
            let xa = max(0, Int(x.rounded())), xb = min(frame.width, Int((x + rw).rounded()))
            let ya = max(0, Int(y.rounded())), yb = min(frame.height, Int((y + rh).rounded()))
            guard xa < xb, ya < yb else { return }
            for row in ya..<yb { (frame.row(row) + xa).update(repeating: ink.opaqueWord, count: xb - xa) }
        }
        rect(cx - w, cy - h, 2 * w, t)
        rect(cx - w, cy + h - t, 2 * w, t)
        rect(cx - w, cy - h, t, 2 * h)
        rect(cx + w - t, cy - h, t, 2 * h)
        fillCircle(frame, cx: cx + w * 0.45, cy: cy - h * 0.4, radius: unit * 0.25, color: ink)
        // A hill: rows of decreasing width.
        let base = cy + h - t, top = cy - h * 0.1
        var y = top
        while y < base {
            let half = (y - top) / (base - top) * w * 0.8
            rect(cx - w * 0.2 - half, y, 2 * half, 1)
            y += 1
        }
    }
}
