import Testing
import CarouselCore

@Suite struct VelocityTrackerTests {
    func tracker(_ samples: [(ms: Double, x: Double)]) -> VelocityTracker {
        var t = VelocityTracker()
        for s in samples { t.add(s.x, at: .milliseconds(s.ms)) }
        return t
    }

    @Test func constantSpeedIsExact() {
        // 1.5 px/ms = 1500 px/s, at uneven sample times.
        let times: [Double] = [0, 7, 15, 24, 31, 40, 48]
        let t = tracker(times.map { ($0, 100 + 1.5 * $0) })
        #expect(abs(t.velocity() - 1500) < 1e-6)
    }

    @Test func quadraticMotionGivesTheDerivativeAtTheLastSample() {
        // x = 0.01 t² (t in ms): v at t = 80 ms is 1.6 px/ms = 1600 px/s.
        let times = stride(from: 0.0, through: 80, by: 8).map { $0 }
        let t = tracker(times.map { ($0, 0.01 * $0 * $0) })
        #expect(abs(t.velocity() - 1600) < 1e-3)
    }

    @Test func eventTimestampsNotArrivalDecide() {
        // The same motion sampled irregularly (a late frame) gives the same speed.
        let regular = tracker([(0, 0), (8, -16), (16, -32), (24, -48)])
        let late = tracker([(0, 0), (8, -16), (22, -44), (24, -48)])
        #expect(abs(regular.velocity() - -2000) < 1e-6)
        #expect(abs(late.velocity() - -2000) < 1e-6)
    }

    @Test func aPauseBeforeTheLiftMeansTheFingerStopped() {
        let t = tracker([(0, 0), (8, 20), (16, 40)])
        #expect(abs(t.velocity(liftedAt: .milliseconds(56)) - 2500) < 1e-6)
        #expect(t.velocity(liftedAt: .milliseconds(56.001)) == 0)
    }

    @Test func aPauseBetweenSamplesCutsOffTheOlderOnes() {
        // Fast, then 50 ms still, then slow: only the slow part counts.
        let t = tracker([(0, 0), (8, 100), (16, 200), (66, 200), (74, 204), (82, 208)])
        #expect(abs(t.velocity() - 500) < 1e-6)
    }

    @Test func onlyTheLast100msCount() {
        var samples: [(Double, Double)] = []
        for ms in stride(from: 0.0, through: 96, by: 8) { samples.append((ms, 3 * ms)) }        // 3000 px/s
        for ms in stride(from: 104.0, through: 300, by: 8) { samples.append((ms, 288 + (ms - 96))) } // 1000 px/s
        #expect(abs(tracker(samples).velocity() - 1000) < 1e-6)
    }

    @Test func speedIsClampedTo8000() {
        #expect(tracker([(0, 0), (8, 200), (16, 400)]).velocity() == 8000)
        #expect(tracker([(0, 0), (8, -200), (16, -400)]).velocity() == -8000)
    }

    @Test func tooFewSamplesGiveZeroOrALine() {
        #expect(VelocityTracker().velocity() == 0)
        #expect(tracker([(0, 5)]).velocity() == 0)
        #expect(abs(tracker([(0, 0), (10, 10)]).velocity() - 1000) < 1e-9)
        // Samples at one instant carry no speed.
        #expect(tracker([(5, 0), (5, 10), (5, 20)]).velocity() == 0)
    }
}
