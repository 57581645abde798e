import Testing
@testable import CarouselControl
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// Lowering RLIMIT_NOFILE starves the whole process, and the test runner runs
/// other tests in parallel: the test runs in a process of its own (an exit test).
@Suite("ControlServer out of file descriptors (EMFILE)")
struct DescriptorShortageTests {
    @Test("accept hitting EMFILE: the listener does not spin, the client is told why, and later clients are served")
    func outOfDescriptors() async {
        await #expect(processExitsWith: .success) {
            let h = try Harness()
            // Client sockets made now; they connect once the descriptors have run out
            // (connect() on a Unix socket needs no new descriptor, accept() does).
            let waiting = (0..<3).map { _ in socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0) }
            guard waiting.allSatisfy({ $0 >= 0 }) else { fail(1, "socket") }
            let open = openDescriptors()

            let (saved, fillers, exhausted) = exhaustDescriptors(above: open)

            for fd in waiting { connectSocket(fd, h.socketPath) }
            // The daemon's loop with a zero timeout: how often is the listener ready?
            let turns = 200
            let listenerReady = spinLoop(h.server, turns: turns)
            var replies: [String] = []
            var buffer = [UInt8](repeating: 0, count: 512)
            for fd in waiting {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                replies.append(n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : "")
            }

            restoreDescriptors(saved, fillers)
            for fd in waiting { close(fd) }

            guard exhausted else { fail(5, "the descriptor table did not fill up") }
            guard listenerReady <= 2 else { fail(6, "the listener was ready in \(listenerReady) of \(turns) turns: the loop spins") }
            let told = #"{"ok":false,"error":"carouseld has too many open files and cannot take this connection now; try again later"}"# + "\n"
            guard replies.allSatisfy({ $0 == told }) else { fail(7, "replies: \(replies)") }
            let errors = h.logs.filter { $0.0 == .error && $0.1.contains("too many open files") }
            guard errors.count == 1 else { fail(8, "\(errors.count) error lines for one shortage (rate limit): \(errors.map(\.1))") }
            guard h.server.clientCount == 0 else { fail(9, "refused clients kept") }

            // Descriptors are back: a new client is served.
            let c = h.connect()
            let reply = h.roundTrip(c, "status")
            guard reply == #"{"ok":true,"request":"status"}"# else { fail(10, "after the shortage: \(reply ?? "no reply")") }
        }
    }

    @Test("with no spare descriptor to give up, the listener leaves the poll set until nextDeadline")
    func pauseWithoutSpare() async {
        await #expect(processExitsWith: .success) {
            let h = try Harness()
            // As when another thread took the slot the spare freed: nothing in reserve.
            close(h.server.spare)
            h.server.spare = -1
            let waiting = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
            guard waiting >= 0 else { fail(1, "socket") }
            let open = openDescriptors()
            let (saved, fillers, exhausted) = exhaustDescriptors(above: open)
            connectSocket(waiting, h.socketPath)
            _ = Glibc.send(waiting, "status\n", 7, Int32(MSG_NOSIGNAL))

            let listenerReady = spinLoop(h.server, turns: 200)
            let deadline = h.server.nextDeadline
            let listenerPolled = h.server.pollSet.contains { $0.fd == h.server.listenerDescriptor }

            restoreDescriptors(saved, fillers)

            guard exhausted else { fail(5, "the descriptor table did not fill up") }
            guard listenerReady == 1 else { fail(6, "the listener was ready in \(listenerReady) of 200 turns") }
            guard let deadline else { fail(7, "no deadline to resume the listener") }
            guard !listenerPolled else { fail(8, "the paused listener is still in the poll set") }
            guard h.logs.filter({ $0.0 == .error }).count == 1 else { fail(9, "logs: \(h.logs.map(\.1))") }

            h.server.tick(now: deadline - 1)
            guard !h.server.pollSet.contains(where: { $0.fd == h.server.listenerDescriptor }) else { fail(10, "resumed early") }
            h.server.tick(now: deadline)
            guard h.server.nextDeadline == nil, h.server.pollSet.first?.fd == h.server.listenerDescriptor else {
                fail(11, "not resumed at the deadline")
            }
            guard h.server.spare >= 0 else { fail(12, "no spare again after the shortage") }
            // The connection waited in the backlog and is served now.
            var line: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 256)
            h.run {
                let n = buffer.withUnsafeMutableBytes { recv(waiting, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if n > 0 { line += buffer[0..<n] }
                return line.last == 0x0A
            }
            let reply = String(decoding: line, as: UTF8.self)
            guard reply == #"{"ok":true,"request":"status"}"# + "\n" else { fail(13, "the waiting client got: \(reply)") }
            close(waiting)
        }
    }
}

/// Lowers RLIMIT_NOFILE to just above `open` and fills every free slot
/// below it: no descriptor can be had at all. Returns the limit to restore,
/// the fillers to close, and whether the table really ran full.
func exhaustDescriptors(above open: [Int32]) -> (saved: rlimit, fillers: [Int32], exhausted: Bool) {
    var saved = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved) == 0 else { fail(2, "getrlimit") }
    var lowered = saved
    lowered.rlim_cur = rlim_t(open.max()! + 1)
    guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lowered) == 0 else { fail(3, "setrlimit") }
    var fillers: [Int32] = []
    fillers.reserveCapacity(open.count + 16)
    while true {
        let fd = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
        if fd < 0 { break }
        fillers.append(fd)
    }
    return (saved, fillers, errno == EMFILE)
}

func restoreDescriptors(_ saved: rlimit, _ fillers: [Int32]) {
    for fd in fillers { close(fd) }
    var saved = saved
    guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved) == 0 else { fail(4, "restoring the limit") }
}

/// The daemon's loop with a zero timeout, `turns` times: how often was the listener ready?
func spinLoop(_ server: ControlServer, turns: Int) -> Int {
    var listenerReady = 0
    var fds = [pollfd](repeating: pollfd(), count: 64)
    for _ in 0..<turns {
        let entries = server.pollSet
        for (i, e) in entries.enumerated() { fds[i] = pollfd(fd: e.fd, events: Int16(truncatingIfNeeded: e.events), revents: 0) }
        guard poll(&fds, nfds_t(entries.count), 0) > 0 else { continue }
        for p in fds[0..<entries.count] where p.revents != 0 {
            if p.fd == server.listenerDescriptor { listenerReady += 1 }
            server.handle(readyDescriptor: p.fd, events: UInt32(UInt16(bitPattern: p.revents)))
        }
    }
    return listenerReady
}

/// The descriptors open in this process now.
func openDescriptors() -> [Int32] {
    guard let dir = opendir("/proc/self/fd") else { return [] }
    var found: [Int32] = []
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
        if let fd = Int32(name) { found.append(fd) }
    }
    let own = dirfd(dir)
    closedir(dir)
    return found.filter { $0 != own }
}

/// Connects a blocking socket made earlier to the server at `path`.
func connectSocket(_ fd: Int32, _ path: String) {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes); $0[bytes.count] = 0 }
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    if result != 0 { fail(20, "connect: \(String(cString: strerror(errno)))") }
}
