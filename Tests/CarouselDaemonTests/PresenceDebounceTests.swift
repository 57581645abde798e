// The GPIO presence line's software debounce on a manual clock: a bounce
// shorter than the interval is read once, after it settles; no debounce
// reads at every batch of edges; nothing is pending at rest.

@testable import CarouselPresence
import CarouselDaemon
import Testing

@Suite("Presence debounce, manual clock") struct PresenceDebounceTests {
    @Test func eachEdgeMovesTheSettlingInstantAndTheLevelIsReadOnce() {
        var d = PresenceDebounce(seconds: 0.05)
        #expect(d.settlesAt == nil, "at rest: no deadline")
        #expect(d.edge(at: 1_000_000) == false)
        #expect(d.settlesAt == 1_050_000)
        #expect(d.edge(at: 1_020_000) == false)
        #expect(d.edge(at: 1_030_000) == false)
        #expect(d.settlesAt == 1_080_000)
        #expect(d.due(now: 1_079_999) == nil)
        #expect(d.due(now: 1_080_000) == 1_030_000, "the level counts from the last edge")
        #expect(d.settlesAt == nil && d.due(now: 2_000_000) == nil, "read once, then at rest")
    }

    @Test func noDebounceReadsAtOnce() {
        var d = PresenceDebounce(seconds: 0)
        #expect(d.edge(at: 5) == true)
        #expect(d.settlesAt == nil && d.lastEdge == 5)
    }

    @Test func aLateEdgeStampDoesNotMoveTheLastEdgeBack() {
        var d = PresenceDebounce(seconds: 0.1)
        _ = d.edge(at: 500_000)
        _ = d.edge(at: 400_000)
        #expect(d.lastEdge == 500_000 && d.settlesAt == 600_000)
        d.reset()
        #expect(d.settlesAt == nil && d.lastEdge == nil)
    }
}
