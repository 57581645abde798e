// A real Mosquitto broker for the MQTT tests, started by the test on a free
// loopback port and killed after; mosquitto_sub and mosquitto_pub as the
// other side. Nothing here talks MQTT itself.

import Foundation
import Testing

/// Debian's broker and clients, where installed (scripts/setup.sh installs them).
let mosquittoBinary: String? = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"].first { FileManager.default.isExecutableFile(atPath: $0) }
let mosquittoTools: Bool = mosquittoBinary != nil
    && FileManager.default.isExecutableFile(atPath: "/usr/bin/mosquitto_sub")
    && FileManager.default.isExecutableFile(atPath: "/usr/bin/mosquitto_pub")

/// A free TCP port on 127.0.0.1 (bound once to port 0, then released).
func freeLoopbackPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
func loopbackAccepts(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}

/// Waits (polling, generous limit) until `condition` holds; records an issue if it never does.
@discardableResult
func eventually(_ what: String, limit: TimeInterval = 30, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(limit)
    while Date() < end {
        if condition() { return true }
        usleep(50_000)
    }
    Issue.record("timed out waiting for \(what)")
    return false
}

/// `mosquitto -c <config>` on a loopback port of its own, in a folder of its own.
final class TestBroker {
    let port: Int
    let folder: URL
    private let extraConfig: String
    private var process: Process?

    /// `extra`: more broker configuration (a TLS listener's files, a password file);
    /// `$FOLDER` in it is the broker's folder.
    init(extra: String = "", anonymous: Bool = true) throws {
        port = freeLoopbackPort()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("mosquitto-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        extraConfig = "listener \(port) 127.0.0.1\nallow_anonymous \(anonymous)\n"
            + extra.replacingOccurrences(of: "$FOLDER", with: folder.path)
    }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// Starts the broker (again, on the same port) and waits until it accepts connections.
    func start() throws {
        try Data(extraConfig.utf8).write(to: URL(fileURLWithPath: path("mosquitto.conf")))
        let p = Process()
        p.executableURL = URL(fileURLWithPath: mosquittoBinary!)
        p.arguments = ["-c", path("mosquitto.conf")]
        FileManager.default.createFile(atPath: path("broker.log"), contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: path("broker.log")))
        log.seekToEndOfFile()
        p.standardOutput = log
        p.standardError = log
        try p.run()
        process = p
        eventually("the broker on port \(port)") { loopbackAccepts(port) }
    }

    /// Kills the broker at once (no goodbye to anyone).
    func kill() {
        guard let p = process, p.isRunning else { return }
        Foundation.kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        process = nil
    }

    /// `mosquitto_passwd -b`: a password file the broker checks.
    func addUser(_ user: String, _ password: String) throws {
        let file = path("passwords")
        if !FileManager.default.fileExists(atPath: file) { FileManager.default.createFile(atPath: file, contents: nil) }
        try run("/usr/bin/mosquitto_passwd", ["-b", file, user, password])
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: folder)
    }
}

/// Runs a tool to its end; throws if it fails.
func run(_ tool: String, _ arguments: [String]) throws {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: tool)
    p.arguments = arguments
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    try p.run()
    p.waitUntilExit()
    guard p.terminationStatus == 0 else {
        throw TestToolError(description: "\(tool) \(arguments.joined(separator: " ")) exited \(p.terminationStatus)")
    }
}

struct TestToolError: Error, CustomStringConvertible { let description: String }

/// `mosquitto_sub` on a topic filter, every message kept as `topic payload`
/// lines (retained ones too), read as they come.
final class TopicWatcher {
    private let process = Process()
    private let output: URL

    init(_ broker: TestBroker, _ filter: String = "#", tls: [String] = []) throws {
        output = broker.folder.appendingPathComponent("sub-\(UUID().uuidString.prefix(8)).txt")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        // Line-buffered: mosquitto_sub's stdio would keep a file's lines until 4 KiB.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/stdbuf")
        // -N: no newline after a payload of its own; %t %p\n: one line per message
        // (a PNG's bytes may hold newlines: tests only look at its size through the reply).
        process.arguments = ["-oL", "/usr/bin/mosquitto_sub", "-h", "127.0.0.1", "-p", "\(broker.port)", "-t", filter, "-F", "%t %p", "-q", "1"] + tls
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// The lines received so far.
    var lines: [String] {
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? String(decoding: (try? Data(contentsOf: output)) ?? Data(), as: UTF8.self)
        return text.split(separator: "\n").map(String.init)
    }

    /// Payloads received on `topic`, in order.
    func payloads(_ topic: String) -> [String] {
        lines.filter { $0.hasPrefix(topic + " ") || $0 == topic }.map { String($0.dropFirst(min(topic.count + 1, $0.count))) }
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}

/// `mosquitto_pub` of one message.
func publish(_ broker: TestBroker, _ topic: String, _ message: String, tls: [String] = []) throws {
    try run("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", "\(broker.port)", "-t", topic, "-m", message, "-q", "1"] + tls)
}
