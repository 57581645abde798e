// The libmosquitto link on its own, against a real broker started by the
// test (Mosquitto on a loopback port, as Tests/Servers/mqtt_e2e.py does for the
// whole daemon): connect, subscribe, publish and receive, a refusal, the
// broker going away and coming back, and the socket libmosquitto keeps
// open after a connection ended (what the daemon's MQTT service takes out
// of its epoll set by hand).

import CarouselLoop
import CarouselConfig
import CarouselMQTT
import CarouselPlatform
import Foundation
import Testing
@testable import CarouselMQTTClient
#if canImport(Glibc)
import Glibc
#endif

/// `mosquitto -c` on a loopback port, in a folder of its own.
private final class Broker {
    let port: Int
    let folder: URL
    private var process: Process?

    init(anonymous: Bool = true, port: Int? = nil) throws {
        self.port = port ?? Broker.freePort()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("carouseld-broker-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // Started as root, mosquitto drops to its own user: it must reach its files.
        chmod(folder.path, 0o755)
        let conf = "listener \(self.port) 127.0.0.1\nallow_anonymous \(anonymous)\npersistence false\n"
        try Data(conf.utf8).write(to: folder.appendingPathComponent("mosquitto.conf"))
    }

    static var installed: Bool { FileManager.default.isExecutableFile(atPath: "/usr/sbin/mosquitto") }

    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @discardableResult
    func start() throws -> Broker {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
        p.arguments = ["-c", folder.appendingPathComponent("mosquitto.conf").path]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        process = p
        // Until it accepts connections.
        for _ in 0..<400 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let ok = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            } == 0
            close(fd)
            if ok { return self }
            usleep(50_000)
        }
        throw MQTTLinkError("mosquitto did not listen on port \(port)")
    }

    func kill() {
        guard let p = process, p.isRunning else { return }
        Glibc.kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: folder)
    }
}

/// A link and a small loop of its own: what the daemon's MQTT service does
/// with its descriptors and deadline, without the daemon.
private final class Driver {
    let link: MQTTLink
    /// Where a connect to a name would be handed back (the daemon's executor in the daemon).
    let executor: LoopExecutor
    var seen: [MQTTLink.Happening] = []

    init(port: Int, keepalive: Int = 5, host: String = "127.0.0.1") throws {
        var settings = MQTTConfig()
        settings.broker = MQTTBroker(host: host, port: port, tls: false)
        settings.clientID = "link-test-\(port)"
        settings.keepalive = keepalive
        let identity = FrameIdentity(clientID: settings.effectiveClientID, topic: "carouseld/link-test",
                                     discoveryPrefix: "", version: "test")
        executor = try LoopExecutor()
        link = try MQTTLink(settings: settings, frame: FrameProtocol(identity: identity), password: nil, executor: executor)
    }

    /// Runs the link until `done` says so or `seconds` pass; true if done.
    func run(seconds: Double, until done: (Driver) -> Bool) -> Bool {
        let end = MonotonicClock.now() + Int64(seconds * 1_000_000)
        while MonotonicClock.now() < end {
            let now = MonotonicClock.now()
            if let due = link.deadline, now >= due { link.tick(now: now) }
            take()
            if done(self) { return true }
            var fds = [pollfd(fd: executor.interests[0].fd, events: Int16(POLLIN), revents: 0)]
            if let fd = link.socket {
                fds.append(pollfd(fd: fd, events: Int16(POLLIN) | (link.wantsWrite ? Int16(POLLOUT) : 0), revents: 0))
            }
            let wait = link.deadline.map { max(0, min(($0 - now) / 1000, 50)) } ?? 50
            _ = poll(&fds, nfds_t(fds.count), Int32(wait))
            if fds[0].revents != 0 { executor.collect() }
            if fds.count > 1 {
                if fds[1].revents & ~Int16(POLLOUT) != 0 { link.readable() }
                if fds[1].revents & Int16(POLLOUT) != 0 { link.writable() }
            }
            take()
            if done(self) { return true }
        }
        return false
    }

    /// What libmosquitto reported, acted on as the service does.
    private func take() {
        for happening in link.take() {
            seen.append(happening)
            switch happening {
            case .connected(0): link.accepted()
            case .disconnected: link.lost()
            default: break
            }
        }
    }

    var connectedCount: Int { seen.filter { $0 == .connected(0) }.count }
    var disconnected: Bool { seen.contains { if case .disconnected = $0 { true } else { false } } }
    func messages(on topic: String) -> [String] {
        seen.compactMap { if case let .message(t, payload) = $0, t == topic { String(decoding: payload, as: UTF8.self) } else { nil } }
    }
}

@Suite("The libmosquitto link against a real broker", .enabled(if: Broker.installed, "mosquitto is not installed (scripts/setup.sh installs it)"))
struct MQTTLinkTests {
    @Test func itConnectsSubscribesAndReceivesWhatItPublishes() throws {
        let broker = try Broker().start()
        let d = try Driver(port: broker.port)
        #expect(d.run(seconds: 20) { $0.connectedCount == 1 }, "connected: \(d.seen)")
        #expect(d.link.phase == .connected)
        d.link.subscribe("carouseld/link-test/echo")
        // A subscription is in place once the broker read it: publish until the echo comes.
        var sent = 0
        let echoed = d.run(seconds: 20) { driver in
            if sent < 40, driver.link.publish(MQTTMessage("carouseld/link-test/echo", Array("hello \(sent)".utf8), retain: false)) {
                sent += 1
            }
            return !driver.messages(on: "carouseld/link-test/echo").isEmpty
        }
        #expect(echoed, "no echo after \(sent) messages: \(d.seen)")
        #expect(d.messages(on: "carouseld/link-test/echo").allSatisfy { $0.hasPrefix("hello ") })
        d.link.close()
        #expect(d.link.phase == .waiting)
        #expect(d.link.deadline == nil, "closed: nothing more to do")
    }

    @Test func aRefusedConnectionSaysWhyAndWaitsToTryAgain() throws {
        let broker = try Broker(anonymous: false).start()
        let d = try Driver(port: broker.port)
        let refused = d.run(seconds: 20) { driver in
            driver.seen.contains { if case let .connected(code) = $0, code != 0 { true } else { false } }
        }
        #expect(refused, "\(d.seen)")
        guard case let .connected(code)? = d.seen.first(where: { if case .connected = $0 { true } else { false } }) else { return }
        #expect(MQTTLink.describeRefusal(code).contains("not authorised"))
    }

    @Test func theBrokerGoingAwayEndsTheConnectionAndItComesBackWhenTheBrokerDoes() throws {
        let broker = try Broker().start()
        let d = try Driver(port: broker.port, keepalive: 5)
        #expect(d.run(seconds: 20) { $0.connectedCount == 1 })
        let before = d.link.openSocket
        #expect(before != nil && before == d.link.socket)
        broker.kill()
        #expect(d.run(seconds: 20) { $0.disconnected }, "\(d.seen)")
        #expect(d.link.phase == .waiting)
        #expect(d.link.socket == nil, "no socket to watch while waiting")
        // libmosquitto may keep the ended connection's socket open: if it
        // does, it is still a descriptor of this process, which the daemon's
        // service takes out of its epoll set itself (keepsOpen).
        if let kept = d.link.openSocket { #expect(fcntl(kept, F_GETFD) != -1) }
        #expect(d.link.retryAt != nil, "a retry is scheduled")
        let again = try Broker(port: broker.port).start()
        #expect(d.run(seconds: 30) { $0.connectedCount == 2 }, "\(d.seen)")
        again.kill()
    }

    @Test func aNameIsResolvedAndConnectedOffTheLoopAndHandedBackOnIt() throws {
        let broker = try Broker().start()
        let d = try Driver(port: broker.port, host: "localhost")
        var handedBack = 0
        d.link.onHandBack = { handedBack += 1 }
        #expect(d.run(seconds: 20) { $0.connectedCount == 1 }, "\(d.seen)")
        #expect(handedBack == 1, "the worker's connect came back through the executor once")
    }
}

@Suite struct MQTTLinkRefusedTests {
    /// A link libmosquitto refuses to make (a password without a user name:
    /// MOSQ_ERR_INVAL) is destroyed once. It used to be destroyed by the
    /// failed init and again by deinit: the second mosquitto_destroy read the
    /// freed handle and closed descriptors that were no longer its own (on a
    /// board, the daemon's epoll set: "epoll_wait: Bad file descriptor",
    /// exit 1, restarted for ever).
    @Test func aLinkThatCannotBeMadeClosesNothingButItsOwn() throws {
        // Descriptors of the process before and after, each still open and still the same file.
        var pipes: [[Int32]] = []
        for _ in 0..<16 {
            var p: [Int32] = [0, 0]
            #expect(pipe(&p) == 0)
            pipes.append(p)
        }
        defer { for p in pipes { close(p[0]); close(p[1]) } }
        var settings = MQTTConfig()
        settings.broker = MQTTBroker(host: "127.0.0.1", port: 1, tls: false)
        let identity = FrameIdentity(clientID: "refused-link", topic: "carouseld/refused", discoveryPrefix: "", version: "test")
        let executor = try LoopExecutor()
        for _ in 0..<8 {
            #expect(throws: MQTTLinkError.self) {
                _ = try MQTTLink(settings: settings, frame: FrameProtocol(identity: identity), password: "pw", executor: executor)
            }
            var later: [Int32] = [0, 0]
            #expect(pipe(&later) == 0)
            pipes.append(later)
        }
        for p in pipes {
            var buffer: UInt8 = 7
            #expect(write(p[1], &buffer, 1) == 1, "descriptor \(p[1]) was closed under us")
            buffer = 0
            #expect(read(p[0], &buffer, 1) == 1 && buffer == 7, "descriptor \(p[0]) was closed under us")
        }
        #expect(fcntl(executor.interests[0].fd, F_GETFD) != -1, "the executor's descriptor was closed under it")
    }
}
