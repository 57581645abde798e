import Foundation
import Testing
@testable import CarouselCore

/// Recorded-style touch traces from the panels kiosks are built from: 25,
/// 30, 60, 120 and 240 Hz, with timing jitter (a sample comes up to 15 %
/// early or late) and position noise (none, a capacitive panel's 0.7 px,
/// a resistive panel's 3 px), each gesture classified as a human would:
/// a flick pages, a slow drag rests on the nearest page, a still finger
/// taps. 1280x800, five items with wrap, autoplay off.
@Suite struct PanelTraceTests {
    static let rates: [Double] = [25, 30, 60, 120, 240]
    static let noises: [Double] = [0, 0.7, 3]
    static let seeds = 0..<16

    /// One touchscreen feeding a carousel: samples at the panel's rate with
    /// jitter, positions with Gaussian noise (Box-Muller).
    struct Panel {
        var rig = Rig(viewport: Viewport(width: 1280, height: 800), count: 5)
        var rng: SplitMix64
        let rate: Double
        let noise: Double

        init(rate: Double, noise: Double, seed: UInt64) {
            rng = SplitMix64(seed: seed &* 0x9E37_79B9 &+ UInt64(rate * 100) &+ UInt64(noise * 10))
            self.rate = rate
            self.noise = noise
            var settings = CarouselSettings()
            settings.wrap = true
            rig = Rig(settings: settings, viewport: Viewport(width: 1280, height: 800), count: 5)
        }

        mutating func gaussian() -> Double {
            let u1 = max(Double.random(in: 0..<1, using: &rng), 1e-12), u2 = Double.random(in: 0..<1, using: &rng)
            return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2) * noise
        }

        mutating func interval() -> Double { 1000 / rate * Double.random(in: 0.85...1.15, using: &rng) }

        /// A finger following `path` (x at t ms after touch down) for `ms`,
        /// at y 400, then lifted half an interval after the last sample.
        /// Returns the events of the gesture and of the carousel settling.
        mutating func gesture(ms: Double, _ path: (Double) -> Double) -> [String] {
            rig.events.removeAll()
            let start = rig.now.milliseconds
            rig.down(path(0) + gaussian(), 400 + gaussian())
            var t = 0.0
            while true {
                t += interval()
                guard t <= ms else { break }
                rig.at(start + t)
                rig.move(path(t) + gaussian(), 400 + gaussian())
            }
            rig.at(rig.now.milliseconds + 1000 / rate / 2)
            rig.up()
            rig.settle()
            rig.at(rig.now.milliseconds + 100)
            return rig.milestones
        }

        /// The installer's first touches: two still presses, which is where
        /// the panel's noise is learned (inside the slop, a finger holds still).
        mutating func warmUp() {
            for _ in 0..<2 {
                _ = gesture(ms: 300) { _ in 640 }
                rig.at(rig.now.milliseconds + 500)
            }
        }
    }

    static func each(_ body: (inout Panel, String) -> Void) {
        for rate in rates {
            for noise in noises {
                for seed in seeds {
                    var panel = Panel(rate: rate, noise: noise, seed: UInt64(seed))
                    panel.warmUp()
                    body(&panel, "\(Int(rate)) Hz, noise \(noise) px, seed \(seed)")
                }
            }
        }
    }

    @Test func aFlickPagesOnEveryPanel() {
        // 250 px in 160 ms (1,560 px/s) to the left: the next page.
        Self.each { panel, name in
            let events = panel.gesture(ms: 160) { 900 - 250 * $0 / 160 }
            #expect(panel.rig.offset == 1, "\(name): \(events)")
        }
    }

    @Test func aFlickBackPagesBackOnEveryPanel() {
        Self.each { panel, name in
            let events = panel.gesture(ms: 160) { 300 + 250 * $0 / 160 }
            #expect(panel.rig.offset == 4, "\(name): \(events)")
        }
    }

    @Test func aSlowDragRestsOnTheNearestPage() {
        // 150 px/s, lifted while still moving: 0.3 of a page goes back, 0.7 goes on.
        Self.each { panel, name in
            let short = panel.gesture(ms: 2560) { 1000 - 0.15 * $0 }          // 384 px
            #expect(short.contains("willBeginDragging"), "\(name): \(short)")
            #expect(panel.rig.offset == 0, "\(name), 0.3 page: \(short)")
            panel.rig.at(panel.rig.now.milliseconds + 300)
            let long = panel.gesture(ms: 5973) { 1100 - 0.15 * $0 }           // 896 px
            #expect(panel.rig.offset == 1, "\(name), 0.7 page: \(long)")
        }
    }

    @Test func aStillFingerTapsAndNeverDrags() {
        Self.each { panel, name in
            let events = panel.gesture(ms: 250) { _ in 640 }
            #expect(!events.contains("willBeginDragging"), "\(name): \(events)")
            #expect(events.contains("didSelectItem"), "\(name): \(events)")
            #expect(panel.rig.offset == 0, "\(name)")
        }
    }

    @Test func theIssuesTwentyFiveHertzSwipePages() {
        // The report: 1,550 px/s sampled every 42 ms springs back with a 40 ms stop rule.
        var rig = Rig(viewport: Viewport(width: 1280, height: 800), count: 5)
        rig.down(1000, 400)
        for k in 1...5 {
            rig.at(Double(42 * k))
            rig.move(1000 - 1.55 * Double(42 * k), 400)
        }
        rig.at(230)
        rig.up()
        rig.settle()
        #expect(rig.offset == 1, "\(rig.milestones)")
    }

    @Test func theStopRuleFollowsThePanelsSampleInterval() {
        #expect(VelocityTracker.stoppedGap(typicalInterval: nil) == 40_000)
        #expect(VelocityTracker.stoppedGap(typicalInterval: 8_333) == 40_000)     // 120 Hz
        #expect(VelocityTracker.stoppedGap(typicalInterval: 40_000) == 100_000)   // 25 Hz
        // Samples 42 ms apart still count as a moving finger once the panel is known.
        var t = VelocityTracker()
        for k in 0..<4 { t.add(-1.5 * Double(42 * k), at: .milliseconds(Double(42 * k))) }
        #expect(t.velocity(liftedAt: .milliseconds(140)) == 0)                      // 40 ms rule: stopped
        #expect(abs(t.velocity(liftedAt: .milliseconds(140), typicalInterval: 42_000) - -1500) < 1e-6)
        // A real pause still stops it: 2.5 intervals.
        #expect(t.velocity(liftedAt: .milliseconds(126 + 106), typicalInterval: 42_000) == 0)
    }

    @Test func atLeastThreeSamplesCountHoweverSlowThePanel() {
        // 16.7 Hz: only two samples lie within 100 ms of the newest; the
        // third (120 ms back) counts too, so the fit is a line through three.
        var t = VelocityTracker()
        let xs: [Double] = [0, 40, 100, 150]
        for (k, x) in xs.enumerated() { t.add(x, at: .milliseconds(Double(60 * k))) }
        // The least-squares line through (60, 40), (120, 100), (180, 150): 916.7 px/s
        // (the last two alone: 833.3 px/s).
        #expect(abs(t.velocity(typicalInterval: 60_000) - 2750.0 / 3) < 1e-6)
    }

    @Test func theCadenceIsTheMedianIntervalAndIgnoresPauses() {
        var c = SampleCadence()
        #expect(c.typical == nil)
        for interval: Int64 in [41_000, 39_000, 40_000, 300_000, 42_000, 5_000] { c.add(interval: interval) }
        #expect(c.typical == 40_000)
        // Learned per device: the pointer's 8 ms does not change the touchscreen's 40 ms.
        var rig = Rig(viewport: Viewport(width: 1280, height: 800), count: 5)
        for device in [3, -1] {
            let step = device == 3 ? 40.0 : 8.0
            rig.events += rig.model.handle(.down(id: 0, at: Point(x: 600, y: 400)), at: rig.now, device: device)
            for _ in 0..<6 {
                rig.at(rig.now.milliseconds + step)
                rig.events += rig.model.handle(.move(id: 0, to: Point(x: 600, y: 400)), at: rig.now, device: device)
            }
            rig.events += rig.model.handle(.up(id: 0), at: rig.now, device: device)
            rig.at(rig.now.milliseconds + 1000)
        }
        #expect(rig.model.panelTraits(of: 3)?.cadence.typical == 40_000)
        #expect(rig.model.panelTraits(of: -1)?.cadence.typical == 8_000)
        rig.model.forget(device: 3)
        #expect(rig.model.panelTraits(of: 3) == nil)
    }

    @Test func aNoisyPanelsSlopGrowsAndACleanOnesDoesNot() {
        var clean = Panel(rate: 60, noise: 0, seed: 1)
        clean.warmUp()
        #expect(clean.rig.model.panelTraits(of: 0)?.noise.slop(atLeast: 10) == 10)
        var noisy = Panel(rate: 60, noise: 3, seed: 1)
        noisy.warmUp()
        let deviation = noisy.rig.model.panelTraits(of: 0)?.noise.deviation ?? 0
        // Two presses give about seventy correlated differences: within a
        // half of the truth.
        #expect(deviation > 1.5 && deviation < 4.5, "estimated \(deviation) px for 3 px noise")
        #expect(noisy.rig.model.panelTraits(of: 0)!.noise.slop(atLeast: 10) > 15)
    }

    @Test func aParabolaOnlyWhereTheSamplesShowOne() {
        // Noise-free deceleration at 60 Hz: the parabola's derivative, exactly.
        var clean = VelocityTracker()
        for k in 0..<7 {
            let t = Double(k) / 60
            clean.add(2000 * t - 6000 * t * t, at: .milliseconds(1000 * t))
        }
        #expect(abs(clean.velocity() - (2000 - 12000 * 0.1)) < 1e-3)
        // A still finger on a 25 Hz resistive panel: the parabola through
        // these three samples has -350 px/s at the newest (a fling); the
        // line through them -50 px/s.
        var noisy = VelocityTracker()
        for (k, x) in [0.0, 4, -4].enumerated() { noisy.add(x, at: .milliseconds(Double(40 * k))) }
        #expect(abs(noisy.velocity() - -50) < 1e-6, "\(noisy.velocity())")
        // Five samples of noise where the parabola improves on the line but
        // not beyond the scatter (F 17.5 < 98.5): the line, -12 px/s (the
        // parabola: -252 px/s).
        var five = VelocityTracker()
        for (k, x) in [-3.0, 3, 3, 0, -3].enumerated() { five.add(x, at: .milliseconds(Double(25 * k))) }
        #expect(abs(five.velocity() - -12) < 1e-6, "\(five.velocity())")
    }
}
