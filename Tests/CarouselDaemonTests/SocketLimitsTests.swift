// The daemon's control socket under abuse: every command, oversized lines,
// a subscriber that never reads, fifty clients at once. The real binary on
// the offscreen display, real Unix sockets.

import CarouselControl
import Foundation
import CarouselPlatform
import Testing

@Suite("control socket limits (offscreen)", .enabled(if: daemonBinary != nil, "carouseld binary not found; set CAROUSELD_BIN"))
struct SocketLimitsTests {
    static let images = [("1.jpg", "01-mountains.jpg"), ("2.jpg", "02-sunset.jpg"), ("3.png", "04-panels.png")]

    @Test func everyCommandIsAnswered() throws {
        let d = try ControlledDaemon("[images]\npath = $IMAGES\n[autoplay]\nenabled = false\n", images: Self.images)
        defer { _ = d.stop() }
        let shot = d.daemon.folder.appendingPathComponent("every.png").path
        let requests: [(String, (([String: JSONValue]) -> Bool))] = [
            ("next", { $0["index"] != nil }),
            ("prev", { $0["index"] != nil }),
            ("goto 2", { $0["index"] != nil }),
            ("goto 1 0", { $0["index"] == .int(1) }),
            ("pause", { if case let .object(a)? = $0["autoplay"] { return a["paused_by"] == .array([.string("command")]) }; return false }),
            ("pause", { if case let .object(a)? = $0["autoplay"] { return a["paused_by"] == .array([.string("command")]) }; return false }),
            // `play` lifts the pause; autoplay stays as [autoplay] enabled = false has it.
            ("play", { if case let .object(a)? = $0["autoplay"] { return a["paused_by"] == .array([]) && a["enabled"] == .bool(false) }; return false }),
            ("resume", { if case let .object(a)? = $0["autoplay"] { return a["paused_by"] == .array([]) }; return false }),
            ("status", { $0["count"] == .int(3) && $0["version"] != nil && $0["frames"] != nil && $0["uptime_ms"] != nil }),
            ("reload", { $0["restart_required"] == .array([]) }),
            ("list", { $0["count"] == .int(3) }),
            ("set transition 0.2", { $0["key"] == .string("autoplay.transition") }),
            ("screenshot \(shot)", { $0["path"] == .string(shot) }),
            ("version", { $0["version"] != nil }),
            ("display off", { if case let .object(d)? = $0["display"] { return d["power"] == .string("off") }; return false }),
            ("display on", { if case let .object(d)? = $0["display"] { return d["power"] == .string("on") }; return false }),
            ("display auto", { if case let .object(d)? = $0["display"] { return d["power_mode"] == .string("auto") }; return false }),
            ("overlay text Sunny", { if case let .object(o)? = $0["overlay"] { return o["text"] == .string("Sunny") }; return false }),
            ("overlay clear", { if case let .object(o)? = $0["overlay"] { return o["text"] == .null }; return false }),
            ("help", { if case let .array(c)? = $0["commands"] { return c.count == 23 }; return false }),
            ("subscribe", { $0["index"] != nil }),
        ]
        for (line, valid) in requests {
            let reply = try d.request(line)
            #expect(reply["ok"] == .bool(true), "\(line): \(reply)")
            #expect(valid(reply), "\(line): \(reply)")
        }
        #expect(try imageSize(shot) == "320x200")
        // A daemon without a backlight (none is driven outside `run --display drm`) answers brightness with an error.
        let reply = try d.request("brightness 50")
        #expect(reply["ok"] == .bool(false))
        #expect(reply["error"]?.stringValue?.contains("no backlight") == true, "\(reply)")
    }

    @Test func malformedAndOversizedLinesGetAnErrorAndTheConnectionStaysUsable() throws {
        let d = try ControlledDaemon("[images]\npath = $IMAGES\n", images: Self.images)
        defer { _ = d.stop() }
        for bad in ["", "nxt", "goto", "goto -1", "goto 1 fast", "set interval", "screenshot", String(repeating: "x", count: 5000)] {
            let reply = try d.request(bad)
            #expect(reply["ok"] == .bool(false), "'\(bad.prefix(20))': \(reply)")
            #expect(reply["error"]?.stringValue?.isEmpty == false)
        }
        #expect(try d.request("status")["ok"] == .bool(true))
        #expect(d.daemon.process.isRunning)
    }

    @Test func aSubscriberThatNeverReadsIsDroppedAndTheCarouselGoesOn() throws {
        // Fast autoplay: a didScroll event every frame.
        let d = try ControlledDaemon("[images]\npath = $IMAGES\n[autoplay]\ninterval = 0.1\ntransition = 0.3\n", images: Self.images)
        defer { _ = d.stop() }
        let stuck = try ControlClient(path: d.socket)
        try stuck.send(line: "subscribe")  // and never read again
        d.daemon.waitFor("the stuck subscriber dropped", limit: 120) {
            $0.contains("<4>control: client dropped") && $0.contains("not reading its events")
        }
        // The display kept going all along, and the other client is served.
        guard case let .int(before)? = try d.status()["frames"] else { Issue.record("no frames"); return }
        d.daemon.waitFor("more frames") { _ in
            if case let .int(now)? = try? d.status()["frames"] { return now > before + 10 }
            return false
        }
        withExtendedLifetime(stuck) {}
    }

    @Test func fiftyClientsAtOnceEachGetTheirReply() throws {
        let d = try ControlledDaemon("[images]\npath = $IMAGES\n[autoplay]\ninterval = 0.2\ntransition = 0.2\n[control]\nmax_clients = 60\n",
                                     images: Self.images)
        defer { _ = d.stop() }
        let clients = try (0..<50).map { _ in try ControlClient(path: d.socket) }
        // Everyone asks first, then everyone reads: the daemon holds 50 requests at once.
        for (i, c) in clients.enumerated() { try c.send(line: i % 2 == 0 ? "status" : "list") }
        for (i, c) in clients.enumerated() {
            let line = try #require(try c.readLine())
            guard case let .object(fields)? = JSONValue.parse(line) else { Issue.record("not JSON: \(line)"); continue }
            #expect(fields["ok"] == .bool(true))
            #expect(fields[i % 2 == 0 ? "index" : "images"] != nil, "client \(i): \(line)")
        }
        // A 61st connection beyond max_clients is told so.
        let more = try (0..<11).map { _ in try ControlClient(path: d.socket) }
        let refused = try #require(try more.last!.readLine())
        #expect(refused.contains("too many clients (max 60)"))
    }
}
