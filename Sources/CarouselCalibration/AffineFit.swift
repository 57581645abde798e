import CarouselCore

/// A point in normalised coordinates: 0..1 across an extent (the touch
/// device's for raw positions, the panel's for targets).
public struct NormalizedPoint: Equatable, Sendable {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}

/// libinput's calibration matrix: the first two rows of its 3x3 matrix, as
/// in udev's LIBINPUT_CALIBRATION_MATRIX and `[input] calibration`. It maps
/// the device's normalised coordinates to the panel's:
/// x' = a·x + b·y + c, y' = d·x + e·y + f.
public struct CalibrationMatrix: Equatable, Sendable {
    public var a, b, c, d, e, f: Double

    public init(_ a: Double, _ b: Double, _ c: Double, _ d: Double, _ e: Double, _ f: Double) {
        (self.a, self.b, self.c, self.d, self.e, self.f) = (a, b, c, d, e, f)
    }

    /// What libinput uses when nothing is configured.
    public static let identity = CalibrationMatrix(1, 0, 0, 0, 1, 0)

    /// The six numbers in libinput's order.
    public var values: [Double] { [a, b, c, d, e, f] }

    public func apply(_ p: NormalizedPoint) -> NormalizedPoint {
        NormalizedPoint(x: a * p.x + b * p.y + c, y: d * p.x + e * p.y + f)
    }

    /// The six numbers as written to files: fixed-point with at most six
    /// decimals (a millionth of the panel is far below a touch's
    /// precision), no exponents, so every reader of the value takes it.
    public var text: String { values.map(Self.format).joined(separator: " ") }

    /// `x` in fixed point with at most six decimals.
    public static func format(_ x: Double) -> String {
        // Beyond a million (no fit that passed comes near) fixed point would
        // overflow: say it as Swift does.
        guard x.isFinite, abs(x) < 1_000_000 else { return "\(x)" }
        let micro = (x * 1_000_000).rounded()
        guard micro != 0 else { return "0" }
        let magnitude = Int64(abs(micro))
        let whole = magnitude / 1_000_000, fraction = magnitude % 1_000_000
        var out = (micro < 0 ? "-" : "") + String(whole)
        if fraction != 0 {
            var digits = String(fraction)
            digits = String(repeating: "0", count: 6 - digits.count) + digits
            while digits.hasSuffix("0") { digits.removeLast() }
            out += "." + digits
        }
        return out
    }
}

/// One calibration touch: where the device said the finger was (raw,
/// normalised to the device with the identity matrix) and where the target
/// was drawn (normalised to the panel).
public struct CalibrationSample: Equatable, Sendable {
    public var raw: NormalizedPoint
    public var target: NormalizedPoint

    public init(raw: NormalizedPoint, target: NormalizedPoint) {
        self.raw = raw
        self.target = target
    }
}

public enum CalibrationFitError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Fewer than three touches: an affine map has six unknowns, two per touch.
    case tooFewPoints(Int)
    /// The touches lie on one line (or one spot): the map across that line is unknown.
    case collinear
    /// A position that is not a finite number.
    case notFinite
    /// The touches lie within a few hundredths of the touchscreen although
    /// the targets were spread over the panel: not a usable fit.
    case tooClose

    public var description: String {
        switch self {
        case let .tooFewPoints(n):
            "calibration needs at least 3 touches at different places, got \(n)"
        case .collinear:
            "the touches lie on one line or one spot, so the panel's other direction is unknown (was the same place touched each time, or is the touchscreen reporting one axis only?)"
        case .notFinite:
            "a touch position is not a finite number"
        case .tooClose:
            "the touches lie within a few hundredths of the touchscreen although the targets were spread over the screen (is this the touchscreen in front of this display?)"
        }
    }
}

public enum AffineFit {
    /// Below this, the raw points' spread across their narrowest direction
    /// (relative to the widest) counts as none: they lie on one line. Real
    /// targets sit at least a tenth of the panel apart in both directions.
    static let flatness = 1e-4
    /// The least root-mean-square distance of the raw points from their
    /// mean, as a fraction of the device: below it the fit would multiply
    /// a touch's own scatter by fifty.
    static let minimumSpread = 0.02

    /// The calibration matrix that maps the samples' raw positions to their
    /// targets with the least squared error (normal equations, in Double).
    ///
    /// A full affine map: scale, offset, shear, and so rotation and
    /// mirroring (swapped or inverted axes). The points are centred first,
    /// which leaves one 2x2 system per output axis and keeps it well
    /// conditioned; the offset follows from the means.
    public static func fit(_ samples: [CalibrationSample]) throws(CalibrationFitError) -> CalibrationMatrix {
        guard samples.count >= 3 else { throw .tooFewPoints(samples.count) }
        for s in samples where !(s.raw.x.isFinite && s.raw.y.isFinite && s.target.x.isFinite && s.target.y.isFinite) {
            throw .notFinite
        }
        let n = Double(samples.count)
        let mx = samples.reduce(0) { $0 + $1.raw.x } / n, my = samples.reduce(0) { $0 + $1.raw.y } / n
        let mu = samples.reduce(0) { $0 + $1.target.x } / n, mv = samples.reduce(0) { $0 + $1.target.y } / n
        var sxx = 0.0, sxy = 0.0, syy = 0.0, sxu = 0.0, syu = 0.0, sxv = 0.0, syv = 0.0
        for s in samples {
            let x = s.raw.x - mx, y = s.raw.y - my, u = s.target.x - mu, v = s.target.y - mv
            sxx += x * x; sxy += x * y; syy += y * y
            sxu += x * u; syu += y * u; sxv += x * v; syv += y * v
        }
        // det = λ1·λ2 of the scatter matrix and trace = λ1 + λ2: the ratio
        // below is about λ2/λ1, the narrow direction's share of the spread.
        let det = sxx * syy - sxy * sxy
        let trace = sxx + syy
        // Raw positions are fractions of the device: targets a tenth of the
        // panel apart cannot come back within 2 % of it in every direction.
        guard trace > 0 else { throw .collinear }
        guard trace / n > minimumSpread * minimumSpread else { throw .tooClose }
        guard det / (trace * trace) > flatness else { throw .collinear }
        let a = (sxu * syy - syu * sxy) / det
        let b = (syu * sxx - sxu * sxy) / det
        let d = (sxv * syy - syv * sxy) / det
        let e = (syv * sxx - sxv * sxy) / det
        return CalibrationMatrix(a, b, mu - a * mx - b * my, d, e, mv - d * mx - e * my)
    }
}
