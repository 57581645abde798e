// The daemon's control socket, end to end: the real binary on the offscreen
// display, a real Unix socket, the same client carouselctl uses.

import CarouselControl
import Foundation
import CarouselPlatform
import Testing

@Suite("control socket", .enabled(if: daemonBinary != nil, "carouseld binary not found; set CAROUSELD_BIN"))
struct ControlSocketTests {
    func field(_ line: String, _ key: String) -> JSONValue? {
        guard case let .object(fields)? = JSONValue.parse(line) else { return nil }
        return fields[key]
    }

    @Test func commandsStatusErrorsAndEvents() throws {
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("cs-\(UUID().uuidString.prefix(8)).sock").path
        let d = try RunningDaemon(config: "[images]\npath = $IMAGES\n[autoplay]\nenabled = false\n[control]\nsocket = \(socket)\n")
        try d.addImage("1.jpg", from: "01-mountains.jpg")
        try d.addImage("2.jpg", from: "02-sunset.jpg")
        try d.addImage("3.png", from: "04-panels.png")
        try d.start()
        defer { _ = d.stop() }
        d.waitFor("the control socket") { $0.contains("<6>control socket: \(socket)") }

        let client = try ControlClient(path: socket)
        let status = try client.request(.status)
        #expect(field(status, "ok") == .bool(true), "\(status)")
        #expect(field(status, "count") == .int(3))
        #expect(field(status, "index") == .int(0))
        #expect(field(status, "state") == .string("idle"))
        guard case let .object(display)? = field(status, "display") else { Issue.record("no display in \(status)"); return }
        #expect(display["backend"] == .string("offscreen 320x200"))

        // A subscriber sees the events of a command another client sends.
        let watcher = try ControlClient(path: socket)
        #expect(field(try watcher.request(.subscribe), "ok") == .bool(true))
        #expect(field(try client.request(.goto(index: 2, milliseconds: 0)), "index") == .int(2))
        var names: [String] = []
        while !names.contains("currentItemIndexDidChange"), let line = try watcher.readLine() {
            if case let .string(name)? = field(line, "event") { names.append(name) }
        }
        #expect(names.contains("currentItemIndexDidChange"))

        // A malformed request gets an error naming it, and the connection stays usable.
        try client.send(line: "nxt")
        let error = try client.readLine() ?? ""
        #expect(field(error, "ok") == .bool(false))
        if case let .string(text)? = field(error, "error") { #expect(text.contains("nxt")) }
        #expect(field(try client.request(.version), "ok") == .bool(true))
        #expect(field(try client.request(.goto(index: 7, milliseconds: nil)), "ok") == .bool(false))

        // A screenshot of what is on screen.
        let shot = FileManager.default.temporaryDirectory.appendingPathComponent("shot-\(UUID().uuidString.prefix(8)).png").path
        #expect(field(try client.request(.screenshot(path: shot)), "ok") == .bool(true))
        #expect(FileManager.default.fileExists(atPath: shot))
        try? FileManager.default.removeItem(atPath: shot)
    }
}
