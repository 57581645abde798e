import RealModule

/// `[zoom]`: pinch and double-tap zoom of the picture under the fingers
/// (after UIScrollView's `minimumZoomScale` = 1, `maximumZoomScale`).
public struct ZoomSettings: Equatable, Sendable {
    /// Two fingers pinch a picture; a zoomed picture pans under one finger.
    public var enabled = true
    /// The largest scale a picture rests at (the rubber band lets a pinch
    /// go `ZoomPhysics.rubberLimit` times past it while the fingers are down).
    public var maxScale = 4.0
    /// A double tap toggles between 1 and `ZoomPhysics.doubleTapScale`. A
    /// single tap's `didSelectItem` then waits for the double-tap window
    /// (UIKit's tap that requires the double tap to fail).
    public var doubleTap = true

    public init() {}

    /// No zoom: other fingers are ignored and a tap selects at the lift.
    public static var disabled: ZoomSettings {
        var z = ZoomSettings()
        z.enabled = false
        return z
    }

    /// The scale a double tap zooms in to.
    var doubleTapTarget: Double { min(ZoomPhysics.doubleTapScale, maxScale) }
}

/// The constants of zooming (SPEC.md section 7 for the double tap).
public enum ZoomPhysics {
    /// A pinch past either end shows at most this factor beyond it: the
    /// shown scale stays within `[1 / rubberLimit, maxScale · rubberLimit]`.
    public static let rubberLimit = 1.5
    /// Where a double tap zooms in to (Photos: about 2.5x).
    public static let doubleTapScale = 2.5
    /// The second tap must come down within this many seconds of the first's lift…
    public static let doubleTapTimeout = 0.3
    /// … but not sooner (a bouncing finger is not a double tap)…
    public static let doubleTapMinTime = 0.04
    /// … and within this many layout pixels of where the first came down.
    public static let doubleTapSlop = 100.0

    /// The scale a pinch at `raw` (the fingers' ratio times the scale it
    /// started at) shows: itself in `1...max`, rubber-banded past either end
    /// with UIScrollView's curve, in ratio terms (so zooming out and in feel alike).
    public static func shown(_ raw: Double, max: Double) -> Double {
        let d = rubberLimit - 1
        if raw > max { return max * (1 + RubberBand.shown(raw / max - 1, extent: d)) }
        if raw < 1 { return 1 / (1 + RubberBand.shown(1 / Swift.max(raw, 1e-9) - 1, extent: d)) }
        return raw
    }

    /// The inverse of `shown` (a pinch that starts on a picture caught mid-bounce).
    public static func raw(_ shown: Double, max: Double) -> Double {
        let d = rubberLimit - 1
        if shown > max { return max * (1 + RubberBand.raw(shown / max - 1, extent: d)) }
        if shown < 1 { return 1 / (1 + RubberBand.raw(1 / shown - 1, extent: d)) }
        return shown
    }
}

/// How the zoomed picture shows, for the renderer: item `item`'s picture,
/// scaled by `scale` and moved by `translation`, inside the item's own frame
/// (the picture's point `u`, in the item's unzoomed layout pixels, shows at
/// `frame origin + translation + scale · u`), clipped to the frame.
public struct ZoomView: Equatable, Sendable {
    public var item: Int
    public var scale: Double
    public var translation: Point

    public init(item: Int, scale: Double, translation: Point) {
        self.item = item
        self.scale = scale
        self.translation = translation
    }
}

/// One component of the zoom (the scale, or the translation along x or y)
/// moving by itself: still, a spring (toward the range after a pinch, a
/// double tap, a command; a bounce off an edge) or pan momentum.
enum ZoomTrack: Sendable {
    case still(Double)
    case spring(SpringMotion)
    /// Momentum within `bounds` (px); reaching an edge turns into a bounce.
    case momentum(MomentumMotion, bounds: ClosedRange<Double>)

    func value(at time: Timestamp) -> Double {
        switch self {
        case .still(let v): v
        case .spring(let s): s.offset(at: time)
        case .momentum(let m, _): m.offset(at: time)
        }
    }

    var end: Timestamp? {
        switch self {
        case .still: nil
        case .spring(let s): s.end
        case .momentum(let m, _): m.end
        }
    }

    var isStill: Bool { if case .still = self { true } else { false } }

    /// Its motion ended at `time`: rest, or bounce off the edge momentum reached.
    mutating func finish(at time: Timestamp) {
        switch self {
        case .still:
            return
        case .spring(let s):
            self = .still(s.target)
        case .momentum(let m, _):
            let x = m.offset(at: time)
            if m.hitsEdge != nil {
                let v = min(max(m.velocity(at: time), -Physics.bounceMaxSpeed), Physics.bounceMaxSpeed)
                let spring = SpringMotion(from: x, velocity: v, target: x, pitch: 1, omega: Physics.bounceOmega, at: time)
                if spring.end > time {
                    self = .spring(spring)
                    return
                }
            }
            self = .still(x)
        }
    }

    /// A spring from where it is at `time` (still) to `target`.
    static func spring(from x: Double, velocity: Double = 0, to target: Double, pitch: Double, omega: Double,
                       at time: Timestamp) -> ZoomTrack {
        if x == target && velocity == 0 { return .still(target) }
        let s = SpringMotion(from: x, velocity: velocity, target: target, pitch: pitch, omega: omega, at: time)
        return s.end > time ? .spring(s) : .still(target)
    }
}

/// The zoom of one picture, inside the carousel model.
struct ZoomState: Sendable {
    /// The item zoomed.
    var item: Int
    /// The item's frame in layout pixels where the carousel rests with it.
    var origin: Point
    var width: Double
    var height: Double
    /// The carousel's unwrapped offset when the zoom began: a carousel that
    /// comes to rest elsewhere (a pan handed over to paging) leaves the zoom.
    var baseOffset: Double
    var scale: ZoomTrack
    var tx: ZoomTrack
    var ty: ZoomTrack
    var pinch: Pinch?
    var pan: Pan?
    /// A zoom gesture, double tap or command is under way: `didEndZooming` is owed.
    var zooming = false

    struct Pinch: Sendable {
        /// The unbanded scale when the pinch began, and the fingers' distance then.
        var startRaw: Double
        var startDistance: Double
        /// The picture's point under the fingers' midpoint when the pinch began.
        var content: Point
        /// The latest midpoint, frame coordinates (the focus of the spring back).
        var midpoint: Point
    }

    struct Pan: Sendable {
        /// The translation when the pan began.
        var start: Point
        /// The carousel's unbounded offset then (where a handover drags it from).
        var carouselStart: Double
        /// Where the translation may go without rubber band (across) or
        /// handing over (along): the resting bounds, widened to take in where
        /// a finger caught a picture outside them, narrowed again as it comes in.
        var axisBounds: ClosedRange<Double>
        var crossBounds: ClosedRange<Double>
        /// How far past the picture's edge along the scroll axis the finger
        /// pushed (px): that much moves the carousel instead (the handover).
        var overflow = 0.0
    }

    /// Scale units are this many pixels apart for the springs' thresholds.
    var scalePitch: Double { max(width, height) }

    func scaleValue(at t: Timestamp) -> Double { scale.value(at: t) }
    func translation(at t: Timestamp) -> Point { Point(x: tx.value(at: t), y: ty.value(at: t)) }

    var isStill: Bool { scale.isStill && tx.isStill && ty.isStill }
    var end: Timestamp? {
        [scale.end, tx.end, ty.end].compactMap { $0 }.min()
    }

    /// Where the translation along a side of `extent` may rest at `scale`:
    /// the picture covers the frame, or (smaller than it) sits centred.
    static func bounds(scale: Double, extent: Double) -> ClosedRange<Double> {
        let slack = extent - scale * extent
        return slack <= 0 ? slack...0 : (slack / 2)...(slack / 2)
    }

    /// Stops every component where it is at `time` (a finger caught it).
    mutating func freeze(at time: Timestamp) {
        scale = .still(scale.value(at: time))
        tx = .still(tx.value(at: time))
        ty = .still(ty.value(at: time))
    }

    /// Springs from the state at `time` to `target` scale with the point
    /// `focus` (frame coordinates) kept where it is, then within the bounds.
    mutating func animate(to target: Double, focus: Point, omega: Double, at time: Timestamp) {
        let s = scale.value(at: time), t = translation(at: time)
        let u = Point(x: (focus.x - t.x) / s, y: (focus.y - t.y) / s)
        let bx = Self.bounds(scale: target, extent: width), by = Self.bounds(scale: target, extent: height)
        let x = min(max(focus.x - target * u.x, bx.lowerBound), bx.upperBound)
        let y = min(max(focus.y - target * u.y, by.lowerBound), by.upperBound)
        scale = .spring(from: s, to: target, pitch: scalePitch, omega: omega, at: time)
        tx = .spring(from: t.x, to: x, pitch: 1, omega: omega, at: time)
        ty = .spring(from: t.y, to: y, pitch: 1, omega: omega, at: time)
    }

    /// Every component that ran past its end has ended by `time`.
    mutating func finishTracks(upTo time: Timestamp) {
        for keyPath in [\ZoomState.scale, \ZoomState.tx, \ZoomState.ty] {
            while let end = self[keyPath: keyPath].end, end <= time { self[keyPath: keyPath].finish(at: end) }
        }
    }
}

/// A part of an item's picture shown over the item's whole box (Ken Burns):
/// the picture magnified `scale` times (at least 1), with the point
/// (`centerX`, `centerY`) of the box (fractions of its width and height)
/// at the box's centre. `whole` is the picture as it rests.
public struct Framing: Equatable, Sendable {
    public var scale: Double
    public var centerX: Double
    public var centerY: Double

    public init(scale: Double, centerX: Double, centerY: Double) {
        self.scale = scale
        self.centerX = centerX
        self.centerY = centerY
    }

    public static let whole = Framing(scale: 1, centerX: 0.5, centerY: 0.5)

    /// The same framing moved as little as keeps the box's edges out of
    /// view (the centre at most `0.5 - 0.5 / scale` from the middle).
    public var clamped: Framing {
        let s = max(scale, 1), h = 0.5 / s
        return Framing(scale: s, centerX: min(max(centerX, h), 1 - h), centerY: min(max(centerY, h), 1 - h))
    }

    /// How the zoom path draws it for item `item` of a box `width` x `height`
    /// layout pixels: the box's point `c` shows at its centre.
    public func zoomView(item: Int, width: Double, height: Double) -> ZoomView {
        ZoomView(item: item, scale: scale,
                 translation: Point(x: width / 2 - scale * centerX * width, y: height / 2 - scale * centerY * height))
    }

    /// The most any edge of what shows moves on the screen between this
    /// framing and `other`, in pixels of a box `width` x `height`.
    public func distance(to other: Framing, width: Double, height: Double) -> Double {
        func edges(_ f: Framing) -> [Double] {
            let h = 0.5 / f.scale
            return [(f.centerX - h) * width, (f.centerX + h) * width, (f.centerY - h) * height, (f.centerY + h) * height]
        }
        // An edge's move in the picture, seen magnified.
        return zip(edges(self), edges(other)).map { abs($0 - $1) }.max()! * max(scale, other.scale)
    }
}
