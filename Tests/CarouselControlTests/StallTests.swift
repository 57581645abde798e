import Testing
@testable import CarouselControl
#if canImport(Glibc)
import Glibc
#endif

@Suite("ControlServer: a subscriber that stopped reading")
struct StallTests {
    @Test("dropped once it has read nothing for the stall limit, long before its queue is full")
    func stalledSubscriberIsDropped() throws {
        let h = try Harness()
        h.server.stallLimitMicroseconds = 300_000
        let stuck = h.connect()
        let slow = h.connect()
        #expect(h.roundTrip(stuck, "subscribe") == #"{"ok":true,"request":"subscribe"}"#)
        #expect(h.roundTrip(slow, "subscribe") == #"{"ok":true,"request":"subscribe"}"#)
        let payload = String(repeating: "p", count: 100)
        var sent = 0
        // Events for a while; the slow reader reads now and then, the stuck one never.
        for round in 0..<400 where h.server.subscriberCount == 2 {
            for _ in 0..<5 {
                h.server.broadcast(line: controlEventLine("tick", ["n": .int(sent), "payload": .string(payload)]))
                sent += 1
            }
            h.turn(milliseconds: 5)
            if round % 5 == 0 { slow.drain() }
        }
        #expect(h.server.subscriberCount == 1)
        #expect(h.logged("dropped a subscriber that is not reading its events (nothing read for "))
        // The queue limit was not what dropped it.
        #expect(!h.logged("limit \(ControlServer.defaultMaximumQueuedBytes)"))
        stuck.drain()
        #expect(stuck.closedByServer)
        slow.drain()
        #expect(!slow.closedByServer)
    }
}
