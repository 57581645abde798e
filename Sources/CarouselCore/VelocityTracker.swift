/// Estimates a finger's velocity along one axis from timestamped samples.
///
/// A least-squares fit of degree 2 over the samples of the last 100 ms (at
/// most 20), as Android's `VelocityTracker` (LSQ2 strategy) and Flutter's
/// `VelocityTracker` do. Samples carry the device's own timestamps, so a frame
/// that arrives late does not distort the estimate. A pause of more than 40 ms
/// between two samples, or between the last sample and the lift, means the
/// finger had stopped: only the samples after the pause count, and a late
/// lift gives zero.
public struct VelocityTracker: Sendable {
    public static let horizon: Int64 = 100_000          // µs
    public static let stoppedGap: Int64 = 40_000        // µs
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

    /// The velocity in pixels per second at the newest sample, or at `lift`
    /// when given (zero if the finger rested more than 40 ms before it).
    public func velocity(liftedAt lift: Timestamp? = nil) -> Double {
        guard let newest = times.last else { return 0 }
        if let lift, lift.microseconds - newest > Self.stoppedGap { return 0 }
        // Walk back from the newest sample while samples are recent and dense.
        var first = times.count - 1
        while first > 0 {
            let previous = times[first - 1]
            if newest - previous > Self.horizon || times[first] - previous > Self.stoppedGap { break }
            first -= 1
        }
        let count = times.count - first
        guard count >= 2 else { return 0 }
        // Times in seconds relative to the newest sample, positions relative to
        // its position: small numbers keep the normal equations well conditioned.
        let x0 = positions[times.count - 1]
        var s = [Double](repeating: 0, count: 5)   // Σ τ^k, k = 0...4
        var r = [Double](repeating: 0, count: 3)   // Σ x·τ^k, k = 0...2
        for i in first..<times.count {
            let tau = Double(times[i] - newest) / 1_000_000
            let x = positions[i] - x0
            var p = 1.0
            for k in 0..<5 {
                s[k] += p
                if k < 3 { r[k] += x * p }
                p *= tau
            }
        }
        let v: Double
        if count >= 3, let quadratic = Self.solveQuadratic(s, r) {
            v = quadratic
        } else {
            // Degree 1: slope of the least-squares line.
            let det = s[0] * s[2] - s[1] * s[1]
            guard abs(det) > 1e-18 else { return 0 }
            v = (s[0] * r[1] - s[1] * r[0]) / det
        }
        guard v.isFinite else { return 0 }
        return min(max(v, -Self.maxSpeed), Self.maxSpeed)
    }

    /// The linear coefficient of the least-squares parabola x = a + bτ + cτ²
    /// (its derivative at τ = 0), by Cramer's rule on the normal equations;
    /// `nil` when the samples cannot determine a parabola.
    private static func solveQuadratic(_ s: [Double], _ r: [Double]) -> Double? {
        // | s0 s1 s2 | |a|   |r0|
        // | s1 s2 s3 | |b| = |r1|
        // | s2 s3 s4 | |c|   |r2|
        let det = s[0] * (s[2] * s[4] - s[3] * s[3])
            - s[1] * (s[1] * s[4] - s[3] * s[2])
            + s[2] * (s[1] * s[3] - s[2] * s[2])
        // The determinant scales like τ^6; compare with the data's own scale.
        let scale = s[0] * s[2] * s[4]
        guard scale > 0, abs(det) > scale * 1e-9 else { return nil }
        let detB = s[0] * (r[1] * s[4] - s[3] * r[2])
            - r[0] * (s[1] * s[4] - s[3] * s[2])
            + s[2] * (s[1] * r[2] - r[1] * s[2])
        return detB / det
    }
}
