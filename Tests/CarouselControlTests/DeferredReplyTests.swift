import Testing
@testable import CarouselControl
#if canImport(Glibc)
import Glibc
#endif

@Suite("ControlServer: replies given later")
struct DeferredReplyTests {
    @Test("a deferred reply holds the client's next requests back, so replies keep their order")
    func deferredKeepsOrder() throws {
        let h = try Harness()
        var tickets: [ControlTicket] = []
        h.server.onRequest = { [unowned h] request, _ in
            h.requests.append(request)
            if case .screenshot = request {
                tickets.append(h.server.deferReply())
                return .error("ignored: the reply is deferred")
            }
            return .ok(["request": .string(request.line)])
        }
        let client = h.connect()
        let other = h.connect()
        client.send("screenshot /tmp/a.png\nstatus\n")
        h.run { tickets.count == 1 }
        // Other clients are served meanwhile; this one waits, its `status` unread.
        #expect(h.roundTrip(other, "version") == #"{"ok":true,"request":"version"}"#)
        for _ in 0..<20 { h.turn() }
        client.drain()
        #expect(!client.hasLine)
        #expect(h.requests.map(\.line) == ["screenshot /tmp/a.png", "version"])
        h.server.complete(tickets[0], with: .ok(["path": .string("/tmp/a.png")]))
        #expect(h.waitForLines(client, 2))
        #expect(client.nextLine() == #"{"ok":true,"path":"/tmp/a.png"}"#)
        #expect(client.nextLine() == #"{"ok":true,"request":"status"}"#)
        // A ticket completes once.
        h.server.complete(tickets[0], with: .error("twice"))
        h.run { client.drain(); return false }
        #expect(!client.hasLine)
    }

    @Test("a client that leaves before its deferred reply is forgotten; the reply goes nowhere")
    func clientLeaves() throws {
        let h = try Harness()
        var ticket: ControlTicket?
        h.server.onRequest = { [unowned h] _, _ in
            ticket = h.server.deferReply()
            return .ok
        }
        var client: TestClient? = h.connect()
        client!.send("screenshot /tmp/b.png\n")
        h.run { ticket != nil }
        client = nil  // closes the socket
        h.run { h.server.clientCount == 0 }
        #expect(h.server.clientCount == 0)
        // A new client may get the same descriptor number: it must not receive the old reply.
        let next = h.connect()
        h.run { h.server.clientCount == 1 }
        h.server.complete(try #require(ticket), with: .ok(["path": .string("/tmp/b.png")]))
        for _ in 0..<20 { h.turn() }
        next.drain()
        #expect(!next.hasLine)
    }

    @Test("a client that closes its side still gets its deferred reply before being closed")
    func halfClosed() throws {
        let h = try Harness()
        var ticket: ControlTicket?
        h.server.onRequest = { [unowned h] _, _ in
            ticket = h.server.deferReply()
            return .ok
        }
        let client = h.connect()
        client.send("screenshot /tmp/c.png\n")
        shutdown(client.fd, Int32(SHUT_WR))
        h.run { ticket != nil }
        for _ in 0..<10 { h.turn() }
        #expect(h.server.clientCount == 1)
        h.server.complete(try #require(ticket), with: .ok(["path": .string("/tmp/c.png")]))
        #expect(h.waitForLines(client, 1))
        #expect(client.nextLine() == #"{"ok":true,"path":"/tmp/c.png"}"#)
        h.run { h.server.clientCount == 0 }
        #expect(h.server.clientCount == 0)
    }

    @Test("a deferred subscribe answered ok makes a subscriber; one refused does not")
    func deferredSubscribe() throws {
        let h = try Harness()
        var tickets: [ControlTicket] = []
        h.server.onRequest = { [unowned h] _, _ in
            tickets.append(h.server.deferReply())
            return .ok
        }
        let refused = h.connect()
        refused.send("subscribe\n")
        h.run { tickets.count == 1 }
        h.server.complete(tickets[0], with: .error("not now"))
        #expect(h.waitForLines(refused, 1))
        #expect(refused.nextLine() == #"{"ok":false,"error":"not now"}"#)
        #expect(h.server.subscriberCount == 0)
        let subscriber = h.connect()
        subscriber.send("subscribe\n")
        h.run { tickets.count == 2 }
        #expect(h.server.subscriberCount == 0)
        h.server.complete(tickets[1], with: .ok)
        #expect(h.waitForLines(subscriber, 1))
        #expect(subscriber.nextLine() == #"{"ok":true}"#)
        #expect(h.server.subscriberCount == 1)
        h.server.broadcast(line: #"{"event":"didEndDecelerating"}"#)
        #expect(h.waitForLines(subscriber, 1))
        #expect(subscriber.nextLine() == #"{"event":"didEndDecelerating"}"#)
    }
}

@Suite("ControlClient")
struct ClientLineTests {
    @Test("a line break inside a request is refused before anything is sent")
    func lineBreaksAreRefused() throws {
        let h = try Harness()
        let client = try ControlClient(path: h.socketPath)
        for line in ["set interval 5\nnext", "screenshot /tmp/a.png\r\nnext", "status\n"] {
            #expect(throws: ControlClientError.self) { try client.send(line: line) }
        }
        for _ in 0..<20 { h.turn() }
        #expect(h.requests.isEmpty)
        try client.send(line: "status")
        h.run { !h.requests.isEmpty }
        #expect(h.requests == [.status])
    }
}
