import CarouselPlatform
import Testing
@testable import CarouselControl
#if canImport(Glibc)
import Glibc
#endif

/// Sixteen connections that send nothing used to hold every slot for ever,
/// carouselctl included; one uid could take them all; a refused client
/// retrying in a loop wrote a log line per attempt.
@Suite("The control socket cannot be held hostage")
struct HostageTests {
    @Test("a connection that sends nothing is closed after the idle limit; subscribers and busy clients stay")
    func idleClientsAreClosed() throws {
        let h = try Harness()
        let idle = h.connect()
        let subscriber = h.connect()
        #expect(h.roundTrip(subscriber, "subscribe") == #"{"ok":true,"request":"subscribe"}"#)
        #expect(h.run(until: { h.server.clientCount == 2 }))
        let deadline = try #require(h.server.nextDeadline, "an idle client must put a deadline on the loop's timer")
        h.server.tick(now: deadline - 1)
        #expect(h.server.clientCount == 2, "closed before the idle limit")
        h.server.tick(now: deadline + 1)
        #expect(h.run(until: { idle.drain(); return idle.closedByServer }))
        #expect(idle.nextLine() == #"{"ok":false,"error":"closing an idle connection (nothing sent for 30 s)"}"#)
        #expect(h.server.clientCount == 1)
        h.server.tick(now: deadline + 3_600_000_000)
        #expect(h.server.clientCount == 1, "a subscriber is not idle")
        #expect(h.server.nextDeadline == nil)
    }

    @Test("one uid other than root holds at most half the slots; refusals are logged once per interval",
          .enabled(if: getuid() == 0, "taking another uid needs root"))
    func perUserLimit() async {
        await #expect(processExitsWith: .success) {
            let h = try Harness(maxClients: 4)
            guard chmod(h.socketPath, 0o666) == 0, chmod(h.directory.path, 0o711) == 0 else { fail(1, "chmod") }
            // Connect as another user (credentials are taken at connect()), then come back.
            guard seteuid(47_020) == 0 else { fail(2, "seteuid: \(String(cString: strerror(errno)))") }
            let mine = (0..<5).map { _ in h.connect() }
            guard seteuid(0) == 0 else { fail(3, "seteuid back") }
            guard h.run(until: { h.server.clientCount == 2 && mine[2...].allSatisfy(\.hasLine) }) else {
                fail(4, "clients: \(h.server.clientCount)")
            }
            let told = #"{"ok":false,"error":"too many connections from uid 47020 (max 2 per user)"}"#
            for c in mine[2...] { guard c.nextLine() == told else { fail(5, "reply: \(c.received)") } }
            // Root still gets in.
            let root = h.connect()
            guard h.roundTrip(root, "status") == #"{"ok":true,"request":"status"}"# else { fail(6, "root refused") }
            let lines = h.logs.filter { $0.1.contains("too many connections from uid 47020") }
            guard lines.count == 1 else { fail(7, "\(lines.count) log lines for three refusals: \(lines.map(\.1))") }
        }
    }
}
