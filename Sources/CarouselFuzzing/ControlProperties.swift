import CarouselControl
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// One control connection: the input is what a client sends before closing
/// its side, given to the real `ControlServer` over a real socket.
///
/// * Every request line (the last one may lack its newline) gets exactly one
///   reply, in order, and it is the reply the grammar decides: an error
///   naming the problem, `help`'s list, or what the daemon answered.
/// * Every reply is one line of JSON that reads back as the same reply
///   (an error quoting the client's words escapes what they hold).
/// * A request the grammar accepts, written out as a line (`line`), parses
///   back to the same request.
/// * Any JSON text the client reads is written back stable: encoding what
///   was parsed, then parsing and encoding again, gives the same bytes.
enum ControlProperties {
    static func check(_ input: [UInt8]) throws(PropertyFailure) {
        // The same bytes as a JSON reply a client might receive.
        if let text = String(validating: input, as: UTF8.self), let value = JSONValue.parse(text) {
            let once = value.encoded
            guard let again = JSONValue.parse(once) else { throw PropertyFailure("encoded JSON does not parse: \(once)") }
            try require(again.encoded == once, "JSON encoding is not stable: \(once) then \(again.encoded)")
        }

        let expected = try expectedReplies(input)
        let received = try Connection.shared.exchange(input, expecting: expected.count)
        try require(received.count == expected.count,
                    "\(expected.count) request lines got \(received.count) replies: \(received.map(\.debugDescription))")
        for (got, want) in zip(received, expected) {
            try require(got == want.line, "reply \(got) where \(want.line) was due")
            try require(ControlReply(line: got) == want, "reply line \(got) does not read back as the reply")
        }
    }

    /// The replies a client must get, worked out from the grammar alone.
    static func expectedReplies(_ input: [UInt8]) throws(PropertyFailure) -> [ControlReply] {
        var lines = input.split(separator: 0x0A, omittingEmptySubsequences: false)
        // What follows the last newline is a request only if it is not empty.
        if lines.last?.isEmpty == true { lines.removeLast() }
        var replies: [ControlReply] = []
        for line in lines {
            guard line.count <= ControlServer.maximumRequestBytes else {
                replies.append(.error("request line longer than \(ControlServer.maximumRequestBytes) bytes; it was discarded"))
                continue
            }
            guard let text = String(validating: line, as: UTF8.self) else {
                replies.append(.error("request is not valid UTF-8"))
                continue
            }
            switch ControlRequest.parse(line: text) {
            case let .failure(error):
                replies.append(.error(error.message))
            case .success(.help):
                replies.append(.ok(["commands": .array(ControlRequest.commandNames.map { .string(ControlRequest.usage[$0] ?? $0) })]))
            case let .success(request):
                let reparsed = ControlRequest.parse(line: request.line)
                try require(reparsed == .success(request), "\(request) written as \(request.line.debugDescription) parses as \(reparsed)")
                replies.append(Connection.answer(request))
            }
        }
        return replies
    }

    /// A server on a socket in a private directory, made once per process,
    /// and one client connection per input.
    final class Connection {
        nonisolated(unsafe) static let shared = Connection()

        let directory: String
        let server: ControlServer

        /// What this "daemon" answers: the request, echoed.
        static func answer(_ request: ControlRequest) -> ControlReply { .ok(["request": .string(request.line)]) }

        init() {
            var template = Array("/tmp/carousel-fuzz-XXXXXX".utf8CString)
            directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
            do {
                server = try ControlServer(path: directory + "/control.sock", maxClients: 4)
            } catch {
                fatalError("control fuzz target: cannot start the server: \(error)")
            }
            server.onRequest = { request, _ in Connection.answer(request) }
            atexit {
                // The server's socket file and its directory; the server is never released.
                unlink(Connection.shared.directory + "/control.sock")
                rmdir(Connection.shared.directory)
            }
        }

        /// Sends `input`, closes the sending side, and reads replies until the
        /// server closes the connection, or, for a subscriber (which stays
        /// connected), until `expecting` replies came and a few more turns
        /// bring nothing. Returns the reply lines.
        func exchange(_ input: [UInt8], expecting: Int) throws(PropertyFailure) -> [String] {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { fatalError("socket: \(errno)") }
            defer { Glibc.close(fd) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let path = Array((directory + "/control.sock").utf8)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path); $0[path.count] = 0 }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard connected == 0 else { fatalError("connect: \(errno)") }

            var sent = 0
            var shut = false
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            var quietTurns = 0
            func lines() throws(PropertyFailure) -> [String] {
                var lines = received.split(separator: 0x0A, omittingEmptySubsequences: false)
                try require(lines.last?.isEmpty == true, "the last reply has no newline")
                lines.removeLast()
                return lines.map { String(decoding: $0, as: UTF8.self) }
            }
            // The server reads at most 16 x 4 KiB a turn and stops while a
            // client does not read its replies: the client must read as it sends.
            for _ in 0..<100_000 {
                if sent < input.count {
                    let n = input.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
                    if n > 0 { sent += n }
                } else if !shut {
                    shutdown(fd, Int32(SHUT_WR))
                    shut = true
                }
                var pollSet = server.pollSet.map { pollfd(fd: $0.fd, events: Int16(truncatingIfNeeded: $0.events), revents: 0) }
                _ = poll(&pollSet, nfds_t(pollSet.count), 0)
                for p in pollSet where p.revents != 0 {
                    server.handle(readyDescriptor: p.fd, events: UInt32(UInt16(bitPattern: p.revents)))
                }
                quietTurns += 1
                while true {
                    let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    if n > 0 { received.append(contentsOf: buffer[0..<n]); quietTurns = 0; continue }
                    // The server closed: everything it will say has been said.
                    if n == 0 { return try lines() }
                    break
                }
                if shut, quietTurns > 20, received.count(where: { $0 == 0x0A }) >= expecting { return try lines() }
            }
            throw PropertyFailure("the server did not close the connection after answering (\(received.count) bytes received)")
        }
    }
}
