// The control socket on the daemon's manual clock: the server counts its
// idle limit on the clock the daemon gives it, so a test moves time on and
// sees an idle client closed, with a real socket and no waiting.

import CarouselControl
import CarouselPlatform
import Foundation
import Testing
import CarouselDaemon
#if canImport(Glibc)
import Glibc
#endif

@Suite("The control socket on the manual clock") struct ManualClockSocketTests {
    /// A client of the daemon's socket, reading without blocking.
    final class Client {
        let fd: Int32
        var received = ""

        init(path: String) throws {
            fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (i, b) in path.utf8.enumerated() { raw[i] = b }
            }
            let ok = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard ok == 0 else { throw SystemCallError(call: "connect", errno: errno) }
        }

        func send(_ line: String) { _ = line.withCString { write(fd, $0, strlen($0)) } }

        /// Whatever arrived; true when the server closed the connection.
        @discardableResult
        func read() -> Bool {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = Glibc.read(fd, &buffer, buffer.count)
                if n > 0 { received += String(decoding: buffer[0..<n], as: UTF8.self); continue }
                return n == 0
            }
        }

        deinit { close(fd) }
    }

    /// Lets the daemon's services take their descriptors until `done`.
    func pump(_ d: OffscreenDaemon, turns: Int = 200, until done: () -> Bool) throws -> Bool {
        for _ in 0..<turns {
            try d.daemon.dispatchDescriptors(timeoutMilliseconds: 10)
            if done() { return true }
        }
        return false
    }

    @Test func requestsAreAnsweredAndAnIdleClientIsClosedWhenTheManualClockSaysSo() throws {
        let path = shortSocketPath()
        let d = try OffscreenDaemon(ini: "[control]\nsocket = \(path)\n", controlSocket: true)
        defer { unlink(path) }
        d.showFirstPicture()
        let asking = try Client(path: path)
        asking.send("status\n")
        #expect(try pump(d) { asking.read(); return asking.received.contains("\n") }, "no reply: \(asking.received)")
        let reply = ControlReply(line: String(asking.received.split(separator: "\n").first ?? ""))
        guard case let .ok(fields)? = reply else {
            Issue.record("not an ok reply: \(asking.received)")
            return
        }
        #expect(fields["index"] == .int(0))

        let idle = try Client(path: path)
        // Accepted (the listener's turn), then nothing is sent: idle from the server's (manual) now.
        _ = try pump(d, turns: 10) { false }
        d.advance(ms: 5_000)
        _ = try pump(d, turns: 10) { false }
        #expect(!idle.read(), "closed after 5 s of a 30 s limit")
        d.advance(ms: 30_000)
        #expect(try pump(d) { idle.read() }, "not closed after the idle limit on the manual clock")
        #expect(idle.received.contains("closing an idle connection"), "\(idle.received)")
    }
}
