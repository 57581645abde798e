/// Pixel geometry along the scroll axis (SPEC.md section 2).
///
/// With `E` the item extent, `S` the spacing and `pitch = E + S`, item `i`
/// at scroll offset `x` starts at `lead + (i − x)·pitch`, where `lead` centres
/// the item (`center`) or puts it at the leading edge (`edge`). The renderer
/// and the model's hit-testing both use this type, so what is drawn under a
/// finger is what the finger selects.
public struct Geometry: Equatable, Sendable {
    public let viewport: Viewport
    public let vertical: Bool
    /// Viewport extent along the scroll axis.
    public let axisExtent: Double
    /// Viewport extent across the scroll axis.
    public let crossExtent: Double
    /// Item extent along the axis, `E`.
    public let itemExtent: Double
    /// `E + spacing`: pixels per unit of scroll offset.
    public let pitch: Double
    /// Where the item at the current offset starts.
    public let lead: Double

    public init(viewport: Viewport, settings: CarouselSettings) {
        self.viewport = viewport
        vertical = settings.vertical
        axisExtent = settings.vertical ? viewport.height : viewport.width
        crossExtent = settings.vertical ? viewport.width : viewport.height
        switch settings.itemSize {
        case .fraction(let f): itemExtent = f * axisExtent
        case .pixels(let p): itemExtent = p
        }
        // A pitch of zero would make offsets infinite; the config schema refuses
        // item sizes <= 0, this guards programmatic misuse.
        pitch = max(itemExtent + settings.spacing, 1e-6)
        lead = settings.alignment == .center ? (axisExtent - itemExtent) / 2 : 0
    }

    /// The coordinate of `point` along the scroll axis.
    public func axis(_ point: Point) -> Double { vertical ? point.y : point.x }
    /// The coordinate of `point` across the scroll axis.
    public func cross(_ point: Point) -> Double { vertical ? point.x : point.y }

    /// Where slot `slot` (an unwrapped item position) starts along the axis at `offset`.
    public func start(ofSlot slot: Int, offset: Double) -> Double {
        lead + (Double(slot) - offset) * pitch
    }

    /// The slots (unwrapped item positions) whose extent intersects the viewport at `offset`.
    ///
    /// Without wrap, slots outside `0..<count` are left out. With wrap, slot `k`
    /// shows item `k mod count`: with fewer items than visible slots an item
    /// appears in more than one slot, which is what keeps the wrap seamless.
    public func visibleSlots(offset: Double, count: Int, wrap: Bool) -> ClosedRange<Int>? {
        slots(from: 0, to: axisExtent, offset: offset, count: count, wrap: wrap)
    }

    /// The slots whose extent intersects `low..<high` along the axis at
    /// `offset`: the viewport (`visibleSlots`), or a longer stretch the
    /// renderer lays out ahead of a slide.
    public func slots(from low: Double, to high: Double, offset: Double, count: Int, wrap: Bool) -> ClosedRange<Int>? {
        guard count > 0 else { return nil }
        // start(k) < high and start(k) + E > low
        var first = Int(((offset + (low - lead - itemExtent) / pitch)).rounded(.down))
        var last = Int(((offset + (high - lead) / pitch)).rounded(.up))
        while start(ofSlot: first, offset: offset) + itemExtent <= low { first += 1 }
        while first > Int.min, start(ofSlot: first - 1, offset: offset) + itemExtent > low { first -= 1 }
        while start(ofSlot: last, offset: offset) >= high { last -= 1 }
        while start(ofSlot: last + 1, offset: offset) < high { last += 1 }
        if !wrap {
            first = max(first, 0)
            last = min(last, count - 1)
        }
        return first <= last ? first...last : nil
    }

    /// The item under the layout point `point` at `offset`, or `nil` on a gap,
    /// outside the viewport or past the ends without wrap.
    public func item(at point: Point, offset: Double, count: Int, wrap: Bool) -> Int? {
        let a = axis(point)
        let c = cross(point)
        guard count > 0, a >= 0, a < axisExtent, c >= 0, c < crossExtent else { return nil }
        let slot = Int(((a - lead) / pitch + offset).rounded(.down))
        // Rounding can put `a` a hair outside the computed slot; checking the
        // neighbours with the same `start(ofSlot:)` the renderer uses keeps
        // hit-testing and drawing in agreement to the pixel.
        for candidate in [slot, slot - 1, slot + 1] {
            let local = a - start(ofSlot: candidate, offset: offset)
            if local >= 0, local < itemExtent {
                return Self.index(ofSlot: candidate, count: count, wrap: wrap)
            }
        }
        return nil
    }

    /// Where in the item under `point` the point is, across the item's own
    /// width as its picture is drawn upright (`x` from its left edge, of
    /// `width`), with the item; `nil` where `item(at:)` finds none.
    public func hit(at point: Point, offset: Double, count: Int, wrap: Bool) -> ItemHit? {
        guard let index = item(at: point, offset: offset, count: count, wrap: wrap) else { return nil }
        if vertical { return ItemHit(index: index, x: point.x, width: crossExtent) }
        let slot = Int(((point.x - lead) / pitch + offset).rounded(.down))
        for candidate in [slot, slot - 1, slot + 1] {
            let local = point.x - start(ofSlot: candidate, offset: offset)
            if local >= 0, local < itemExtent { return ItemHit(index: index, x: local, width: itemExtent) }
        }
        return nil
    }

    /// The item shown in `slot`: `slot mod count` with wrap, the slot itself
    /// when it is in range without wrap, `nil` otherwise.
    public static func index(ofSlot slot: Int, count: Int, wrap: Bool) -> Int? {
        guard count > 0 else { return nil }
        if wrap { return ((slot % count) + count) % count }
        return (0..<count).contains(slot) ? slot : nil
    }
}

/// A press on an item: which, and how far across its upright width (a page
/// of two pictures tells them apart by it).
public struct ItemHit: Equatable, Sendable {
    public var index: Int
    public var x: Double
    public var width: Double
}

/// How the logical (laid-out) picture is turned on the panel: `rotation = 90`
/// turns it 90° clockwise, for a panel mounted on its side. Layout,
/// hit-testing and the model work in logical pixels; the renderer writes the
/// rotated picture and input maps panel coordinates back through `logical`.
public enum Rotation: Int, Sendable, CaseIterable {
    case none = 0, clockwise90 = 90, upsideDown = 180, clockwise270 = 270

    /// The logical size of a panel of `width × height` pixels.
    public func logicalSize(panelWidth: Int, panelHeight: Int) -> (width: Int, height: Int) {
        switch self {
        case .none, .upsideDown: (panelWidth, panelHeight)
        case .clockwise90, .clockwise270: (panelHeight, panelWidth)
        }
    }

    /// Where logical pixel (x, y) lands on a panel of `panelWidth × panelHeight`.
    public func panel(x: Int, y: Int, panelWidth: Int, panelHeight: Int) -> (x: Int, y: Int) {
        switch self {
        case .none: (x, y)
        case .clockwise90: (panelWidth - 1 - y, x)
        case .upsideDown: (panelWidth - 1 - x, panelHeight - 1 - y)
        case .clockwise270: (y, panelHeight - 1 - x)
        }
    }

    /// The logical pixel shown at panel pixel (x, y): `panel` undone.
    public func logical(x: Int, y: Int, panelWidth: Int, panelHeight: Int) -> (x: Int, y: Int) {
        switch self {
        case .none: (x, y)
        case .clockwise90: (y, panelWidth - 1 - x)
        case .upsideDown: (panelWidth - 1 - x, panelHeight - 1 - y)
        case .clockwise270: (panelHeight - 1 - y, x)
        }
    }

    /// The logical point under panel point (x, y) (continuous coordinates, for touch).
    public func logical(_ p: Point, panelWidth: Double, panelHeight: Double) -> Point {
        switch self {
        case .none: p
        case .clockwise90: Point(x: p.y, y: panelWidth - p.x)
        case .upsideDown: Point(x: panelWidth - p.x, y: panelHeight - p.y)
        case .clockwise270: Point(x: panelHeight - p.y, y: p.x)
        }
    }

    /// Two turns one after the other (the panel's own orientation and the configured one).
    public func combined(with other: Rotation) -> Rotation {
        Rotation(rawValue: (rawValue + other.rawValue) % 360)!
    }
}

/// SPEC.md section 7: slops are given in pixels of a 160 dpi screen and
/// scale with the panel's density, so a drag starts after the same distance
/// under the finger on every panel (10 px ≈ 1.6 mm).
public enum TouchDensity {
    public static let referenceDPI = 160.0

    /// The factor for a panel `pixels` wide that is `millimetres` wide, or nil
    /// when the size is unknown or implausible (EDIDs of TVs and projectors
    /// often give 0, an aspect ratio such as 16x9 mm, or centimetres): only
    /// 40 to 700 dpi is believed.
    public static func slopScale(pixels: Int, millimetres: Int) -> Double? {
        guard pixels > 0, millimetres >= 20 else { return nil }
        let dpi = Double(pixels) / (Double(millimetres) / 25.4)
        guard (40...700).contains(dpi) else { return nil }
        return dpi / referenceDPI
    }
}
