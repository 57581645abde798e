import CarouselControl
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// A temporary directory, removed (with what is in it) at deinit.
final class TemporaryDirectory {
    let path: String

    init() {
        var template = Array("/tmp/carouselctl-test-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    deinit {
        if let dir = opendir(path) {
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
                if name != "." && name != ".." { unlink(path + "/" + name); rmdir(path + "/" + name) }
            }
            closedir(dir)
        }
        rmdir(path)
    }
}

/// The daemon's loop in miniature: poll() on the server's descriptors.
final class Harness {
    let directory = TemporaryDirectory()
    var server: ControlServer!
    var logs: [(ControlLogLevel, String)] = []
    var requests: [ControlRequest] = []
    var socketPath: String { directory.path + "/control.sock" }

    init(maxClients: Int = 16, allowUIDs: Set<UInt32>? = nil, allowGIDs: Set<UInt32>? = nil,
         maximumQueuedBytes: Int = ControlServer.defaultMaximumQueuedBytes) throws {
        server = try ControlServer(
            path: socketPath, allowUIDs: allowUIDs, allowGIDs: allowGIDs, maxClients: maxClients,
            maximumQueuedBytes: maximumQueuedBytes,
            log: { [unowned self] level, line in self.logs.append((level, line)) })
        server.onRequest = { [unowned self] request, _ in
            self.requests.append(request)
            return .ok(["request": .string(request.line)])
        }
    }

    func logged(_ text: String) -> Bool { logs.contains { $0.1.contains(text) } }

    /// One turn of the loop: wait up to `milliseconds` and handle what is ready.
    func turn(milliseconds: Int32 = 5) {
        // As the daemon's loop does: the server's deadline (a listener paused
        // for lack of descriptors comes back, idle clients go) is run when due.
        if let due = server.nextDeadline, MonotonicClock.now() >= due { server.tick() }
        let entries = server.pollSet
        var fds = entries.map { pollfd(fd: $0.fd, events: Int16(truncatingIfNeeded: $0.events), revents: 0) }
        guard poll(&fds, nfds_t(fds.count), milliseconds) > 0 else { return }
        for p in fds where p.revents != 0 {
            server.handle(readyDescriptor: p.fd, events: UInt32(UInt16(bitPattern: p.revents)))
        }
    }

    /// Runs the loop until `condition` holds (or about five seconds pass).
    @discardableResult
    func run(until condition: () -> Bool) -> Bool {
        for _ in 0..<1000 {
            if condition() { return true }
            turn()
        }
        return condition()
    }

    /// Runs the loop until `client` has at least `count` complete lines.
    @discardableResult
    func waitForLines(_ client: TestClient, _ count: Int) -> Bool {
        run { client.drain(); return client.received.filter { $0 == 0x0A }.count >= count }
    }

    func connect() -> TestClient { TestClient(path: socketPath) }

    /// Sends one line and runs the loop until its reply arrives.
    func roundTrip(_ client: TestClient, _ line: String) -> String? {
        client.send(line + "\n")
        run { client.hasLine }
        return client.nextLine()
    }
}

/// A non-blocking client socket, read on demand so one thread can drive both ends.
final class TestClient {
    let fd: Int32
    var received: [UInt8] = []
    var closedByServer = false

    init(path: String) {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes); $0[bytes.count] = 0 }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        precondition(result == 0, "connect: \(String(cString: strerror(errno)))")
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    deinit { close(fd) }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            precondition(n > 0, "test client send: \(String(cString: strerror(errno)))")
            sent += n
        }
    }

    /// Reads what is there now.
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { received.append(contentsOf: buffer[0..<n]); continue }
            if n == 0 || (n < 0 && errno == ECONNRESET) { closedByServer = true }
            return
        }
    }

    var hasLine: Bool { drain(); return received.contains(0x0A) }

    func nextLine() -> String? {
        guard let newline = received.firstIndex(of: 0x0A) else { return nil }
        let line = String(decoding: received[..<newline], as: UTF8.self)
        received.removeFirst(newline + 1)
        return line
    }

    var allLines: [String] {
        var lines: [String] = []
        while let l = nextLine() { lines.append(l) }
        return lines
    }
}
