import CarouselPlatform
import Testing
@testable import CarouselControl
#if canImport(Glibc)
import Glibc
#endif

@Suite("ControlServer: real Unix sockets driven by a small loop")
struct ServerTests {
    @Test("every command makes the round trip, in order, one reply each")
    func everyCommand() throws {
        let h = try Harness()
        let client = h.connect()
        let lines = ["next", "prev", "goto 4", "goto 2 300", "pause", "resume", "status", "reload", "list",
                     "set autoplay.interval 5s", "screenshot /tmp/x.png", "version", "subscribe"]
        for line in lines {
            #expect(h.roundTrip(client, line) == ControlReply.ok(["request": .string(line)]).line)
        }
        #expect(h.requests.map(\.line) == lines)
        #expect(h.server.subscriberCount == 1)

        let help = try #require(h.roundTrip(client, "help"))
        #expect(help.hasPrefix(#"{"ok":true,"commands":["next","prev","goto <index> [<ms>]""#))
        #expect(h.requests.count == lines.count, "the server answers help itself")
    }

    @Test("pipelined requests in one write get their replies in order")
    func pipelined() throws {
        let h = try Harness()
        let client = h.connect()
        client.send("next\nnxt\ngoto 1\r\n\nprev\n")
        h.waitForLines(client, 5)
        let replies = client.allLines
        #expect(replies.count == 5)
        #expect(replies[0] == #"{"ok":true,"request":"next"}"#)
        #expect(replies[1].hasPrefix(#"{"ok":false,"error":"unknown command 'nxt' (try: next, prev"#))
        #expect(replies[2] == #"{"ok":true,"request":"goto 1"}"#)
        #expect(replies[3].hasPrefix(#"{"ok":false,"error":"empty request"#))
        #expect(replies[4] == #"{"ok":true,"request":"prev"}"#)
    }

    @Test("a malformed line gets its error and the connection stays usable")
    func malformedThenGood() throws {
        let h = try Harness()
        let client = h.connect()
        #expect(h.roundTrip(client, "goto x") == #"{"ok":false,"error":"goto needs an item index, got 'x'"}"#)
        #expect(h.requests.isEmpty, "onRequest never sees a malformed line")
        #expect(h.roundTrip(client, "status") == #"{"ok":true,"request":"status"}"#)
        client.send("bad \u{01}\n")
        let invalid: [UInt8] = [0x6E, 0xFF, 0x0A]
        _ = invalid.withUnsafeBytes { Glibc.send(client.fd, $0.baseAddress, $0.count, 0) }
        #expect(h.waitForLines(client, 2))
        #expect(client.nextLine()?.hasPrefix(#"{"ok":false,"error":"unknown command 'bad'"#) == true)
        #expect(client.nextLine() == #"{"ok":false,"error":"request is not valid UTF-8"}"#)
        #expect(h.roundTrip(client, "next") == #"{"ok":true,"request":"next"}"#)
    }

    @Test("an oversized line gets one error, is skipped to its newline, and the next line is served")
    func oversized() throws {
        let h = try Harness()
        let client = h.connect()
        let tooLong = #"{"ok":false,"error":"request line longer than 4096 bytes; it was discarded"}"#
        // In pieces, so the limit trips before the newline has arrived.
        client.send(String(repeating: "x", count: 3000))
        h.turn()
        client.send(String(repeating: "y", count: 3000))
        h.run { client.hasLine }
        #expect(client.nextLine() == tooLong)
        client.send(String(repeating: "z", count: 5000) + "\nstatus\n")
        #expect(h.waitForLines(client, 1))
        #expect(client.nextLine() == #"{"ok":true,"request":"status"}"#, "one error only, the tail of the long line is dropped")

        // A whole over-long line in one write, then a good one.
        client.send(String(repeating: "w", count: 4097) + "\nnext\n")
        #expect(h.waitForLines(client, 2))
        #expect(client.nextLine() == tooLong)
        #expect(client.nextLine() == #"{"ok":true,"request":"next"}"#)

        // Exactly 4096 bytes is within the limit: it is parsed (and is no command).
        let atLimit = h.roundTrip(client, String(repeating: "v", count: 4096))
        #expect(atLimit?.hasPrefix(#"{"ok":false,"error":"unknown command 'vvv"#) == true)
        #expect(h.server.clientCount == 1)
    }

    @Test("a subscriber that never reads is dropped; the other clients are still served")
    func stuckSubscriber() throws {
        let h = try Harness(maximumQueuedBytes: 64 * 1024)
        let stuck = h.connect()
        let reader = h.connect()
        let bystander = h.connect()
        #expect(h.roundTrip(stuck, "subscribe") == #"{"ok":true,"request":"subscribe"}"#)
        #expect(h.roundTrip(reader, "subscribe") == #"{"ok":true,"request":"subscribe"}"#)
        #expect(h.server.subscriberCount == 2)

        let payload = String(repeating: "p", count: 180)
        var readerLines = 0
        for i in 0..<8000 {
            h.server.broadcast(line: controlEventLine("tick", ["n": .int(i), "payload": .string(payload)]))
            if i % 20 == 0 {
                h.turn(milliseconds: 0)
                reader.drain()
                readerLines += reader.allLines.count
            }
        }
        #expect(h.run {
            reader.drain()
            readerLines += reader.allLines.count
            return readerLines == 8000
        })
        #expect(h.server.subscriberCount == 1)
        #expect(h.logged("dropped a subscriber that is not reading its events"))
        #expect(h.logs.contains { $0.0 == .warning && $0.1.contains("uid \(getuid())") })
        #expect(h.roundTrip(bystander, "status") == #"{"ok":true,"request":"status"}"#)
        #expect(h.roundTrip(reader, "next") == #"{"ok":true,"request":"next"}"#)
        stuck.drain()
        #expect(stuck.closedByServer)
    }

    @Test("events reach subscribers only")
    func events() throws {
        let h = try Harness()
        let subscriber = h.connect()
        let other = h.connect()
        _ = h.roundTrip(subscriber, "subscribe")
        _ = h.roundTrip(other, "status")
        h.server.broadcast(line: controlEventLine("indexChanged", ["index": 3]))
        #expect(h.run { subscriber.hasLine })
        #expect(subscriber.nextLine() == #"{"event":"indexChanged","index":3}"#)
        h.turn()
        #expect(!other.hasLine)
    }

    @Test("subscribe changes: every event but the per-frame ones, which subscribe takes")
    func subscribeChanges() throws {
        let h = try Harness()
        let changes = h.connect()
        let everything = h.connect()
        #expect(h.roundTrip(changes, "subscribe changes") == #"{"ok":true,"request":"subscribe changes"}"#)
        _ = h.roundTrip(everything, "subscribe")
        #expect(h.server.subscriberCount == 2)
        #expect(h.server.everyFrameSubscriberCount == 1)
        h.server.broadcast(line: controlEventLine("didScroll", ["offset": 1]), perFrame: true)
        h.server.broadcast(line: controlEventLine("indexChanged", ["index": 3]))
        #expect(h.run { everything.hasLine })
        #expect(everything.nextLine() == #"{"event":"didScroll","offset":1}"#)
        #expect(h.run { changes.hasLine })
        #expect(changes.nextLine() == #"{"event":"indexChanged","index":3}"#, "a per-frame event reached subscribe changes")
    }

    @Test("subscribe refused by the daemon does not subscribe")
    func subscribeRefused() throws {
        let h = try Harness()
        h.server.onRequest = { _, _ in .error("not now") }
        let client = h.connect()
        #expect(h.roundTrip(client, "subscribe") == #"{"ok":false,"error":"not now"}"#)
        #expect(h.server.subscriberCount == 0)
    }

    @Test("fifty clients at once each get their own reply")
    func fiftyClients() throws {
        let h = try Harness(maxClients: 64)
        let clients = (0..<50).map { _ in h.connect() }
        for (i, c) in clients.enumerated() { c.send("goto \(i)\n") }
        #expect(h.run { clients.allSatisfy(\.hasLine) })
        for (i, c) in clients.enumerated() {
            #expect(c.nextLine() == #"{"ok":true,"request":"goto \#(i)"}"#)
        }
        #expect(h.server.clientCount == 50)
    }

    @Test("a client beyond maxClients is told so and closed")
    func tooManyClients() throws {
        let h = try Harness(maxClients: 2)
        let a = h.connect(), b = h.connect()
        #expect(h.roundTrip(a, "status") != nil)
        #expect(h.roundTrip(b, "status") != nil)
        let c = h.connect()
        #expect(h.run { c.hasLine })
        #expect(c.nextLine() == #"{"ok":false,"error":"too many clients (max 2)"}"#)
        #expect(h.run { c.drain(); return c.closedByServer })
        #expect(h.logged("too many clients (max 2)"))
        #expect(h.roundTrip(a, "next") == #"{"ok":true,"request":"next"}"#)
        #expect(h.server.clientCount == 2)
    }

    @Test("a peer outside the allow-list is refused and closed; its credentials are logged")
    func allowList() throws {
        let h = try Harness(allowUIDs: [getuid() &+ 4242])
        let c = h.connect()
        #expect(h.run { c.hasLine })
        #expect(c.nextLine() == #"{"ok":false,"error":"permission denied: uid \#(getuid()) gid \#(getgid()) is not in carouseld's control allow-list"}"#)
        #expect(h.run { c.drain(); return c.closedByServer })
        #expect(h.logged("pid \(getpid()), uid \(getuid()), gid \(getgid())"))
        #expect(h.server.clientCount == 0)

        let allowed = try Harness(allowUIDs: [getuid()])
        let d = allowed.connect()
        #expect(allowed.roundTrip(d, "status") == #"{"ok":true,"request":"status"}"#)
    }

    @Test("a client that closes its side still gets its replies, then is closed")
    func halfClose() throws {
        let h = try Harness()
        let c = h.connect()
        c.send("next\nstatus")  // the last line has no newline: it is still a request
        shutdown(c.fd, Int32(SHUT_WR))
        #expect(h.run { c.drain(); return c.closedByServer })
        #expect(c.allLines == [#"{"ok":true,"request":"next"}"#, #"{"ok":true,"request":"status"}"#])
        #expect(h.server.clientCount == 0)
    }

    @Test("a client that disconnects is forgotten")
    func disconnect() throws {
        let h = try Harness()
        var c: TestClient? = h.connect()
        _ = h.roundTrip(c!, "subscribe")
        c = nil
        #expect(h.run { h.server.clientCount == 0 })
        h.server.broadcast(line: "{}")
    }

    @Test("the socket file gets mode 0660 and the group; close removes it")
    func socketFile() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/sub/dir/control.sock"
        let group = String(cString: getgrgid(getgid())!.pointee.gr_name)
        let server = try ControlServer(path: path, mode: 0o660, group: group)
        var info = stat()
        #expect(lstat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o660)
        #expect(info.st_mode & S_IFMT == S_IFSOCK)
        #expect(info.st_gid == getgid())
        server.close()
        #expect(lstat(path, &info) != 0, "close removes the socket file it created")
        rmdir(dir.path + "/sub/dir"); rmdir(dir.path + "/sub")
    }

    @Test("an unknown group is refused before any socket file appears")
    func unknownGroup() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/control.sock"
        #expect(throws: ControlServerError(
            "unknown group 'no-such-group-xyz' for the control socket \(path) (create it with groupadd, or fix the group in the config)"
        )) { try ControlServer(path: path, group: "no-such-group-xyz") }
        var info = stat()
        #expect(lstat(path, &info) != 0)
    }

    @Test("a stale socket file (nothing listening) is replaced")
    func staleSocket() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/control.sock"
        // What a crashed daemon leaves: a bound socket file nobody listens on.
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        close(fd)

        var lines: [String] = []
        let server = try ControlServer(path: path, log: { lines.append($1) })
        #expect(lines.contains { $0.contains("replaced the stale socket file") })
        let client = TestClient(path: path)
        client.send("version\n")
        for _ in 0..<500 where !client.hasLine {
            var p = server.pollSet.map { pollfd(fd: $0.fd, events: Int16($0.events), revents: 0) }
            _ = poll(&p, nfds_t(p.count), 5)
            for e in p where e.revents != 0 { server.handle(readyDescriptor: e.fd, events: UInt32(e.revents)) }
        }
        #expect(client.nextLine() != nil)
    }

    @Test("a live socket is not stolen: a second server fails clearly")
    func liveSocket() throws {
        let h = try Harness()
        #expect(throws: ControlServerError(
            "another process is already listening on \(h.socketPath) (is carouseld already running? stop it or choose another control socket path)"
        )) { try ControlServer(path: h.socketPath) }
        let c = h.connect()
        #expect(h.roundTrip(c, "status") == #"{"ok":true,"request":"status"}"#, "the first server still works")
    }

    @Test("a file that is not a socket is never removed")
    func notASocket() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/control.sock"
        let fd = open(path, O_CREAT | O_WRONLY, 0o644)
        close(fd)
        #expect(throws: ControlServerError(
            "\(path) exists and is not a socket; carouseld will not remove it (move it away or choose another control socket path)"
        )) { try ControlServer(path: path) }
        var info = stat()
        #expect(lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG)
    }

    @Test("a path too long for sun_path is reported with its length")
    func longPath() {
        let path = "/tmp/" + String(repeating: "a", count: 120)
        #expect(throws: ControlServerError(
            "control socket path '\(path)' is too long (125 bytes, a Unix socket path holds at most 107)"
        )) { try ControlServer(path: path) }
    }

    @Test("socket activation: fd 3 only when LISTEN_PID is ours")
    func activation() {
        let env = { (pid: String, fds: String) in { (name: String) -> String? in
            ["LISTEN_PID": pid, "LISTEN_FDS": fds][name]
        } }
        #expect(ControlServer.socketActivationDescriptor(environment: env("42", "1"), processID: 42, clearEnvironment: false) == 3)
        #expect(ControlServer.socketActivationDescriptor(environment: env("43", "1"), processID: 42, clearEnvironment: false) == nil)
        #expect(ControlServer.socketActivationDescriptor(environment: env("42", "0"), processID: 42, clearEnvironment: false) == nil)
        #expect(ControlServer.socketActivationDescriptor(environment: { _ in nil }, processID: 42, clearEnvironment: false) == nil)
    }

    @Test("an adopted listener serves requests and its file is left to systemd")
    func adopting() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/activated.sock"
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(throws: ControlServerError.self) { try ControlServer(adopting: fd) }  // not listening yet
        listen(fd, 8)
        let server = try ControlServer(adopting: fd)
        server.onRequest = { _, _ in .ok(["adopted": true]) }
        let client = TestClient(path: path)
        client.send("status\n")
        for _ in 0..<500 where !client.hasLine {
            var p = server.pollSet.map { pollfd(fd: $0.fd, events: Int16($0.events), revents: 0) }
            _ = poll(&p, nfds_t(p.count), 5)
            for e in p where e.revents != 0 { server.handle(readyDescriptor: e.fd, events: UInt32(e.revents)) }
        }
        #expect(client.nextLine() == #"{"ok":true,"adopted":true}"#)
        server.close()
        var info = stat()
        #expect(lstat(path, &info) == 0)
    }

    @Test("synchronize keeps the daemon's Epoll in step, across descriptor reuse")
    func epollWiring() throws {
        let h = try Harness()
        let epoll = try Epoll()
        let base: UInt64 = 1 << 32
        var changes = 0
        h.server.onDescriptorsChanged = { changes += 1 }
        try h.server.synchronize(with: epoll, token: { base + UInt64($0) })
        func loop(until condition: () -> Bool) throws -> Bool {
            for _ in 0..<1000 {
                if condition() { return true }
                for (token, events) in try epoll.wait(timeoutMilliseconds: 5) where token >= base {
                    h.server.handle(readyDescriptor: Int32(token - base), events: events)
                    try h.server.synchronize(with: epoll, token: { base + UInt64($0) })
                }
            }
            return condition()
        }
        for round in 0..<5 {
            // Each round closes the previous client, so its descriptor number comes back.
            let c = h.connect()
            c.send("goto \(round)\n")
            #expect(try loop { c.hasLine })
            #expect(c.nextLine() == #"{"ok":true,"request":"goto \#(round)"}"#)
        }
        #expect(changes > 0)
        let sub = h.connect()
        sub.send("subscribe\n")
        #expect(try loop { sub.hasLine })
        _ = sub.nextLine()
        h.server.broadcast(line: "{\"event\":\"x\"}")
        try h.server.synchronize(with: epoll, token: { base + UInt64($0) })
        #expect(try loop { sub.hasLine })
    }
}
