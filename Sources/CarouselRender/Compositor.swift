import CarouselCore
import CarouselImaging

/// What a frame looks like, beyond the carousel's geometry.
public struct RenderStyle: Equatable, Sendable {
    public var background = PixelColor.black
    public var fit = FitMode.contain
    /// The fill around the picture with `fit = blur`.
    public var blur = BlurStyle()
    public var indicator = IndicatorStyle()
    public init() {}
}

/// One stretch of a frame along the panel's scroll axis, across the whole
/// cross extent: a prepared item picture, or background.
public struct SceneSpan: Sendable {
    /// Where the stretch starts and ends along the panel axis, window coordinates.
    public var start: Int
    public var end: Int
    /// The item's picture, prepared in panel orientation; `nil`: background.
    public var image: DecodedImage?
    /// The picture's coordinate along the axis shown at `start`.
    public var source: Int
    /// A zoomed picture: drawn scaled through `zoom` instead of copied.
    public var zoom: SpanZoom? = nil
}

/// How a zoomed item's span is drawn: window pixel (X, Y) (panel
/// orientation; X along the panel's x axis) shows `picture` at
/// `((X + 0.5)·scaleX + offsetX, (Y + 0.5)·scaleY + offsetY)`.
public struct SpanZoom: Equatable, Sendable {
    public var picture: DecodedImage
    public var scaleX: Double
    public var scaleY: Double
    public var offsetX: Double
    public var offsetY: Double

    public static func == (a: SpanZoom, b: SpanZoom) -> Bool {
        a.picture.identity == b.picture.identity && a.scaleX == b.scaleX && a.scaleY == b.scaleY
            && a.offsetX == b.offsetX && a.offsetY == b.offsetY
    }
}

/// What a frame needs to draw a zoomed picture: where the model says it is
/// (`view`), and a decode at the resolution the zoom needs, if one is ready
/// (`picture`, panel-oriented like the item's own; `nil`: the item's
/// screen-size picture is scaled up).
public struct ZoomLayer: Sendable {
    public var view: ZoomView
    public var picture: DecodedImage?
    public init(view: ZoomView, picture: DecodedImage? = nil) {
        self.view = view
        self.picture = picture
    }
}

/// Text that stays put on the screen (the clock, pushed text), drawn over whatever lies
/// under it: a premultiplied ARGB picture in panel orientation and where its
/// top-left corner goes in the window (panel pixels).
public struct SceneStamp: Sendable {
    public var image: DecodedImage
    public var x: Int
    public var y: Int
    public init(image: DecodedImage, x: Int, y: Int) {
        self.image = image
        self.x = x
        self.y = y
    }
}

/// What a frame shows, in panel orientation: the carousel as spans along
/// the panel axis (the window is `0..<extent`; a scene laid out ahead of a
/// slide reaches beyond it), the page dots, or the empty-folder picture.
/// Rebuilt in place every frame (`Compositor.layOut`), so that drawing
/// allocates nothing.
public struct Scene: Sendable {
    public internal(set) var spans: [SceneSpan] = []
    /// The stretch the spans cover along the panel axis: `low..<high`, with
    /// the window `0..<extent` inside it.
    public internal(set) var low = 0
    public internal(set) var high = 0
    /// No pictures: the empty-folder picture, no dots.
    public internal(set) var empty = false
    public internal(set) var page = 0
    public internal(set) var pageCount = 0
    /// Every item in the window had its picture.
    public internal(set) var complete = true
    /// The clock, fixed in the window while pictures slide under it; nil:
    /// none. Not touched by `layOut`: the daemon sets it when the minute changes.
    public var stamp: SceneStamp?
    /// Pushed text (`[overlay] text_file`, `overlay text`), a stamp like
    /// the clock; nil: none. Not touched by `layOut` either.
    public var textStamp: SceneStamp?

    public init() {}
}

/// Lays the carousel out on the panel: items at the positions `Geometry`
/// gives (the same numbers the model hit-tests with, in logical pixels),
/// turned into panel orientation, with background in the gaps and letterbox,
/// then the page dots.
///
/// Items arrive prepared: scaled to `itemPixelSize` with fit mode and
/// letterbox applied, then turned to panel orientation (`itemPanelSize`), by
/// the cache, off the render path. So a frame in any rotation is row copies
/// and fills along the panel's own rows (`ScreenWriter`).
public struct Compositor: Sendable {
    public let geometry: Geometry
    public let style: RenderStyle
    /// How the logical layout is turned on the panel.
    public let rotation: Rotation
    /// The panel's size (scanout orientation).
    public let panel: PixelSize
    /// Item extent along the axis, whole pixels.
    public let itemExtent: Int
    /// The logical axis runs along the panel's x axis (else its y axis).
    public let panelAxisIsHorizontal: Bool
    /// Logical positions along the axis grow the other way on the panel.
    public let reversed: Bool
    /// The viewport's extent along the axis, whole pixels (logical and panel alike).
    public let axisExtent: Int
    let background: UInt32

    /// `rotation` turns the logical layout (`geometry`'s viewport) onto the panel.
    public init(geometry: Geometry, style: RenderStyle, rotation: Rotation = .none) {
        self.geometry = geometry
        self.style = style
        self.rotation = rotation
        itemExtent = max(1, Int(geometry.itemExtent.rounded()))
        background = style.background.opaqueWord
        let logicalWidth = Int(geometry.viewport.width), logicalHeight = Int(geometry.viewport.height)
        let turned = rotation == .clockwise90 || rotation == .clockwise270
        panel = turned ? PixelSize(width: logicalHeight, height: logicalWidth)
            : PixelSize(width: logicalWidth, height: logicalHeight)
        panelAxisIsHorizontal = geometry.vertical == turned
        // Where a logical coordinate grows the other way on the panel (see Rotation.panel).
        reversed = geometry.vertical
            ? rotation == .upsideDown || rotation == .clockwise90
            : rotation == .upsideDown || rotation == .clockwise270
        axisExtent = geometry.vertical ? logicalHeight : logicalWidth
    }

    /// The size every item image must have before it is turned: the item's
    /// extent along the axis by the full cross extent.
    public var itemPixelSize: PixelSize {
        let cross = Int(geometry.crossExtent)
        return geometry.vertical ? PixelSize(width: cross, height: itemExtent) : PixelSize(width: itemExtent, height: cross)
    }

    /// The size of an item image turned to panel orientation (what the cache hands out).
    public var itemPanelSize: PixelSize {
        let size = itemPixelSize
        return rotation == .clockwise90 || rotation == .clockwise270
            ? PixelSize(width: size.height, height: size.width) : size
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
        var result: [Placement] = []
        placements(offset: offset, count: count, wrap: wrap, into: &result)
        return result
    }

    /// The items on screen at `offset`, in slot order, into `result` (its storage is reused).
    public func placements(offset: Double, count: Int, wrap: Bool, into result: inout [Placement]) {
        result.removeAll(keepingCapacity: true)
        guard let slots = geometry.visibleSlots(offset: offset, count: count, wrap: wrap) else { return }
        for slot in slots {
            guard let index = Geometry.index(ofSlot: slot, count: count, wrap: wrap) else { continue }
            result.append(Placement(index: index, start: pixelStart(ofSlot: slot, offset: offset)))
        }
    }

    /// Lays out the frame for `offset` into `scene`. `image(i)` returns item
    /// `i`'s prepared picture, or `nil` when it is not decoded yet (drawn as
    /// background). `page`/`pageCount` drive the dots; with `count == 0` the
    /// empty-folder picture is drawn. `ahead` logical pixels past the
    /// viewport are laid out too, on the side content comes from when the
    /// offset grows (`ahead > 0`) or shrinks (`ahead < 0`): a slide can then
    /// move the scan-out window over pixels already written.
    ///
    /// `zoom`: the zoomed item's spans are drawn from its picture scaled
    /// and cropped to its frame as the zoom says (see `spanZoom`); `framed`:
    /// other items drawn so too (Ken Burns's framings), where no zoom is.
    public func layOut(_ scene: inout Scene, offset: Double, count: Int, wrap: Bool, page: Int, pageCount: Int,
                       ahead: Int = 0, zoom: ZoomLayer? = nil, framed: [ZoomLayer] = [], image: (Int) -> DecodedImage?) {
        scene.spans.removeAll(keepingCapacity: true)
        scene.page = page
        scene.pageCount = pageCount
        scene.empty = count <= 0
        scene.complete = count > 0
        scene.low = 0
        scene.high = axisExtent
        guard count > 0 else { return }
        let lo = min(ahead, 0), hi = axisExtent + max(ahead, 0)
        let expected = itemPanelSize
        var cursor = lo
        func add(_ x0: Int, _ x1: Int, _ picture: DecodedImage?, itemStart: Int, zoomed: SpanZoom? = nil) {
            // Logical [x0, x1) of an item starting at `itemStart`, onto the panel axis.
            if reversed {
                scene.spans.append(SceneSpan(start: axisExtent - x1, end: axisExtent - x0, image: picture,
                                             source: picture == nil ? 0 : itemStart + itemExtent - x1, zoom: zoomed))
            } else {
                scene.spans.append(SceneSpan(start: x0, end: x1, image: picture, source: picture == nil ? 0 : x0 - itemStart,
                                             zoom: zoomed))
            }
        }
        if let slots = geometry.slots(from: Double(lo), to: Double(hi), offset: offset, count: count, wrap: wrap) {
            for slot in slots {
                guard let index = Geometry.index(ofSlot: slot, count: count, wrap: wrap) else { continue }
                let start = pixelStart(ofSlot: slot, offset: offset)
                let x0 = max(start, cursor), x1 = min(start + itemExtent, hi)
                guard x1 > x0 else { continue }
                if x0 > cursor { add(cursor, x0, nil, itemStart: 0) }
                var picture = image(index)
                if let p = picture, p.size != expected { picture = nil }
                if picture == nil, x0 < axisExtent, x1 > 0 { scene.complete = false }
                var zoomed: SpanZoom?
                let layer = zoom?.view.item == index ? zoom : framed.first { $0.view.item == index }
                if let layer, let picture {
                    zoomed = spanZoom(layer.view, itemStart: start, picture: layer.picture ?? picture, itemPicture: picture)
                }
                add(x0, x1, picture, itemStart: start, zoomed: zoomed)
                cursor = x1
            }
        }
        if cursor < hi { add(cursor, hi, nil, itemStart: 0) }
        if reversed {
            scene.spans.reverse()
            scene.low = axisExtent - hi
            scene.high = axisExtent - lo
        } else {
            scene.low = lo
            scene.high = hi
        }
    }

    /// How the zoomed item starting at logical `itemStart` along the axis is
    /// drawn. The model's zoom is logical (the item's point `u` shows at
    /// `frame origin + t + s·u`); the pictures are turned to the panel, so
    /// the translation turns with them: with `turn` the continuous map of the
    /// item's box onto its panel box (`turn(v) = L·v + c`), a panel box point
    /// shows the panel picture's `u' = (b' − t') / s` with `t' = turn(t) − s·c`.
    /// `picture` may be larger than `itemPicture` (a decode for the zoom):
    /// its coordinates are `u'` times their size ratio.
    func spanZoom(_ view: ZoomView, itemStart: Int, picture: DecodedImage, itemPicture: DecodedImage) -> SpanZoom? {
        let s = view.scale
        guard s.isFinite, s > 0 else { return nil }
        let logical = itemPixelSize
        let w = Double(logical.width), h = Double(logical.height)
        func turn(_ x: Double, _ y: Double) -> (Double, Double) {
            switch rotation {
            case .none: (x, y)
            case .clockwise90: (h - y, x)
            case .upsideDown: (w - x, h - y)
            case .clockwise270: (y, w - x)
            }
        }
        let c = turn(0, 0)
        let t = turn(view.translation.x, view.translation.y)
        let tx = t.0 - s * c.0, ty = t.1 - s * c.1
        // Where the item's panel box starts in the window (as `add` places its span).
        let along = Double(reversed ? axisExtent - itemStart - itemExtent : itemStart)
        let (px, py) = panelAxisIsHorizontal ? (along, 0.0) : (0.0, along)
        let rx = Double(picture.width) / Double(itemPicture.width)
        let ry = Double(picture.height) / Double(itemPicture.height)
        return SpanZoom(picture: picture, scaleX: rx / s, scaleY: ry / s,
                        offsetX: -(px + tx) * rx / s, offsetY: -(py + ty) * ry / s)
    }

    /// Composes the frame for `offset` into `frame` (the panel's size), whole.
    public func compose(into frame: Frame, offset: Double, count: Int, wrap: Bool, page: Int, pageCount: Int,
                        image: (Int) -> DecodedImage?) {
        var scene = Scene()
        layOut(&scene, offset: offset, count: count, wrap: wrap, page: page, pageCount: pageCount, image: image)
        ScreenWriter(compositor: self).render(scene, into: frame)
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

    /// An anti-aliased disc: coverage is the distance to the edge, clamped to one pixel.
    func fillCircle(_ frame: Frame, cx: Double, cy: Double, radius: Double, color: PixelColor) {
        guard let b = Self.discBounds(cx: cx, cy: cy, radius: radius, width: frame.width, height: frame.height) else { return }
        let alpha = Double(color.alpha) / 255
        for y in b.y0...b.y1 {
            let row = frame.row(y)
            for x in b.x0...b.x1 {
                let coverage = Self.coverage(x: x, y: y, cx: cx, cy: cy, radius: radius)
                guard coverage > 0 else { continue }
                row[x] = blend(row[x], color, alpha * coverage)
            }
        }
    }

    /// The pixels (inclusive) a disc may touch on a `width × height` picture, or nil off it.
    static func discBounds(cx: Double, cy: Double, radius: Double, width: Int,
                           height: Int) -> (x0: Int, y0: Int, x1: Int, y1: Int)? {
        let x0 = max(0, Int((cx - radius - 1).rounded(.down)))
        let x1 = min(width - 1, Int((cx + radius + 1).rounded(.up)))
        let y0 = max(0, Int((cy - radius - 1).rounded(.down)))
        let y1 = min(height - 1, Int((cy + radius + 1).rounded(.up)))
        return x0 <= x1 && y0 <= y1 ? (x0, y0, x1, y1) : nil
    }

    /// How much of pixel (x, y) a disc covers: the distance from the pixel's
    /// centre to the edge, clamped to one pixel.
    static func coverage(x: Int, y: Int, cx: Double, cy: Double, radius: Double) -> Double {
        let dx = Double(x) + 0.5 - cx, dy = Double(y) + 0.5 - cy
        return min(max(radius + 0.5 - (dx * dx + dy * dy).squareRoot(), 0), 1)
    }

    /// `color` over `dst` with opacity `a` (straight alpha in, opaque out).
    func blend(_ dst: UInt32, _ color: PixelColor, _ a: Double) -> UInt32 {
        func channel(_ d: UInt32, _ s: UInt8) -> UInt32 {
            Self.rounded(Double(s) * a + Double(d & 0xFF) * (1 - a))
        }
        return 0xFF00_0000 | channel(dst >> 16, color.red) << 16 | channel(dst >> 8, color.green) << 8 | channel(dst, color.blue)
    }

    /// `v.rounded()` (half away from zero) as a channel, for `0 <= v <= 255`,
    /// without a call: x86-64's baseline has no rounding instruction, so
    /// `rounded()` calls libm's `round`, three times per blended pixel.
    /// Exact: `v - trunc(v)` has no rounding error in this range.
    @inline(__always)
    static func rounded(_ v: Double) -> UInt32 {
        let t = Int(v)
        return UInt32(truncatingIfNeeded: v - Double(t) >= 0.5 ? t + 1 : t)
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

extension Compositor {
    /// Item `view.item`'s picture drawn once as `view` frames it, onto a
    /// picture of the item's panel size (panel orientation, as the cache
    /// hands pictures out): what a framed page shows while the carousel
    /// moves, so that a slide or a drag moves it as any other picture
    /// (its window over the buffers) rather than scaling it every frame.
    /// `picture` may be a sharper decode than `itemPicture` (see `spanZoom`).
    public func framedPicture(_ view: ZoomView, picture: DecodedImage, itemPicture: DecodedImage) -> DecodedImage? {
        let size = itemPanelSize
        guard itemPicture.size == size,
              let zoom = spanZoom(view, itemStart: reversed ? axisExtent - itemExtent : 0, picture: picture, itemPicture: itemPicture)
        else { return nil }
        // pixman scales r8g8b8 through its generic fetchers, some 13 times
        // slower (ScreenWriter.zoomSource): a packed picture is widened first.
        let source = picture.format == .rgb888 ? ((try? picture.widened()) ?? picture) : picture
        var drawn = true
        let out = try? DecodedImage(width: size.width, height: size.height, format: .xrgb8888) { buffer, stride in
            do {
                try ImageScaler.drawTransformed(source, into: buffer.baseAddress!, width: size.width, height: size.height,
                                                stride: stride, scaleX: zoom.scaleX, scaleY: zoom.scaleY,
                                                offsetX: zoom.offsetX, offsetY: zoom.offsetY)
            } catch {
                drawn = false
            }
        }
        return drawn ? out : nil
    }
}
