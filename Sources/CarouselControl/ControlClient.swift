import CarouselPlatform
import CPlatform
#if canImport(Glibc)
import Glibc
#endif

/// A blocking connection to the control socket, for carouselctl and tests
/// that run outside the daemon's loop. Never use it on the daemon's loop.
public final class ControlClient {
    public let path: String
    private let fd: FileDescriptor
    private var input: [UInt8] = []

    /// Connects to `path`; `timeoutSeconds` bounds each wait for a reply
    /// (0: wait for ever, for `watch`). The corresponding C function is `connect`.
    public init(path: String, timeoutSeconds: Int = 10) throws(ControlClientError) {
        self.path = path
        let raw: Int32
        do {
            raw = try systemCall("socket") { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0) }
        } catch {
            throw .cannotConnect(path: path, reason: errnoDescription(error.errno))
        }
        fd = FileDescriptor(raw)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw .cannotConnect(path: path, reason: "path too long for a Unix socket")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes); $0[bytes.count] = 0 }
        do {
            try systemCall("connect") {
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(raw, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
            }
        } catch {
            throw .cannotConnect(path: path, reason: errnoDescription(error.errno))
        }
        if timeoutSeconds > 0 {
            var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
            _ = setsockopt(raw, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    /// Sends one request line.
    public func send(_ request: ControlRequest) throws(ControlClientError) {
        try send(line: request.line)
    }

    /// Sends `line` and its newline. A line break inside `line` would make
    /// a second request of the rest (a value smuggling in a command): refused.
    /// `passing` is an open descriptor sent with the line's first bytes
    /// (SCM_RIGHTS): the daemon gets its own copy of it.
    public func send(line: String, passing descriptor: Int32? = nil) throws(ControlClientError) {
        guard !line.contains(where: \.isNewline) else {
            throw .invalidRequest("a request is one line: '\(line.prefix(40))' contains a line break")
        }
        let bytes = Array((line + "\n").utf8)
        var sent = 0
        while sent < bytes.count {
            do {
                sent += try systemCall("send") {
                    bytes.withUnsafeBytes { raw -> Int in
                        let start = raw.baseAddress! + sent
                        if sent == 0, let descriptor {
                            return cplatform_send_with_fd(fd.raw, start, raw.count, descriptor)
                        }
                        return Glibc.send(fd.raw, start, raw.count - sent, Int32(MSG_NOSIGNAL))
                    }
                }
            } catch {
                throw .connectionLost(path: path, reason: errnoDescription(error.errno))
            }
        }
    }

    /// Ends the connection both ways: a `readLine` waiting on another
    /// thread returns nil (a subscriber's reader is stopped so).
    public func shutdown() {
        _ = Glibc.shutdown(fd.raw, Int32(SHUT_RDWR))
    }

    /// The next line from the daemon (without its newline), or nil when the
    /// daemon closed the connection.
    public func readLine() throws(ControlClientError) -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            if let newline = input.firstIndex(of: 0x0A) {
                let line = String(decoding: input[..<newline], as: UTF8.self)
                input.removeFirst(newline + 1)
                return line
            }
            let count: Int
            do {
                guard let n = try attemptSystemCall("recv", {
                    buffer.withUnsafeMutableBytes { recv(fd.raw, $0.baseAddress, $0.count, 0) }
                }) else {
                    // SO_RCVTIMEO expired: recv reports it as EAGAIN.
                    throw ControlClientError.timedOut(path: path)
                }
                count = n
            } catch let error as ControlClientError {
                throw error
            } catch {
                throw .connectionLost(path: path, reason: errnoDescription((error as? SystemCallError)?.errno ?? EIO))
            }
            if count == 0 { return nil }
            input.append(contentsOf: buffer[0..<count])
        }
    }

    /// Sends `request` and waits for its reply line.
    public func request(_ request: ControlRequest, passing descriptor: Int32? = nil) throws(ControlClientError) -> String {
        do {
            try send(line: request.line, passing: descriptor)
        } catch {
            // A refusal ("too many clients", the allow-list) can close the
            // connection before our request is even written: its reply is
            // still waiting to be read, and says more than EPIPE.
            if let refusal = try? readLine() { return refusal }
            throw error
        }
        guard let line = try readLine() else {
            throw .connectionLost(path: path, reason: "carouseld closed the connection without replying")
        }
        return line
    }
}

/// What can go wrong talking to the daemon, worded for the person at the shell.
public enum ControlClientError: Error, Equatable, CustomStringConvertible {
    case cannotConnect(path: String, reason: String)
    case connectionLost(path: String, reason: String)
    case timedOut(path: String)
    /// Refused before sending.
    case invalidRequest(String)

    public var description: String {
        switch self {
        case let .cannotConnect(path, reason):
            "cannot connect to \(path): \(reason) (is carouseld running? see --socket)"
        case let .connectionLost(path, reason):
            "lost the connection to carouseld at \(path): \(reason)"
        case let .invalidRequest(message):
            message
        case let .timedOut(path):
            "no reply from carouseld at \(path) in time (is its loop stuck? check `journalctl -u carouseld`)"
        }
    }
}
