import Testing
@testable import CarouselControl
#if canImport(Glibc)
import Glibc
#endif

/// Changing groups changes the whole process, and the test runner runs other
/// tests in parallel: each test runs in a process of its own (an exit test).
/// Setting groups needs root (CAP_SETGID), which the test machines have.
@Suite("allow_gids: the peer's primary and supplementary groups")
struct PeerGroupTests {
    @Test("a client in an allowed group only as a supplementary one (usermod -aG) is let in",
          .enabled(if: getuid() == 0, "changing one's groups needs root"))
    func supplementaryGroupAllowed() async {
        await #expect(processExitsWith: .success) {
            let h = try Harness(allowGIDs: [47_011])
            // Primary gid not in the list; the allowed group among the supplementary ones.
            becomeClient(primary: 47_012, supplementary: [47_013, 47_011])
            let c = h.connect()
            let reply = h.roundTrip(c, "status")
            guard reply == #"{"ok":true,"request":"status"}"# else { fail(1, "refused: \(reply ?? "no reply")") }
            guard let peer = h.server.peers.first, peer.gid == 47_012, Set(peer.groups).isSuperset(of: [47_011, 47_013]) else {
                fail(2, "peer credentials: \(h.server.peers)")
            }
            guard h.logs.contains(where: { $0.1.contains("groups ") }) else { fail(3, "the log line does not show the groups") }
        }
    }

    @Test("a client with neither its primary nor a supplementary group allowed is refused",
          .enabled(if: getuid() == 0, "changing one's groups needs root"))
    func noGroupAllowed() async {
        await #expect(processExitsWith: .success) {
            let h = try Harness(allowGIDs: [47_011])
            becomeClient(primary: 47_012, supplementary: [47_013, 47_014])
            let c = h.connect()
            guard h.run(until: { c.hasLine }) else { fail(1, "no reply") }
            let reply = c.nextLine()
            guard reply == #"{"ok":false,"error":"permission denied: uid \#(getuid()) gid 47012 is not in carouseld's control allow-list"}"# else {
                fail(2, "reply: \(reply ?? "none")")
            }
            guard h.run(until: { c.drain(); return c.closedByServer }), h.server.clientCount == 0 else { fail(3, "not closed") }
            guard h.requests.isEmpty else { fail(4, "a refused client's request was handled") }
        }
    }

    @Test("the supplementary groups of this process, as SO_PEERGROUPS reports them")
    func ownGroups() throws {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[0]); close(pair[1]) }
        let count = getgroups(0, nil)
        var mine = [gid_t](repeating: 0, count: Int(count))
        _ = getgroups(count, &mine)
        let seen = ControlServer.supplementaryGroups(of: pair[0], pid: getpid(), uid: geteuid(), gid: getegid())
        #expect(Set(seen) == Set(mine))
        // The /proc fallback for kernels before 4.13 agrees, and refuses another uid's process.
        #expect(ControlServer.processGroups(pid: getpid(), uid: geteuid()).map(Set.init) == Set(mine))
        #expect(ControlServer.processGroups(pid: getpid(), uid: geteuid() &+ 1) == nil)
    }
}

/// Takes on a client's groups; uid stays 0, so the socket file is still reachable.
func becomeClient(primary: gid_t, supplementary: [gid_t]) {
    guard setgroups(supplementary.count, supplementary) == 0 else { fail(90, "setgroups: \(String(cString: strerror(errno)))") }
    guard setegid(primary) == 0 else { fail(91, "setegid: \(String(cString: strerror(errno)))") }
}

/// Ends an exit test's process with `status` after saying why on stderr.
func fail(_ status: Int32, _ why: String) -> Never {
    let line = Array("exit test failed: \(why)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(status)
}
