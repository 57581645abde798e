import Testing
import CarouselCore

/// Autoplay slides on only to a picture that can be shown: at its moment it
/// waits while the next page is not ready (`setUpcomingReady`), one
/// interval at most, and goes the moment the page is.
@Suite struct AutoplayWaitsTests {
    func rig(interval: Double = 2) -> Rig {
        var a = AutoplaySettings()
        a.interval = interval
        a.transition = 0.5
        return Rig(autoplay: a)
    }

    @Test func theUpcomingItemIsTheNextPageAtRestOnly() {
        var r = rig()
        #expect(r.model.upcomingAutoplayItem == 1)
        #expect(r.model.isUpcomingReady)
        r.at(2100)
        // Moving: nothing upcoming until it rests on 1.
        #expect(r.model.upcomingAutoplayItem == nil)
        r.at(2600)
        #expect(r.offset == 1 && r.model.upcomingAutoplayItem == 2)
    }

    @Test func waitsForTheNextPageThenGoesAtOnce() {
        var r = rig()
        r.events += r.model.setUpcomingReady(false, at: .milliseconds(1000))
        r.at(2500)
        // The moment (2 s) passed with the page not ready: still at rest on 0.
        #expect(r.offset == 0 && r.snapshot.state == .idle)
        r.now = .milliseconds(2700)
        r.events += r.model.setUpcomingReady(true, at: r.now)
        // It goes now, the transition from now.
        #expect(r.snapshot.state == .animating)
        r.at(3200)
        #expect(r.offset == 1)
        #expect(r.events(named: "didEndScrollingAnimation").map(\.time) == [.milliseconds(3200)])
        // The next advance counts its interval from that rest, as ever.
        #expect(r.snapshot.autoplay.next == .milliseconds(5200))
    }

    @Test func waitsOneIntervalAtMostThenGoesAnyway() {
        var r = rig()
        r.events += r.model.setUpcomingReady(false, at: .milliseconds(1000))
        r.at(3999)
        #expect(r.offset == 0 && r.snapshot.state == .idle)
        // The moment at 2 s and one interval more: at 4 s it goes, ready or not.
        #expect(r.snapshot.autoplay.next == .milliseconds(4000))
        r.at(4001)
        #expect(r.snapshot.state == .animating)
        r.at(4500)
        #expect(r.offset == 1)
    }

    @Test func aReadyPageChangesNothingBeforeTheMoment() {
        var r = rig()
        r.events += r.model.setUpcomingReady(false, at: .milliseconds(500))
        r.events += r.model.setUpcomingReady(true, at: .milliseconds(1500))
        #expect(r.snapshot.state == .idle && r.snapshot.autoplay.next == .milliseconds(2000))
        r.at(2001)
        #expect(r.snapshot.state == .animating)
    }

    @Test func aTouchDuringTheWaitStartsTheCountAfresh() {
        var r = rig()
        r.events += r.model.setUpcomingReady(false, at: .milliseconds(1000))
        r.at(2500)
        #expect(r.snapshot.state == .idle)
        // A pause and a resume: the interaction's resume delay, not the wait.
        _ = r.model.perform(.pause, at: .milliseconds(2600))
        _ = r.model.perform(.resume, at: .milliseconds(2700))
        r.events += r.model.setUpcomingReady(true, at: .milliseconds(2800))
        #expect(r.snapshot.state == .idle, "the wait ended with the pause; the page being ready does not start a slide")
        #expect(r.snapshot.autoplay.next != nil && r.snapshot.autoplay.next! > .milliseconds(2800))
    }
}
