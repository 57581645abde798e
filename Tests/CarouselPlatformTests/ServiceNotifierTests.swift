import CarouselPlatform
import Foundation
import Testing

/// A datagram socket standing in for systemd's notification socket.
final class NotifyListener {
    let fd: Int32
    let name: String

    /// `abstract`: bind in the abstract namespace (`@name`), else a file path.
    init(abstract: Bool) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        let tag = "carouseld-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        name = abstract ? "@\(tag)" : FileManager.default.temporaryDirectory.appendingPathComponent(tag).path
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(name.utf8)
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count + (abstract ? 0 : 1))
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        try #require(rc == 0, "bind \(name): errno \(errno)")
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// The next message, or nil after 5 s.
    func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buffer, buffer.count, 0)
        return n < 0 ? nil : String(decoding: buffer[..<n], as: UTF8.self)
    }

    deinit {
        close(fd)
        if !name.hasPrefix("@") { unlink(name) }
    }
}

@Suite("sd_notify")
struct ServiceNotifierTests {
    @Test(arguments: [false, true])
    func messagesReachThePathOrAbstractSocket(abstract: Bool) throws {
        let listener = try NotifyListener(abstract: abstract)
        let notifier = ServiceNotifier(environment: { $0 == "NOTIFY_SOCKET" ? listener.name : nil })
        #expect(notifier.isActive)
        notifier.ready(status: "showing 3 images: /var/lib/a.jpg")
        #expect(listener.receive() == "READY=1\nSTATUS=showing 3 images: /var/lib/a.jpg")
        notifier.watchdog()
        #expect(listener.receive() == "WATCHDOG=1")
        notifier.reloading()
        let reload = try #require(listener.receive())
        let lines = reload.split(separator: "\n")
        #expect(lines.first == "RELOADING=1")
        let usec = try #require(lines.last.flatMap { Int64($0.dropFirst("MONOTONIC_USEC=".count)) })
        #expect(abs(usec - MonotonicClock.now()) < 60_000_000)
        // A newline inside a value would forge a field: it is flattened.
        notifier.status("a\nREADY=1")
        #expect(listener.receive() == "STATUS=a READY=1")
    }

    @Test func withoutASocketNothingIsSentAndNothingFails() {
        let notifier = ServiceNotifier(environment: { _ in nil })
        #expect(!notifier.isActive)
        #expect(!notifier.notify(["READY=1"]))
        #expect(notifier.watchdogInterval == nil)
    }

    @Test func aRelativeOrVanishedSocketIsNotFatal() throws {
        #expect(!ServiceNotifier(environment: { $0 == "NOTIFY_SOCKET" ? "relative/path" : nil }).isActive)
        let gone = ServiceNotifier(environment: { $0 == "NOTIFY_SOCKET" ? "/nonexistent/notify" : nil })
        #expect(!gone.notify(["READY=1"]))
    }

    @Test func theWatchdogIntervalIsOursOnlyForOurPid() {
        let mine = ServiceNotifier(environment: ["WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "\(getpid())"].get)
        #expect(mine.watchdogInterval == 10_000_000)
        let unspecified = ServiceNotifier(environment: ["WATCHDOG_USEC": "4000000"].get)
        #expect(unspecified.watchdogInterval == 4_000_000)
        let other = ServiceNotifier(environment: ["WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "1"].get)
        #expect(other.watchdogInterval == nil)
        let bad = ServiceNotifier(environment: ["WATCHDOG_USEC": "soon"].get)
        #expect(bad.watchdogInterval == nil)
    }
}

extension Dictionary where Key == String, Value == String {
    var get: (String) -> String? { { self[$0] } }
}
