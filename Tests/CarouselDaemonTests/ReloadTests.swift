// Reload, SIGHUP and `set` on the real daemon (offscreen display), through
// the real control socket.

import CarouselControl
import Foundation
import CarouselPlatform
import Testing

/// A daemon with its control socket and a client, and its configuration file at hand.
final class ControlledDaemon {
    let daemon: RunningDaemon
    let socket: String
    private(set) var client: ControlClient!

    init(_ ini: String, images: [(String, String)]) throws {
        socket = FileManager.default.temporaryDirectory.appendingPathComponent("rl-\(UUID().uuidString.prefix(8)).sock").path
        daemon = try RunningDaemon(config: ini + "\n[control]\nsocket = \(socket)\n")
        for (name, source) in images { try daemon.addImage(name, from: source) }
        try daemon.start()
        daemon.waitFor("the control socket") { $0.contains("<6>control socket: \(socket)") }
        client = try ControlClient(path: socket)
    }

    var iniURL: URL { daemon.folder.appendingPathComponent("c.ini") }

    /// Replaces the configuration file (the socket line is kept, as the running one).
    func rewrite(_ ini: String) throws {
        let text = ini.replacingOccurrences(of: "$IMAGES", with: daemon.folder.appendingPathComponent("images").path)
            + "\n[control]\nsocket = \(socket)\n"
        try Data(text.utf8).write(to: iniURL)
    }

    func request(_ line: String) throws -> [String: JSONValue] {
        try client.send(line: line)
        let reply = try #require(try client.readLine())
        guard case let .object(fields)? = JSONValue.parse(reply) else {
            Issue.record("not a JSON object: \(reply)")
            return [:]
        }
        return fields
    }

    func status() throws -> [String: JSONValue] { try request("status") }

    /// Milliseconds from now to the next automatic advance, per `status`.
    func msToNextAdvance() throws -> Int? {
        let s = try status()
        guard case let .object(autoplay)? = s["autoplay"], case let .int(next)? = autoplay["next_ms"],
              case let .int(uptime)? = s["uptime_ms"] else { return nil }
        return next - uptime
    }

    func stop() -> Int32 { daemon.stop() }
}

@Suite("reload and set (offscreen)", .enabled(if: daemonBinary != nil, "carouseld binary not found; set CAROUSELD_BIN"))
struct ReloadTests {
    static let images = [("1.jpg", "01-mountains.jpg"), ("2.jpg", "02-sunset.jpg"), ("3.png", "04-panels.png")]

    @Test func aGoodFileIsAppliedAndTheCurrentImageStays() throws {
        let d = try ControlledDaemon("[images]\npath = $IMAGES\n[autoplay]\ninterval = 600\n", images: Self.images)
        defer { _ = d.stop() }
        #expect(try d.request("goto 1 0")["ok"] == .bool(true))
        let before = try d.status()["image"]
        // `goto` was an interaction: the next advance is resume_delay (2 s) away.
        #expect(try #require(try d.msToNextAdvance()) > 1000)

        try d.rewrite("[images]\npath = $IMAGES\nfit = cover\n[autoplay]\ninterval = 0.8\n[carousel]\nspacing = 10\n")
        let reply = try d.request("reload")
        #expect(reply["ok"] == .bool(true), "\(reply)")
        #expect(reply["restart_required"] == .array([]))
        #expect(d.daemon.log.contains("<6>configuration reloaded from \(d.iniURL.path)"))
        // The new interval runs from the reload; the picture on screen is the same one.
        let next = try #require(try d.msToNextAdvance())
        #expect(next <= 800)
        #expect(try d.status()["image"] == before)
        // And autoplay really advances with it.
        d.daemon.waitFor("an automatic advance") { _ in (try? d.status()["index"]) == .int(2) }
    }

    @Test func aBadFileIsRefusedAndTheOldConfigurationKeepsRunning() throws {
        let d = try ControlledDaemon("[images]\npath = $IMAGES\n[autoplay]\nenabled = false\n", images: Self.images)
        defer { _ = d.stop() }
        #expect(try d.request("goto 2 0")["ok"] == .bool(true))
        try d.rewrite("[images]\npath = $IMAGES\n[autoplay]\nenabled = false\ninterval = soon\n")
        let reply = try d.request("reload")
        #expect(reply["ok"] == .bool(false))
        guard case let .string(error)? = reply["error"] else { Issue.record("no error in \(reply)"); return }
        #expect(error.contains("\(d.iniURL.path):5: interval = 'soon'"), "\(error)")
        #expect(d.daemon.log.contains("<3>reload refused, keeping the running configuration: \(d.iniURL.path):5: "))
        // Still running, same picture, same settings, still answering.
        let status = try d.status()
        #expect(status["index"] == .int(2))
        #expect(status["count"] == .int(3))
        #expect(d.daemon.process.isRunning)
        #expect(try d.request("next")["ok"] == .bool(true))
    }

    @Test func sighupReloadsTooAndABadFileSurvivesIt() throws {
        let d = try ControlledDaemon("[images]\npath = $IMAGES\n[autoplay]\nenabled = false\n", images: Self.images)
        defer { _ = d.stop() }
        try d.rewrite("[images]\npath = $IMAGES\n[autoplay]\nenabled = true\ninterval = 300\n")
        kill(d.daemon.process.processIdentifier, SIGHUP)
        d.daemon.waitFor("the reload") { $0.contains("<6>configuration reloaded from ") }
        #expect(try #require(try d.msToNextAdvance()) > 200_000)

        try d.rewrite("[imagez]\n")
        kill(d.daemon.process.processIdentifier, SIGHUP)
        d.daemon.waitFor("the refusal") { $0.contains("<3>reload refused, keeping the running configuration: ") }
        #expect(d.daemon.log.contains("unknown section [imagez]"))
        guard case let .object(autoplay)? = try d.status()["autoplay"] else { Issue.record("no autoplay"); return }
        #expect(autoplay["running"] == .bool(true))
        #expect(d.daemon.process.isRunning)
    }

    @Test func keysThatNeedARestartAreNamedAndTheRestIsApplied() throws {
        let d = try ControlledDaemon("[images]\npath = $IMAGES\n[autoplay]\nenabled = false\n", images: Self.images)
        defer { _ = d.stop() }
        let text = "[images]\npath = $IMAGES\n[autoplay]\nenabled = true\n[input]\nseat = seat9\n"
            .replacingOccurrences(of: "$IMAGES", with: d.daemon.folder.appendingPathComponent("images").path)
        // The socket moves in the file: the running one stays where it is until a restart.
        try Data((text + "[control]\nsocket = /tmp/elsewhere-\(UUID().uuidString.prefix(6)).sock\n").utf8).write(to: d.iniURL)
        let reply = try d.request("reload")
        #expect(reply["ok"] == .bool(true), "\(reply)")
        #expect(reply["restart_required"] == .array([.string("input.seat"), .string("control.socket")]))
        #expect(d.daemon.log.contains("input.seat, control.socket take effect at the next restart"))
        guard case let .object(autoplay)? = try d.status()["autoplay"] else { Issue.record("no autoplay"); return }
        #expect(autoplay["running"] == .bool(true))
    }

    @Test func aNewFolderKeepsTheCurrentImageWhereItStillExists() throws {
        let d = try ControlledDaemon("[images]\npath = $IMAGES\n[autoplay]\nenabled = false\n", images: Self.images)
        defer { _ = d.stop() }
        #expect(try d.request("goto 1 0")["ok"] == .bool(true))
        let images = d.daemon.folder.appendingPathComponent("images").path
        // The same folder through an explicit list, in another order, with one picture left out.
        try d.rewrite("[images]\nfiles = \(images)/3.png, \(images)/2.jpg\n[autoplay]\nenabled = false\n")
        #expect(try d.request("reload")["ok"] == .bool(true))
        let status = try d.status()
        #expect(status["count"] == .int(2))
        #expect(status["index"] == .int(1))
        #expect(status["image"] == .string("\(images)/2.jpg"))
        #expect(try d.request("list")["images"] == .array([.string("\(images)/3.png"), .string("\(images)/2.jpg")]))
    }

    @Test func setChangesOneKeyAndRefusesWhatItCannot() throws {
        let d = try ControlledDaemon("[images]\npath = $IMAGES\n[autoplay]\ninterval = 600\n", images: Self.images)
        defer { _ = d.stop() }
        let ok = try d.request("set interval 0.7")
        #expect(ok == ["ok": .bool(true), "key": .string("autoplay.interval"), "value": .string("0.7")])
        #expect(try #require(try d.msToNextAdvance()) <= 700)
        #expect(d.daemon.log.contains("<6>set autoplay.interval = 0.7"))

        #expect(try d.request("set autoplay false")["ok"] == .bool(true))
        guard case let .object(autoplay)? = try d.status()["autoplay"] else { Issue.record("no autoplay"); return }
        #expect(autoplay["running"] == .bool(false))

        func error(_ line: String) throws -> String {
            let reply = try d.request(line)
            #expect(reply["ok"] == .bool(false), "\(line): \(reply)")
            if case let .string(text)? = reply["error"] { return text }
            return ""
        }
        #expect(try error("set interval soon").hasPrefix("autoplay.interval = 'soon': expected a number"))
        #expect(try error("set interval 0").contains("out of range"))
        #expect(try error("set colour red").hasPrefix("unknown key 'colour'"))
        #expect(try error("set display.device /dev/dri/card1").contains("cannot change while carouseld runs"))
        #expect(try error("set control.socket /tmp/x.sock").contains("restart"))
        // A layout key is fine, and the carousel keeps its picture.
        #expect(try d.request("goto 2 0")["ok"] == .bool(true))
        #expect(try d.request("set carousel.vertical true")["ok"] == .bool(true))
        #expect(try d.request("set display.rotation 90")["ok"] == .bool(true))
        let status = try d.status()
        #expect(status["index"] == .int(2))
        guard case let .object(display)? = status["display"] else { Issue.record("no display"); return }
        #expect(display["rotation"] == .int(90))
        // The screenshot follows the layout: 200x320 now.
        let shot = d.daemon.folder.appendingPathComponent("turned.png").path
        #expect(try d.request("screenshot \(shot)")["ok"] == .bool(true))
        #expect(try imageSize(shot) == "200x320")
    }

    /// A reload that changes how pictures are scaled keeps the old frame on
    /// screen until the new pictures are ready: never a frame of empty slots.
    @Test func aReloadShowsNoEmptyFrame() throws {
        let d = try ControlledDaemon("[images]\npath = $IMAGES\n[autoplay]\nenabled = false\n[display]\nbackground = #204060\n",
                                     images: [])
        defer { _ = d.stop() }
        // A large PNG decodes slowly enough (no DCT scaling for PNG) for a
        // screenshot to land while it is being scaled anew.
        let big = d.daemon.folder.appendingPathComponent("images/big.png").path
        try convert(["-size", "4000x3000", "gradient:#ff0000-#ffff00", big])
        d.daemon.waitFor("the picture") { $0.contains("first picture on screen") }
        for (round, fit) in ["cover", "stretch", "contain", "cover"].enumerated() {
            try d.rewrite("[images]\npath = $IMAGES\nfit = \(fit)\n[autoplay]\nenabled = false\n[display]\nbackground = #204060\n")
            #expect(try d.request("reload")["ok"] == .bool(true))
            let shot = d.daemon.folder.appendingPathComponent("shot\(round).png").path
            #expect(try d.request("screenshot \(shot)")["ok"] == .bool(true))
            // The centre always shows the picture (red to yellow), never the background.
            let centre = try pixel(shot, x: 160, y: 100)
            #expect(!centre.contains("32,64,96") && centre.contains("255,"), "round \(round) (\(fit)): \(centre)")
        }
    }

    @Test func aRelativeScreenshotPathIsRefused() throws {
        let d = try ControlledDaemon("[images]\npath = $IMAGES\n", images: Self.images)
        defer { _ = d.stop() }
        let reply = try d.request("screenshot shot.png")
        #expect(reply["ok"] == .bool(false))
        #expect(reply["error"]?.stringValue?.contains("absolute path") == true)
    }
}

/// Runs ImageMagick's `convert` (installed by scripts/setup.sh).
@discardableResult
func convert(_ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/convert")
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let out = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    try #require(process.terminationStatus == 0, "convert \(arguments.joined(separator: " ")) failed")
    return String(decoding: out, as: UTF8.self)
}

func imageSize(_ path: String) throws -> String {
    try convert([path, "-format", "%wx%h", "info:"])
}

/// "srgb(255,128,0)"-like text for one pixel.
func pixel(_ path: String, x: Int, y: Int) throws -> String {
    try convert([path, "-format", "%[pixel:p{\(x),\(y)}]", "info:"])
}

@Suite("keep and forget: the frame's settings file (offscreen)", .enabled(if: daemonBinary != nil, "carouseld binary not found; set CAROUSELD_BIN"))
struct KeepTests {
    @Test func keptValuesOutliveARestartAndForgetGivesTheFilesValueBack() throws {
        let settings = FileManager.default.temporaryDirectory.appendingPathComponent("keep-\(UUID().uuidString.prefix(8)).ini").path
        defer { try? FileManager.default.removeItem(atPath: settings) }
        let ini = "[images]\npath = $IMAGES\n[autoplay]\ninterval = 5\n[control]\nsettings = \(settings)\n"
        var d = try ControlledDaemon("", images: ReloadTests.images)
        try d.rewrite(ini)
        #expect(try d.request("reload")["ok"] == .bool(true))
        let kept = try d.request("keep interval 9")
        #expect(kept["ok"] == .bool(true) && kept["key"] == .string("autoplay.interval") && kept["file"] == .string(settings), "\(kept)")
        let refused = try d.request("keep images.path /etc")
        #expect(refused["ok"] == .bool(false))
        #expect(refused["error"]?.stringValue?.contains("needs administer") == true, "\(refused)")
        let bad = try d.request("keep interval soon")
        #expect(bad["ok"] == .bool(false) && bad["error"]?.stringValue?.hasPrefix("autoplay.interval = 'soon'") == true, "\(bad)")
        let text = try String(contentsOfFile: settings, encoding: .utf8)
        #expect(text.contains("[autoplay]\ninterval = 9\n") && !text.contains("images"), "\(text)")
        #expect(d.stop() == 0)

        // The same file again, a new daemon: the kept value runs.
        d = try ControlledDaemon("", images: [])
        try d.rewrite(ini)
        #expect(try d.request("reload")["ok"] == .bool(true))
        if case let .object(autoplay)? = try d.status()["autoplay"] { #expect(autoplay["interval"] == .int(9)) } else {
            Issue.record("no autoplay in status")
        }
        let forgot = try d.request("forget interval")
        #expect(forgot["ok"] == .bool(true), "\(forgot)")
        if case let .object(autoplay)? = try d.status()["autoplay"] { #expect(autoplay["interval"] == .int(5)) }
        #expect(!(try String(contentsOfFile: settings, encoding: .utf8)).contains("interval"))
        #expect(d.stop() == 0)
    }
}
