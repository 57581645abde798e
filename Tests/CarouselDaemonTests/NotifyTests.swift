// The daemon and systemd's notification protocol: a datagram socket stands
// in for the service manager, as NOTIFY_SOCKET names it.

import Foundation
import Testing

/// A bound datagram socket that collects the daemon's notifications.
final class FakeServiceManager {
    let fd: Int32
    let path: String
    private(set) var messages: [String] = []

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString.prefix(8))").path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in path.utf8.enumerated() { raw[i] = b }
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(rc == 0)
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Collects messages until `condition` holds on all of them (generous limit).
    @discardableResult
    func waitFor(_ what: String, limit: TimeInterval = 30, _ condition: ([String]) -> Bool) -> Bool {
        let end = Date().addingTimeInterval(limit)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < end {
            if condition(messages) { return true }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 { messages.append(String(decoding: buffer[..<n], as: UTF8.self)) }
        }
        Issue.record("timed out waiting for \(what); messages: \(messages)")
        return false
    }

    deinit {
        close(fd)
        unlink(path)
    }
}

@Suite("sd_notify from the daemon (offscreen)", .enabled(if: daemonBinary != nil, "carouseld binary not found; set CAROUSELD_BIN"))
struct NotifyTests {
    @Test func readyAfterTheFirstFrameThenWatchdogStatusReloadAndStop() throws {
        let manager = try FakeServiceManager()
        let d = try RunningDaemon(config: "[images]\npath = $IMAGES\n[autoplay]\ninterval = 0.5\ntransition = 0.1\n")
        try d.addImage("1.jpg", from: "01-mountains.jpg")
        try d.addImage("2.jpg", from: "02-sunset.jpg")
        // RunningDaemon's, with its own STATE_DIRECTORY (not the machine's /var/lib/carouseld).
        var environment = d.process.environment ?? ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = manager.path
        environment["WATCHDOG_USEC"] = "400000"
        d.process.environment = environment
        try d.start()

        manager.waitFor("READY=1") { $0.contains { $0.hasPrefix("READY=1\n") } }
        // READY comes once the first frame is on screen, and says what is shown.
        #expect(d.log.contains("first frame on screen"))
        let ready = manager.messages.first { $0.hasPrefix("READY=1") } ?? ""
        #expect(ready.contains("STATUS=showing 1 of 2: ") && ready.hasSuffix("/images/1.jpg"), "\(ready)")
        #expect(d.log.contains("<6>systemd watchdog: a keep-alive every 200 ms"))
        // Keep-alives keep coming from the loop, also at rest between advances.
        manager.waitFor("five keep-alives") { $0.filter { $0 == "WATCHDOG=1" }.count >= 5 }
        // The status follows the picture on screen.
        manager.waitFor("the second picture") { $0.contains { $0.hasPrefix("STATUS=showing 2 of 2: ") } }

        kill(d.process.processIdentifier, SIGHUP)
        manager.waitFor("READY=1 after the reload") { messages in
            guard let reloading = messages.lastIndex(where: { $0.hasPrefix("RELOADING=1\nMONOTONIC_USEC=") }) else { return false }
            return messages[reloading...].contains { $0.hasPrefix("READY=1\n") }
        }
        #expect(d.stop() == 0)
        manager.waitFor("STOPPING=1") { $0.contains("STOPPING=1") }
    }

    @Test func withoutNotifySocketNothingIsTriedAndNoWatchdogRuns() throws {
        let d = try RunningDaemon(config: "[images]\npath = $IMAGES\n[autoplay]\nenabled = false\n")
        try d.addImage("1.jpg", from: "01-mountains.jpg")
        // RunningDaemon's, with its own STATE_DIRECTORY (not the machine's /var/lib/carouseld).
        var environment = d.process.environment ?? ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = nil
        environment["WATCHDOG_USEC"] = "400000"
        environment["WATCHDOG_PID"] = "1"  // someone else's watchdog
        d.process.environment = environment
        try d.start()
        d.waitFor("the picture") { $0.contains("first picture on screen") }
        #expect(!d.log.contains("watchdog"))
        #expect(d.stop() == 0)
    }
}
