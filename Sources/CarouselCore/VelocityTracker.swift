/// Estimates a finger's velocity along one axis from timestamped samples.
///
/// A least-squares fit over the samples of the last 100 ms (at most 20, and
/// at least the last three however slow the panel), as Android's
/// `VelocityTracker` (LSQ2 strategy) and Flutter's `VelocityTracker` do.
/// Samples carry the device's own timestamps, so a frame that arrives late
/// does not distort the estimate.
///
/// The fit is a parabola (degree 2) where the samples show a change of
/// speed beyond their scatter, and a straight line otherwise: an F-test of
/// the parabola's improvement against its residual at 99 %. A clean panel
/// sampled at 60 Hz or more gets the parabola's derivative at the newest
/// sample; a resistive panel's noise, which a parabola through three or
/// four points turns into hundreds of px/s, gets the line's average slope,
/// so that noise does not fling.
///
/// A pause between two samples, or between the newest sample and the lift,
/// longer than `stoppedGap(typicalInterval:)` means the finger had stopped:
/// only the samples after the pause count, and a late lift gives zero.
/// The pause scales with the touchscreen's own sample interval (learned by
/// `SampleCadence`), so that a 25 Hz panel flings like a 120 Hz one.
public struct VelocityTracker: Sendable {
    public static let horizon: Int64 = 100_000          // µs
    /// The shortest pause that means "the finger stopped" (Android's 40 ms).
    public static let minimumStoppedGap: Int64 = 40_000 // µs
    /// A pause this many sample intervals long means the finger stopped.
    public static let stoppedGapIntervals = 2.5
    public static let minSamples = 3
    public static let maxSamples = 20
    public static let maxSpeed = 8_000.0                // px/s

    private var times: [Int64] = []
    private var positions: [Double] = []

    public init() {
        times.reserveCapacity(Self.maxSamples)
        positions.reserveCapacity(Self.maxSamples)
    }

    public mutating func reset() {
        times.removeAll(keepingCapacity: true)
        positions.removeAll(keepingCapacity: true)
    }

    /// Adds a sample: `position` in pixels at `time`.
    public mutating func add(_ position: Double, at time: Timestamp) {
        if times.count == Self.maxSamples {
            times.removeFirst()
            positions.removeFirst()
        }
        times.append(time.microseconds)
        positions.append(position)
    }

    /// The pause (µs) that means the finger stopped, for a touchscreen that
    /// samples every `typicalInterval` µs (nil: not known yet): 40 ms, or
    /// 2.5 sample intervals where that is longer (100 ms at 25 Hz).
    public static func stoppedGap(typicalInterval: Int64?) -> Int64 {
        guard let typicalInterval, typicalInterval > 0 else { return minimumStoppedGap }
        return max(minimumStoppedGap, Int64((Double(typicalInterval) * stoppedGapIntervals).rounded()))
    }

    /// The most a noisy panel's scatter may move the estimate (one
    /// deviation, px/s): a still or slow finger stays well below the fling
    /// threshold (300 px/s).
    public static let noiseAllowance = 40.0

    /// How many samples a line needs so that position noise of `deviation`
    /// px at one sample every `interval` µs moves its slope by at most
    /// `noiseAllowance`: n with h·√(n(n²−1)/12) ≥ σ/40 (the slope's
    /// deviation over n samples h apart). Three for a clean panel, five for
    /// 3 px at 30 Hz, sixteen for 3 px at 240 Hz.
    public static func samplesNeeded(deviation: Double?, interval: Int64?) -> Int {
        guard let deviation, deviation > 0, let interval, interval > 0 else { return minSamples }
        let h = Double(interval) / 1_000_000
        let needed = 12 * (deviation / (noiseAllowance * h)) * (deviation / (noiseAllowance * h))
        var n = minSamples
        while n < maxSamples, Double(n * (n * n - 1)) < needed { n += 1 }
        return n
    }

    /// The velocity in pixels per second at the newest sample, or at `lift`
    /// when given (zero if the finger rested longer than the stopped gap
    /// before it). `typicalInterval`: the touchscreen's usual time between
    /// samples (µs), which sets the stopped gap; `noise`: the deviation of
    /// its positions (px), which sets how many samples the fit needs
    /// (reaching back past 100 ms where it must) and how clearly a change
    /// of speed must stand out from the scatter.
    public func velocity(liftedAt lift: Timestamp? = nil, typicalInterval: Int64? = nil,
                         noise: Double? = nil) -> Double {
        guard let newest = times.last else { return 0 }
        let gap = Self.stoppedGap(typicalInterval: typicalInterval)
        if let lift, lift.microseconds - newest > gap { return 0 }
        let wanted = Self.samplesNeeded(deviation: noise, interval: typicalInterval)
        // Walk back from the newest sample while samples are recent (or
        // fewer than wanted) and dense.
        var first = times.count - 1
        while first > 0 {
            let previous = times[first - 1]
            let recent = newest - previous <= Self.horizon || times.count - first < wanted
            if !recent || times[first] - previous > gap { break }
            first -= 1
        }
        let count = times.count - first
        guard count >= 2 else { return 0 }
        // Times in seconds relative to the newest sample, positions relative to
        // its position: small numbers keep the normal equations well conditioned.
        let x0 = positions[times.count - 1]
        var s = (0.0, 0.0, 0.0, 0.0, 0.0)   // Σ τ^k, k = 0...4
        var r = (0.0, 0.0, 0.0)             // Σ x·τ^k, k = 0...2
        var xx = 0.0                        // Σ x²
        for i in first..<times.count {
            let tau = Double(times[i] - newest) / 1_000_000
            let x = positions[i] - x0
            let t2 = tau * tau
            s.0 += 1; s.1 += tau; s.2 += t2; s.3 += t2 * tau; s.4 += t2 * t2
            r.0 += x; r.1 += x * tau; r.2 += x * t2
            xx += x * x
        }
        // Degree 1: the least-squares line a + bτ.
        let det1 = s.0 * s.2 - s.1 * s.1
        guard abs(det1) > 1e-18 else { return 0 }
        let b1 = (s.0 * r.1 - s.1 * r.0) / det1
        let a1 = (r.0 - b1 * s.1) / s.0
        var v = b1
        if count > 3, let (a, b, c) = Self.parabola(s, r) {
            // Residual sums of squares from the sums: Σ(x − fit)² = Σx² − Σ coef·(Σ x·τ^k).
            let rss1 = max(0, xx - a1 * r.0 - b1 * r.1)
            let rss2 = max(0, xx - a * r.0 - b * r.1 - c * r.2)
            let dof = count - 3
            // Rounding leaves a residual of about 1e-12 of Σx² even for exact data.
            let floor = 1e-12 * max(xx, 1)
            // The scatter: what the parabola left, or the panel's known
            // noise where that is more (a few points can happen to lie close
            // to a parabola; then the test leans on what the panel is known to do).
            let scatter = max(max(rss2, floor) / Double(dof), (noise ?? 0) * (noise ?? 0))
            if rss1 - rss2 > Self.fCritical(dof) * scatter {
                v = b
            }
        }
        guard v.isFinite else { return 0 }
        return min(max(v, -Self.maxSpeed), Self.maxSpeed)
    }

    /// The least-squares parabola x = a + bτ + cτ², by Cramer's rule on the
    /// normal equations; `nil` when the samples cannot determine one.
    private static func parabola(_ s: (Double, Double, Double, Double, Double),
                                 _ r: (Double, Double, Double)) -> (Double, Double, Double)? {
        // | s0 s1 s2 | |a|   |r0|
        // | s1 s2 s3 | |b| = |r1|
        // | s2 s3 s4 | |c|   |r2|
        func det3(_ m: [[Double]]) -> Double {
            m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
                - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
        }
        let m = [[s.0, s.1, s.2], [s.1, s.2, s.3], [s.2, s.3, s.4]]
        let det = det3(m)
        // The determinant scales like τ^6; compare with the data's own scale.
        let scale = s.0 * s.2 * s.4
        guard scale > 0, abs(det) > scale * 1e-9 else { return nil }
        let rv = [r.0, r.1, r.2]
        func replaced(_ column: Int) -> [[Double]] {
            m.enumerated().map { i, row in row.enumerated().map { j, value in j == column ? rv[i] : value } }
        }
        return (det3(replaced(0)) / det, det3(replaced(1)) / det, det3(replaced(2)) / det)
    }

    /// The F distribution's 99 % point for (1, `dof`) degrees of freedom:
    /// how much a parabola must improve on a line to count as real. (At
    /// 95 % one noisy release in twenty took the parabola, whose slope
    /// scatters four times the line's at 240 Hz.)
    static func fCritical(_ dof: Int) -> Double {
        let table = [4052.2, 98.50, 34.12, 21.20, 16.26, 13.75, 12.25, 11.26, 10.56, 10.04,
                     9.65, 9.33, 9.07, 8.86, 8.68, 8.53, 8.40]
        return table[min(max(dof, 1), table.count) - 1]
    }
}

/// A touchscreen's usual time between samples, learned from its event
/// timestamps: the median of its recent intervals. Intervals longer than
/// a quarter second are pauses of the finger, not the panel's rate.
public struct SampleCadence: Sendable, Equatable {
    public static let capacity = 31
    public static let longest: Int64 = 250_000   // µs

    private var intervals: [Int64] = []
    private var next = 0

    public init() {}

    /// Notes the time between two consecutive samples of one finger.
    public mutating func add(interval: Int64) {
        guard interval > 0, interval <= Self.longest else { return }
        if intervals.count < Self.capacity {
            intervals.append(interval)
        } else {
            intervals[next] = interval
            next = (next + 1) % Self.capacity
        }
    }

    /// The median interval (µs), once three are known.
    public var typical: Int64? {
        guard intervals.count >= 3 else { return nil }
        return intervals.sorted()[intervals.count / 2]
    }
}

/// How much a touchscreen's reported position scatters while the finger
/// holds still (resistive panels: a few pixels), learned from the second
/// differences of its samples while a finger is inside the slop. For white
/// noise of deviation σ a second difference has deviation √6·σ, and the
/// median of its magnitude is 0.6745·√6·σ ≈ 1.652·σ; the median ignores
/// the few samples where the finger really moved.
public struct PositionNoise: Sendable, Equatable {
    public static let capacity = 127
    /// A drag or a lift outside the slop needs this many deviations of the
    /// difference of two noisy positions (√2·σ): 6 of them, so that a still
    /// finger at 240 Hz stays inside for seconds even where the estimate
    /// (a median of neighbouring, correlated differences) comes out a third
    /// too low. 3 px of noise makes a 25 px slop (4 mm at 160 dpi).
    public static let slopDeviations = 6 * 2.0.squareRoot()

    private var magnitudes: [Double] = []
    private var next = 0

    public init() {}

    /// Notes the second difference of three consecutive positions on one axis.
    public mutating func add(secondDifference d: Double) {
        guard d.isFinite else { return }
        if magnitudes.count < Self.capacity {
            magnitudes.append(abs(d))
        } else {
            magnitudes[next] = abs(d)
            next = (next + 1) % Self.capacity
        }
    }

    /// The estimated deviation σ (px), once eight differences are known.
    public var deviation: Double? {
        guard magnitudes.count >= 8 else { return nil }
        return magnitudes.sorted()[magnitudes.count / 2] / 1.652
    }

    /// The slop this panel needs so that its noise alone does not leave it:
    /// `base`, or more on a noisy panel.
    public func slop(atLeast base: Double) -> Double {
        guard let deviation else { return base }
        return max(base, Self.slopDeviations * deviation)
    }
}

/// What the gesture stage has learned of one touchscreen (or pointer).
public struct PanelTraits: Sendable, Equatable {
    public var cadence = SampleCadence()
    public var noise = PositionNoise()
    public init() {}
}
