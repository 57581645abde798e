import CarouselCore
import CarouselImaging
import CarouselKenBurnsWords
import RealModule

/// What a move is planned from: a picture's upright size (nil: not known,
/// taken as the box's shape) and the faces its XMP marks.
public struct PictureFacts: Equatable, Sendable {
    public var size: PixelSize?
    public var faces: [FaceRegion]

    public init(size: PixelSize?, faces: [FaceRegion] = []) {
        self.size = size
        self.faces = faces
    }

    /// Read from the page's file (its header and its first
    /// `ImageMetadata.readLimit` bytes): off the loop. A pair's page is
    /// taken as the box's shape, without faces.
    public static func read(_ key: PageKey) -> PictureFacts {
        guard !key.isPair else { return PictureFacts(size: nil) }
        return PictureFacts(size: ImageShape.uprightSize(path: key.first), faces: ImageMetadata.read(path: key.first).faces)
    }
}

public enum KenBurnsMoveKind: String, Sendable, CaseIterable {
    case pan
    case zoomIn = "zoom_in"
    case zoomOut = "zoom_out"
}

/// One picture's move: from one framing to another over its rest.
public struct KenBurnsMove: Equatable, Sendable {
    public var kind: KenBurnsMoveKind
    public var from: Framing
    public var to: Framing
    /// The faces kept in view (0: the move was planned without faces).
    public var faces: Int

    public init(kind: KenBurnsMoveKind, from: Framing, to: Framing, faces: Int) {
        self.kind = kind
        self.from = from
        self.to = to
        self.faces = faces
    }

    /// The framing `progress` (0 to 1) of the way: the scale by equal
    /// ratios (a zoom looks steady), the centre in a straight line, kept
    /// inside the box.
    public func framing(at progress: Double) -> Framing {
        let p = min(max(progress, 0), 1)
        let s = from.scale * Double.pow(to.scale / from.scale, p)
        return Framing(scale: s, centerX: from.centerX + (to.centerX - from.centerX) * p,
                       centerY: from.centerY + (to.centerY - from.centerY) * p).clamped
    }

    /// The largest scale it reaches: what its picture is decoded for.
    public var largestScale: Double { max(from.scale, to.scale) }

    /// The same move from `start` (where the picture was left) instead.
    public func starting(at start: Framing) -> KenBurnsMove {
        var m = self
        m.from = start
        return m
    }
}

/// Plans a picture's move (pure: the same picture, box and settings make
/// the same move on every run and every board).
public enum KenBurnsPlan {
    /// With autoplay off the move slows to a stop: this far (seconds) it has
    /// gone 63% of its way, and 95% at three times as far.
    public static let foreverTimeConstant = 8.0

    /// How far into its move a picture is `seconds` into a rest that lasts
    /// `duration` seconds (nil: for ever). A straight pace when the rest has
    /// an end (autoplay moves on as the move ends); slowing to a stop when not.
    public static func progress(at seconds: Double, duration: Double?) -> Double {
        guard seconds > 0 else { return 0 }
        if let duration { return duration > 0 ? min(seconds / duration, 1) : 1 }
        return 1 - Double.exp(-seconds / foreverTimeConstant)
    }

    /// A picture taller than wide.
    static func isPortrait(_ size: PixelSize) -> Bool { size.height > size.width }

    /// A picture within 2% of the box's shape.
    static func isScreenShaped(_ size: PixelSize, box: PixelSize) -> Bool {
        let a = Double(size.width) / Double(size.height), b = Double(box.width) / Double(box.height)
        return abs(a / b - 1) < 0.02
    }

    /// The move of page `key`'s picture (`facts`) in an item box of `box`
    /// layout pixels drawn with `fit`, or nil when it does not move (the
    /// settings leave its shape out, or the zoom range is 1 to 1).
    public static func move(for key: PageKey, facts: PictureFacts, settings: KenBurnsSettings, box: PixelSize,
                            fit: FitMode) -> KenBurnsMove? {
        guard box.width > 0, box.height > 0 else { return nil }
        let size = facts.size ?? box
        guard size.width > 0, size.height > 0 else { return nil }
        if !settings.portraits, isPortrait(size) { return nil }
        if !settings.screenShaped, isScreenShaped(size, box: box) { return nil }
        let low = max(1, min(settings.zoomMin, settings.zoomMax)), high = max(settings.zoomMin, settings.zoomMax, 1)
        guard high > 1 else { return nil }
        let seed = seed(of: key)
        let kind: KenBurnsMoveKind
        switch settings.move {
        case .pan: kind = .pan
        case .zoomIn: kind = .zoomIn
        case .zoomOut: kind = .zoomOut
        case .random: kind = KenBurnsMoveKind.allCases[Int(seed % 3)]
        }
        // The faces where the picture lies in the box (fractions of the box).
        let placed = ImageScaler.placement(of: size, in: box, fit: fit, faces: facts.faces)
        let px = Double(placed.x) / Double(box.width), py = Double(placed.y) / Double(box.height)
        let pw = Double(placed.width) / Double(box.width), ph = Double(placed.height) / Double(box.height)
        let faces = facts.faces.compactMap { f -> FaceRegion? in
            FaceRegion(left: px + f.x * pw, top: py + f.y * ph, width: f.width * pw, height: f.height * ph)
        }
        /// Where a view `window` wide is centred along an axis to keep the faces in it, if there are faces.
        func focus(_ spans: [(start: Double, end: Double)], window: Double) -> Double? {
            FaceFraming.keep(spans, length: 1, window: window).map { ($0.start + $0.end) / 2 }
        }
        let xs = faces.map { (start: $0.x, end: $0.maxX) }, ys = faces.map { (start: $0.y, end: $0.maxY) }
        // Without faces, a point of the thirds picked by the picture: the
        // upper third more often, where people's eyes are.
        let thirds = [1.0 / 3, 0.5, 2.0 / 3]
        let target = Framing(scale: high, centerX: focus(xs, window: 1 / high) ?? thirds[Int(seed / 3 % 3)],
                             centerY: focus(ys, window: 1 / high) ?? [1.0 / 3, 0.5][Int(seed / 9 % 2)]).clamped
        let wide = Framing(scale: low, centerX: faces.isEmpty ? 0.5 : target.centerX,
                           centerY: faces.isEmpty ? 0.5 : target.centerY).clamped
        switch kind {
        case .zoomIn:
            return KenBurnsMove(kind: kind, from: wide, to: target, faces: faces.count)
        case .zoomOut:
            return KenBurnsMove(kind: kind, from: target, to: wide, faces: faces.count)
        case .pan:
            // Along the picture's longer side as the box shows it, at the
            // largest scale, as far as the faces stay in view.
            let alongX = Double(size.width) * Double(box.height) >= Double(size.height) * Double(box.width)
            let h = 0.5 / high
            var lo = h, hi = 1 - h
            if let kept = FaceFraming.keep(alongX ? xs : ys, length: 1, window: 1 / high) {
                lo = max(lo, kept.end - h)
                hi = min(hi, kept.start + h)
                if lo > hi { (lo, hi) = ((lo + hi) / 2, (lo + hi) / 2) }
            }
            let (a, b) = seed / 27 % 2 == 0 ? (lo, hi) : (hi, lo)
            let from = alongX ? Framing(scale: high, centerX: a, centerY: target.centerY)
                              : Framing(scale: high, centerX: target.centerX, centerY: a)
            let to = alongX ? Framing(scale: high, centerX: b, centerY: target.centerY)
                            : Framing(scale: high, centerX: target.centerX, centerY: b)
            return KenBurnsMove(kind: kind, from: from.clamped, to: to.clamped, faces: faces.count)
        }
    }

    /// FNV-1a over the page's paths: a number of its own for each picture,
    /// the same on every run (Swift's `Hasher` is seeded per process).
    static func seed(of key: PageKey) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.paths.joined(separator: "\n").utf8 {
            h ^= UInt64(byte)
            h = h &* 0x0000_0100_0000_01B3
        }
        return h
    }
}
