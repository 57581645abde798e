// The least-squares fit of libinput's calibration matrix: recovered exactly
// from exact touches on any affine panel (swapped, mirrored, scaled,
// offset), closely from noisy ones, and refused from points that cannot
// determine it.

import CarouselCalibration
import CarouselCore
import Testing

/// Touches on a panel whose device coordinates relate to the panel's by
/// `truth` (device → panel): the raw position is truth⁻¹ of the target.
func touches(on truth: CalibrationMatrix, at targets: [NormalizedPoint],
             noise: (Int) -> (Double, Double) = { _ in (0, 0) }) -> [CalibrationSample] {
    let det = truth.a * truth.e - truth.b * truth.d
    return targets.enumerated().map { i, t in
        let u = t.x - truth.c, v = t.y - truth.f
        let raw = NormalizedPoint(x: (truth.e * u - truth.b * v) / det, y: (truth.a * v - truth.d * u) / det)
        let (nx, ny) = noise(i)
        return CalibrationSample(raw: NormalizedPoint(x: raw.x + nx, y: raw.y + ny), target: t)
    }
}

let fitTargets = CalibrationTargets.standard.targets.filter { !$0.isCheck }.map { NormalizedPoint(x: $0.x, y: $0.y) }

func expectClose(_ m: CalibrationMatrix, _ expected: CalibrationMatrix, within tolerance: Double,
                 sourceLocation: SourceLocation = #_sourceLocation) {
    for (got, want) in zip(m.values, expected.values) {
        #expect(abs(got - want) <= tolerance, "fit \(m.values), expected \(expected.values)", sourceLocation: sourceLocation)
    }
}

@Suite("Least-squares calibration fit")
struct FitTests {
    // A resistive panel mounted turned and flipped: device x runs down the
    // panel backwards, device y across it, each scaled and offset.
    static let swappedMirrored = CalibrationMatrix(0, -1.12, 1.07, 0.93, 0, -0.04)

    @Test("a swapped, mirrored, scaled and offset panel is recovered to 1e-9")
    func exact() throws {
        let m = try AffineFit.fit(touches(on: Self.swappedMirrored, at: fitTargets))
        expectClose(m, Self.swappedMirrored, within: 1e-9)
    }

    @Test("every turn and mirror of the panel, with shear, is recovered", arguments: [
        CalibrationMatrix(1, 0, 0, 0, 1, 0),
        CalibrationMatrix(-1, 0, 1, 0, 1, 0),
        CalibrationMatrix(0, 1, 0, -1, 0, 1),
        CalibrationMatrix(-1, 0, 1, 0, -1, 1),
        CalibrationMatrix(1.2, 0.05, -0.1, -0.03, 0.8, 0.12),
    ])
    func turns(truth: CalibrationMatrix) throws {
        expectClose(try AffineFit.fit(touches(on: truth, at: fitTargets)), truth, within: 1e-9)
    }

    @Test("three points are enough")
    func three() throws {
        let m = try AffineFit.fit(touches(on: Self.swappedMirrored, at: Array(fitTargets.prefix(3))))
        expectClose(m, Self.swappedMirrored, within: 1e-9)
    }

    @Test("touch noise of 0.3 % of the panel moves the fit little")
    func noisy() throws {
        // A fixed pseudo-random sequence (an LCG), so a failure repeats.
        var state: UInt64 = 12345
        func next() -> Double {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Double(state >> 11) / Double(1 << 53) * 2 - 1
        }
        let noise = (0..<fitTargets.count).map { _ in (next() * 0.003, next() * 0.003) }
        let samples = touches(on: Self.swappedMirrored, at: fitTargets, noise: { noise[$0] })
        let m = try AffineFit.fit(samples)
        expectClose(m, Self.swappedMirrored, within: 0.02)
        // And it is the least-squares answer: nudging any coefficient makes the residual larger.
        func residual(_ m: CalibrationMatrix) -> Double {
            samples.reduce(0) { sum, s in
                let p = m.apply(s.raw)
                return sum + (p.x - s.target.x) * (p.x - s.target.x) + (p.y - s.target.y) * (p.y - s.target.y)
            }
        }
        let best = residual(m)
        for k in 0..<6 {
            for step in [-1e-4, 1e-4] {
                var v = m.values
                v[k] += step
                #expect(residual(CalibrationMatrix(v[0], v[1], v[2], v[3], v[4], v[5])) > best)
            }
        }
    }

    @Test("fewer than three touches are refused")
    func tooFew() {
        let two = Array(touches(on: .identity, at: fitTargets).prefix(2))
        #expect(throws: CalibrationFitError.tooFewPoints(2)) { try AffineFit.fit(two) }
        #expect(throws: CalibrationFitError.tooFewPoints(0)) { try AffineFit.fit([]) }
    }

    @Test("touches on one line, or one spot, are refused")
    func collinear() {
        let line = [0.1, 0.4, 0.7, 0.9].map {
            CalibrationSample(raw: NormalizedPoint(x: $0, y: 0.2 + 0.5 * $0), target: NormalizedPoint(x: $0, y: $0 * $0))
        }
        #expect(throws: CalibrationFitError.collinear) { try AffineFit.fit(line) }
        let spot = fitTargets.map { CalibrationSample(raw: NormalizedPoint(x: 0.5, y: 0.5), target: $0) }
        #expect(throws: CalibrationFitError.collinear) { try AffineFit.fit(spot) }
        // Almost on one line: a device reporting one axis with a little jitter.
        let jitter = fitTargets.enumerated().map { i, t in
            CalibrationSample(raw: NormalizedPoint(x: t.x, y: 0.5 + Double(i % 2) * 1e-4), target: t)
        }
        #expect(throws: CalibrationFitError.collinear) { try AffineFit.fit(jitter) }
    }

    @Test("touches bunched within 2 % of the touchscreen are refused, not fitted into huge numbers")
    func tooClose() {
        // The targets' shape, shrunk to a thousandth: the fit would scale by a thousand.
        let bunched = fitTargets.map {
            CalibrationSample(raw: NormalizedPoint(x: 0.5 + $0.x / 1000, y: 0.5 + $0.y / 1000), target: $0)
        }
        #expect(throws: CalibrationFitError.tooClose) { try AffineFit.fit(bunched) }
        // Numbers too large for fixed point are still written, not trapped on.
        #expect(CalibrationMatrix.format(1e13) == "10000000000000.0")
        #expect(CalibrationMatrix.format(-.infinity) == "-inf")
    }

    @Test("a position that is not a number is refused")
    func notFinite() {
        var samples = touches(on: .identity, at: fitTargets)
        samples[1].raw.x = .nan
        #expect(throws: CalibrationFitError.notFinite) { try AffineFit.fit(samples) }
    }

    @Test("the six numbers as written: fixed point, at most six decimals")
    func text() {
        #expect(CalibrationMatrix(0, -1.12, 1.07, 0.93, 0, -0.04).text == "0 -1.12 1.07 0.93 0 -0.04")
        #expect(CalibrationMatrix(1e-7, -2.5e-6, 123.4567891, -0.000001, 1, 0.1).text == "0 -0.000003 123.456789 -0.000001 1 0.1")
    }
}
