// carouselctl as a user runs it: the real binary, its arguments, its output
// and its exit status, against the real daemon on the offscreen display.

import CarouselControl
import Foundation
import CarouselPlatform
import Testing

/// The `carouselctl` executable built next to this test bundle, or `$CAROUSELCTL_BIN`.
let controlBinary: String? = builtExecutable("carouselctl", variable: "CAROUSELCTL_BIN")

/// A fresh socket path, short enough for sun_path whatever $TMPDIR is.
func shortSocketPath() -> String { "/tmp/ctl-\(UUID().uuidString.prefix(8)).sock" }

/// What one carouselctl run did.
struct ControlRun: CustomStringConvertible {
    let status: Int32
    let stdout: String
    let stderr: String

    var description: String { "exit \(status)\nstdout:\n\(stdout)\nstderr:\n\(stderr)" }
    var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    /// stdout as one JSON object (for --json runs).
    var json: [String: JSONValue]? {
        guard case let .object(fields)? = JSONValue.parse(stdout.trimmingCharacters(in: .newlines)) else { return nil }
        return fields
    }
    /// The value of a `key: value` line of the readable output.
    func field(_ key: String) -> String? {
        for line in lines where line.hasPrefix(key + ":") {
            return line.dropFirst(key.count + 1).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }
}

/// carouselctl started in the background, its output collected in files (`watch`).
final class ControlProcess {
    let process = Process()
    let folder: URL

    init(_ arguments: [String], directory: URL? = nil) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("carouselctl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: folder.appendingPathComponent("out").path, contents: nil)
        _ = FileManager.default.createFile(atPath: folder.appendingPathComponent("err").path, contents: nil)
        process.executableURL = URL(fileURLWithPath: controlBinary!)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: folder.appendingPathComponent("out"))
        process.standardError = try FileHandle(forWritingTo: folder.appendingPathComponent("err"))
        try process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: folder)
    }

    var stdout: String { (try? String(contentsOf: folder.appendingPathComponent("out"), encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOf: folder.appendingPathComponent("err"), encoding: .utf8)) ?? "" }

    /// Waits (polling, generous limit: the machine may be busy) for the process to end by itself.
    func waitForExit(limit: TimeInterval = 60) -> Int32? {
        let end = Date().addingTimeInterval(limit)
        while process.isRunning, Date() < end { usleep(20_000) }
        guard !process.isRunning else { return nil }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Waits until stdout satisfies `condition`; false after the limit.
    func waitForOutput(limit: TimeInterval, _ condition: (String) -> Bool) -> Bool {
        let end = Date().addingTimeInterval(limit)
        while Date() < end {
            if condition(stdout) { return true }
            if !process.isRunning { return condition(stdout) }
            usleep(50_000)
        }
        return condition(stdout)
    }
}

/// Runs carouselctl to its end (killed after a minute, which fails the test).
func carouselctl(_ arguments: [String], directory: URL? = nil) throws -> ControlRun {
    let run = try ControlProcess(arguments, directory: directory)
    guard let status = run.waitForExit() else {
        Issue.record("carouselctl \(arguments.joined(separator: " ")) did not finish; stderr so far:\n\(run.stderr)")
        return ControlRun(status: -1, stdout: run.stdout, stderr: run.stderr)
    }
    return ControlRun(status: status, stdout: run.stdout, stderr: run.stderr)
}

/// A daemon with three pictures, autoplay off, and a control socket of its own;
/// its working directory is its private folder (so a relative path resolved by
/// the daemon rather than by carouselctl would land there, not in the repository).
func startControlledDaemon(extra: String = "") throws -> (RunningDaemon, String) {
    let socket = shortSocketPath()
    let d = try RunningDaemon(config: "[images]\npath = $IMAGES\n[autoplay]\nenabled = false\n[control]\nsocket = \(socket)\n" + extra)
    try d.addImage("1.jpg", from: "01-mountains.jpg")
    try d.addImage("2.jpg", from: "02-sunset.jpg")
    try d.addImage("3.png", from: "04-panels.png")
    d.process.currentDirectoryURL = d.folder
    try d.start()
    d.waitFor("the control socket") { $0.contains("<6>control socket: \(socket)") }
    return (d, socket)
}

@Suite("carouselctl", .serialized,
       .enabled(if: daemonBinary != nil && controlBinary != nil, "carouseld or carouselctl not found; set CAROUSELD_BIN and CAROUSELCTL_BIN"))
struct CarouselctlTests {
    /// Polls `carouselctl status --json` until `condition` holds (generous limit).
    @discardableResult
    func waitForStatus(_ socket: String, _ what: String, limit: TimeInterval = 30,
                       _ condition: ([String: JSONValue]) -> Bool) throws -> [String: JSONValue]? {
        let end = Date().addingTimeInterval(limit)
        var last: ControlRun?
        while Date() < end {
            let run = try carouselctl(["status", "--json", "--socket", socket])
            if let status = run.json, condition(status) { return status }
            last = run
            usleep(50_000)
        }
        Issue.record("timed out waiting for \(what); last status: \(last.map(String.init(describing:)) ?? "none")")
        return nil
    }

    // MARK: Subcommands, human output

    @Test func everySubcommandReachesTheDaemonAndPrintsReadableText() throws {
        let (d, socket) = try startControlledDaemon()
        defer { _ = d.stop() }
        let s = ["--socket", socket]

        let status = try carouselctl(["status"] + s)
        #expect(status.status == 0, "\(status)")
        #expect(status.field("index") == "0", "\(status)")
        #expect(status.field("count") == "3")
        #expect(status.field("state") == "idle")
        // Nested objects are spelled out as dotted keys, not as JSON.
        #expect(status.field("display.backend") == "offscreen 320x200", "\(status)")
        #expect(status.field("autoplay.running") == "no", "\(status)")
        #expect(status.field("autoplay.enabled") == "no", "[autoplay] enabled = false: \(status)")
        #expect(!status.stdout.contains("{"), "readable output contains JSON: \(status)")
        #expect(status.stderr.isEmpty)

        let list = try carouselctl(["list"] + s)
        #expect(list.status == 0, "\(list)")
        #expect(list.field("count") == "3")
        let images = d.folder.appendingPathComponent("images").path
        #expect(list.lines.contains("  0  \(images)/1.jpg"), "\(list)")
        #expect(list.lines.contains("  1  \(images)/2.jpg"), "\(list)")
        #expect(list.lines.contains("  2  \(images)/3.png"), "\(list)")

        let version = try carouselctl(["version"] + s)
        #expect(version.status == 0, "\(version)")
        #expect(version.field("version").map { !$0.isEmpty } == true, "\(version)")

        // next animates to the next item; its reply is the status.
        let next = try carouselctl(["next"] + s)
        #expect(next.status == 0, "\(next)")
        #expect(next.field("count") == "3", "\(next)")
        try waitForStatus(socket, "index 1 at rest after next") { $0["index"] == .int(1) && $0["state"] == .string("idle") }

        let prev = try carouselctl(["prev"] + s)
        #expect(prev.status == 0, "\(prev)")
        try waitForStatus(socket, "index 0 at rest after prev") { $0["index"] == .int(0) && $0["state"] == .string("idle") }

        // goto N animates with the default transition; goto N --ms 0 and goto N 0 jump at once.
        let gotoAnimated = try carouselctl(["goto", "2"] + s)
        #expect(gotoAnimated.status == 0, "\(gotoAnimated)")
        try waitForStatus(socket, "index 2 after goto 2") { $0["index"] == .int(2) && $0["state"] == .string("idle") }
        let gotoOption = try carouselctl(["goto", "0", "--ms", "0"] + s)
        #expect(gotoOption.status == 0, "\(gotoOption)")
        #expect(gotoOption.field("index") == "0", "a jump is done when the reply comes: \(gotoOption)")
        let gotoArgument = try carouselctl(["goto", "1", "0"] + s)
        #expect(gotoArgument.status == 0, "\(gotoArgument)")
        #expect(gotoArgument.field("index") == "1", "\(gotoArgument)")

        let pause = try carouselctl(["pause"] + s)
        #expect(pause.status == 0, "\(pause)")
        #expect(pause.field("autoplay.paused_by") == "command", "\(pause)")
        #expect(pause.field("autoplay.enabled") == "no", "\(pause)")
        let resume = try carouselctl(["resume"] + s)
        #expect(resume.status == 0, "\(resume)")
        #expect(resume.field("autoplay.paused_by") == "(none)", "\(resume)")
        // `resume` turns on autoplay that `[autoplay] enabled = false` keeps off.
        #expect(resume.field("autoplay.enabled") == "yes", "\(resume)")
        #expect(resume.field("autoplay.running") == "yes", "\(resume)")
    }

    @Test func zoomAndReset() throws {
        let (d, socket) = try startControlledDaemon()
        defer { _ = d.stop() }
        let s = ["--socket", socket]
        let zoom = try carouselctl(["zoom", "2.5"] + s)
        #expect(zoom.status == 0, "\(zoom)")
        #expect(zoom.field("zoom_target") == "2.5", "\(zoom)")
        try waitForStatus(socket, "zoomed to 2.5") { $0["zoom"] == .double(2.5) }
        let reset = try carouselctl(["zoom", "reset"] + s)
        #expect(reset.status == 0, "\(reset)")
        #expect(reset.field("zoom_target") == "1", "\(reset)")
        try waitForStatus(socket, "back at 1") { $0["zoom"] == .int(1) || $0["zoom"] == .double(1) }
        for bad in [["zoom"], ["zoom", "0.5"], ["zoom", "17"], ["zoom", "big"]] {
            let run = try carouselctl(bad + s)
            #expect(run.status == 2, "\(bad): \(run)")
            #expect(run.stdout.isEmpty)
        }
    }

    // MARK: --json

    @Test func jsonPrintsTheDaemonsReplyLine() throws {
        let (d, socket) = try startControlledDaemon()
        defer { _ = d.stop() }
        for arguments in [["status"], ["list"], ["version"], ["next"], ["prev"], ["goto", "2", "0"], ["pause"], ["resume"]] {
            let run = try carouselctl(arguments + ["--json", "--socket", socket])
            #expect(run.status == 0, "\(arguments): \(run)")
            #expect(run.lines.count == 1, "one reply line for \(arguments): \(run)")
            guard let reply = run.json else { Issue.record("\(arguments): not JSON: \(run)"); continue }
            #expect(reply["ok"] == .bool(true), "\(arguments): \(run)")
            #expect(run.stderr.isEmpty, "\(arguments): \(run)")
        }
        let status = try carouselctl(["status", "--json", "--socket", socket]).json
        #expect(status?["count"] == .int(3))
        #expect(status?["display"]?["backend"] == .string("offscreen 320x200"))
        let list = try carouselctl(["list", "--json", "--socket", socket]).json
        if case let .array(images)? = list?["images"] { #expect(images.count == 3) } else { Issue.record("no images in \(String(describing: list))") }

        // An error reply is printed as it came, and the status still says so.
        let error = try carouselctl(["goto", "99", "--json", "--socket", socket])
        #expect(error.status == 1, "\(error)")
        #expect(error.json?["ok"] == .bool(false), "\(error)")
        #expect(error.json?["error"]?.stringValue?.contains("99") == true, "\(error)")
    }

    // MARK: Exit status

    @Test func anErrorReplyExitsWithOne() throws {
        let (d, socket) = try startControlledDaemon()
        defer { _ = d.stop() }
        let run = try carouselctl(["goto", "99", "--socket", socket])
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout.isEmpty, "\(run)")
        #expect(run.stderr.hasPrefix("carouselctl: "), "\(run)")
        #expect(run.stderr.contains("99"), "the daemon's message names the index: \(run)")
        // The screenshot of a folder that does not exist: the daemon's error, status 1.
        let shot = try carouselctl(["screenshot", "/nonexistent-\(UUID().uuidString)/x.png", "--socket", socket])
        #expect(shot.status == 1, "\(shot)")
        #expect(!shot.stderr.isEmpty, "\(shot)")
        // With --json, the failure is a reply line too, naming the file.
        let missing = "/nonexistent-\(UUID().uuidString)/x.png"
        let json = try carouselctl(["screenshot", missing, "--json", "--socket", socket])
        #expect(json.status == 1, "\(json)")
        #expect(json.json?["ok"] == .bool(false), "\(json)")
        #expect(json.json?["error"]?.stringValue?.contains(missing) == true, "\(json)")
    }

    @Test func aBadCommandLineExitsWithTwoAndSendsNothing() throws {
        let (d, socket) = try startControlledDaemon()
        defer { _ = d.stop() }
        let s = ["--socket", socket]
        let bad: [[String]] = [
            [],                                     // no subcommand
            ["frobnicate"],                         // unknown subcommand
            ["goto"],                               // no index
            ["goto", "two"],
            ["goto", "1", "--ms"],
            ["goto", "1", "--ms", "70000"],         // over the daemon's limit: its wording, checked here
            ["goto", "1", "0", "--ms", "0"],        // the duration twice
            ["goto", "1", "0", "5"],
            ["status", "extra"],
            ["screenshot"],
            ["screenshot", "/tmp/shot.jpg"],        // not PNG
            ["set"],
            ["set", "autoplay.interval"],           // a key without a value
            ["set", "autoplay.interval", "1\nnext"], // a line break would smuggle in a second request
            ["screenshot", "/tmp/a\nnext\n.png"],
            ["set", "images.path", String(repeating: "x", count: 5000)],  // over the 4 KiB request line
        ]
        for arguments in bad {
            let run = try carouselctl(arguments + s)
            #expect(run.status == 2, "\(arguments): \(run)")
            #expect(!run.stderr.isEmpty, "a usage error says what is wrong: \(arguments): \(run)")
            #expect(run.stdout.isEmpty, "\(arguments): \(run)")
        }
        // A socket path that cannot be one is a typo, not an absent daemon.
        let long = try carouselctl(["next", "--socket", "/tmp/" + String(repeating: "x", count: 200)])
        #expect(long.status == 2, "\(long)")
        // None of them reached the daemon: the smuggled `next` in particular did not run.
        let status = try carouselctl(["status", "--json"] + s)
        #expect(status.json?["index"] == .int(0), "\(status)")
        #expect(status.json?["state"] == .string("idle"), "\(status)")
        // The usage message names the problem.
        #expect(try carouselctl(["goto"] + s).stderr.contains("<index>"))
        #expect(try carouselctl(["set", "a", "1\nnext"] + s).stderr.contains("line break"))
    }

    @Test func anUnreachableDaemonExitsWithThree() throws {
        // No socket file at all.
        let missing = shortSocketPath()
        for arguments in [["status"], ["next"], ["watch"], ["screenshot", "/tmp/x.png"]] {
            let run = try carouselctl(arguments + ["--socket", missing])
            #expect(run.status == 3, "\(arguments): \(run)")
            #expect(run.stderr.contains(missing), "the message names the socket: \(run)")
            #expect(run.stderr.contains("is carouseld running?"), "\(run)")
        }

        // A daemon that was killed: its socket file is left behind, nobody listens.
        let (killed, socket) = try startControlledDaemon()
        #expect(try carouselctl(["status", "--socket", socket]).status == 0)
        kill(killed.process.processIdentifier, SIGKILL)
        killed.process.waitUntilExit()
        #expect(FileManager.default.fileExists(atPath: socket), "SIGKILL leaves the socket file")
        let afterKill = try carouselctl(["status", "--socket", socket])
        #expect(afterKill.status == 3, "\(afterKill)")
        #expect(afterKill.stderr.contains("cannot connect to \(socket)"), "\(afterKill)")
        _ = killed.stop()
        try? FileManager.default.removeItem(atPath: socket)

        // A daemon that stopped cleanly: the socket file is gone.
        let (stopped, socket2) = try startControlledDaemon()
        #expect(stopped.stop() == 0)
        let afterStop = try carouselctl(["status", "--json", "--socket", socket2])
        #expect(afterStop.status == 3, "\(afterStop)")
        #expect(afterStop.stdout.isEmpty, "no reply, so nothing on stdout even with --json: \(afterStop)")
    }

    // MARK: screenshot

    /// Width and height from a PNG's IHDR chunk, if the bytes are a PNG.
    func pngSize(_ path: String) -> (width: Int, height: Int)? {
        guard let data = FileManager.default.contents(atPath: path), data.count > 24 else { return nil }
        let bytes = [UInt8](data)
        guard bytes[0..<8].elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
              bytes[12..<16].elementsEqual(Array("IHDR".utf8)) else { return nil }
        func be32(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (be32(16), be32(20))
    }

    @Test func screenshotWritesAPNGOfTheScreen() throws {
        let (d, socket) = try startControlledDaemon()
        defer { _ = d.stop() }
        d.waitFor("the first picture") { $0.contains("first picture on screen") }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ctl-shots-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        let absolute = folder.appendingPathComponent("absolute.png").path
        let run = try carouselctl(["screenshot", absolute, "--socket", socket])
        #expect(run.status == 0, "\(run)")
        #expect(run.field("path") == absolute, "\(run)")
        let size = pngSize(absolute)
        #expect(size?.width == 320 && size?.height == 200, "\(String(describing: size))")

        // A relative path is taken from carouselctl's directory, not the daemon's.
        let relative = try carouselctl(["screenshot", "relative.png", "--json", "--socket", socket], directory: folder)
        #expect(relative.status == 0, "\(relative)")
        let expected = folder.appendingPathComponent("relative.png").path
        #expect(relative.json?["path"] == .string(expected), "the daemon was sent an absolute path: \(relative)")
        #expect(pngSize(expected)?.width == 320)
        #expect(!FileManager.default.fileExists(atPath: d.folder.appendingPathComponent("relative.png").path),
                "written in the daemon's working directory")

        try FileManager.default.createDirectory(at: folder.appendingPathComponent("sub"), withIntermediateDirectories: true)
        let nested = try carouselctl(["screenshot", "sub/../sub/nested.png", "--socket", socket], directory: folder)
        #expect(nested.status == 0, "\(nested)")
        #expect(pngSize(folder.appendingPathComponent("sub/nested.png").path)?.height == 200)
    }

    @Test func screenshotIsWrittenWithTheCallersRightsAndAppearsWhole() throws {
        let (d, socket) = try startControlledDaemon()
        defer { _ = d.stop() }
        d.waitFor("the first picture") { $0.contains("first picture on screen") }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ctl-own-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func leftovers() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(".") }
        }

        // The mode any new file of the caller's gets (0666 less the umask), not mkstemp's 0600.
        let shot = folder.appendingPathComponent("mine.png").path
        #expect(try carouselctl(["screenshot", shot, "--socket", socket]).status == 0)
        var info = stat()
        #expect(stat(shot, &info) == 0)
        let mask = umask(0)
        umask(mask)
        #expect(info.st_mode & 0o777 == 0o666 & ~mask, "mode \(String(info.st_mode & 0o777, radix: 8))")
        #expect(info.st_uid == getuid())

        // A symbolic link planted at the destination is replaced, its target untouched.
        let target = folder.appendingPathComponent("precious.txt").path
        try "keep me".write(toFile: target, atomically: false, encoding: .utf8)
        let link = folder.appendingPathComponent("link.png").path
        #expect(symlink(target, link) == 0)
        #expect(try carouselctl(["screenshot", link, "--socket", socket]).status == 0)
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep me")
        #expect(pngSize(link)?.width == 320, "the link was not replaced by the PNG")
        var linkInfo = stat()
        #expect(lstat(link, &linkInfo) == 0 && linkInfo.st_mode & S_IFMT == S_IFREG)

        // When the daemon cannot be reached, nothing is left behind.
        let missing = try carouselctl(["screenshot", folder.appendingPathComponent("never.png").path,
                                       "--socket", shortSocketPath()])
        #expect(missing.status == 3, "\(missing)")
        let left = try leftovers()
        #expect(left.isEmpty, "\(left)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("never.png").path))
    }

    // MARK: watch

    @Test func watchPrintsEventsAsTheyHappen() throws {
        let (d, socket) = try startControlledDaemon()
        defer { _ = d.stop() }
        let readable = try ControlProcess(["watch", "--socket", socket])
        let raw = try ControlProcess(["watch", "--json", "--socket", socket])

        // A watcher subscribes some time after it starts, and an event before
        // that is not for it: send `next` until both have seen one go by.
        func sawAPage(_ output: String) -> Bool {
            output.contains("currentItemIndexDidChange") && output.contains("didEndScrollingAnimation")
        }
        var seen = false
        for _ in 0..<10 where !seen {
            let next = try carouselctl(["next", "--socket", socket])
            #expect(next.status == 0, "\(next)")
            seen = readable.waitForOutput(limit: 6, sawAPage) && raw.waitForOutput(limit: 6, sawAPage)
        }
        #expect(seen, "readable:\n\(readable.stdout)\n\(readable.stderr)\njson:\n\(raw.stdout)\n\(raw.stderr)")

        // Readable: the event's name first, then key=value.
        let lines = readable.stdout.split(separator: "\n").map(String.init)
        let change = lines.first { $0.hasPrefix("currentItemIndexDidChange ") }
        #expect(change?.contains(" index=") == true && change?.contains(" t=") == true, "\(lines)")
        #expect(!readable.stdout.contains("{"), "\(readable.stdout)")
        // --json: each line is the daemon's event object.
        for line in raw.stdout.split(separator: "\n") {
            guard case let .object(event)? = JSONValue.parse(String(line)) else {
                Issue.record("not a JSON event line: \(line)")
                continue
            }
            #expect(event["event"]?.stringValue != nil, "\(line)")
            #expect(event["t"]?.intValue != nil, "\(line)")
        }

        // Interrupted, watch ends; the daemon goes on serving others.
        kill(readable.process.processIdentifier, SIGINT)
        #expect(readable.waitForExit() != nil, "watch did not end on SIGINT")
        #expect(try carouselctl(["status", "--socket", socket]).status == 0)

        // The daemon stopping ends the other watch with status 3 and a line saying so.
        #expect(d.stop() == 0)
        let status = raw.waitForExit()
        #expect(status == 3, "\(raw.stderr)")
        #expect(raw.stderr.contains("closed the connection"), "\(raw.stderr)")
    }

    // MARK: set and reload: the plumbing only (their meaning has its own tests)

    @Test func setAndReloadPassTheDaemonsVerdictThrough() throws {
        let (d, socket) = try startControlledDaemon()
        defer { _ = d.stop() }
        // Whatever the daemon answers, the reply is one JSON line and the
        // exit status agrees with its "ok".
        for arguments in [["set", "autoplay.transition", "0.25"], ["set", "no-such.key", "two words"], ["reload"]] {
            let run = try carouselctl(arguments + ["--json", "--socket", socket])
            guard let ok = run.json?["ok"]?.boolValue else {
                Issue.record("\(arguments): not a reply: \(run)")
                continue
            }
            #expect(run.status == (ok ? 0 : 1), "\(arguments): \(run)")
            let human = try carouselctl(arguments + ["--socket", socket])
            #expect(human.status == run.status, "\(arguments): \(human)")
            if human.status == 1 { #expect(human.stderr.hasPrefix("carouselctl: "), "\(human)") }
        }
        // An unknown key is the daemon's to refuse: never a success.
        #expect(try carouselctl(["set", "no-such.key", "1", "--socket", socket]).status == 1)
        // And the daemon still answers afterwards.
        #expect(try carouselctl(["status", "--socket", socket]).status == 0)
    }
}

@Suite("carouselctl display", .serialized,
       .enabled(if: daemonBinary != nil && controlBinary != nil, "carouseld or carouselctl not found; set CAROUSELD_BIN and CAROUSELCTL_BIN"))
struct CarouselctlDisplayTests {
    @Test func displayOffAndOnAndEvents() throws {
        let (d, socket) = try startControlledDaemon()
        defer { _ = d.stop() }
        let s = ["--socket", socket]
        // A subscriber sees the switches.
        let watcher = try ControlClient(path: socket)
        _ = try watcher.request(.subscribe)

        let off = try carouselctl(["display", "off"] + s)
        #expect(off.status == 0, "\(off)")
        #expect(off.field("display.power") == "off", "\(off)")
        #expect(off.field("autoplay.paused_by") == "display", "\(off)")
        var line = ""
        while !line.contains("displayOff"), let next = try watcher.readLine() { line = next }
        #expect(line.contains("\"by\":\"command\""), "\(line)")

        let on = try carouselctl(["display", "on"] + s)
        #expect(on.status == 0, "\(on)")
        #expect(on.field("display.power") == "on", "\(on)")
        while !line.contains("displayOn"), let next = try watcher.readLine() { line = next }
        #expect(line.contains("displayOn"))

        let bad = try carouselctl(["display", "dim"] + s)
        #expect(bad.status == 2, "\(bad)")
        #expect(bad.stderr.contains("on, off or auto"), "\(bad)")
    }
}

/// A capability's request through carouselctl: routed by its words (no
/// subcommand is written for it), listed in --help, its mistakes usage errors.
@Suite("carouselctl: the capabilities' requests", .serialized,
       .enabled(if: daemonBinary != nil && controlBinary != nil, "carouseld or carouselctl not found; set CAROUSELD_BIN and CAROUSELCTL_BIN"))
struct CarouselctlDeclaredTests {
    @Test func overlayTextAndClearReachTheDaemon() throws {
        let (d, socket) = try startControlledDaemon()
        defer { _ = d.stop() }
        let shown = try carouselctl(["overlay", "text", "Sunny", "21 °C", "--json", "--socket", socket])
        #expect(shown.status == 0, "\(shown)")
        #expect(shown.json?["overlay"]?["text"]?.stringValue == "Sunny 21 °C", "\(shown.stdout)")
        #expect(shown.json?["overlay"]?["source"]?.stringValue == "pushed")
        let cleared = try carouselctl(["overlay", "clear", "--json", "--socket", socket])
        #expect(cleared.status == 0, "\(cleared)")
        #expect(cleared.json?["overlay"]?["text"] == .null)
    }

    @Test func itsMistakesAreUsageErrorsInItsWordsAndItsHelpIsListed() throws {
        let wrong = try carouselctl(["overlay", "bogus", "--socket", "/nonexistent"])
        #expect(wrong.status == 2, "\(wrong)")
        #expect(wrong.stderr.contains("overlay needs text or clear (usage: overlay text <text>|clear), got 'bogus'"))
        let help = try carouselctl(["--help"])
        #expect(help.status == 0 && help.stdout.contains("overlay text <text>|clear"), "\(help)")
        let alone = try carouselctl(["help", "overlay"])
        #expect(alone.status == 0 && alone.stdout.hasPrefix("USAGE: carouselctl overlay text <text>|clear"), "\(alone)")
        #expect(alone.stdout.split(separator: "\n").allSatisfy { $0.count <= 80 }, "wrapped for a terminal")
    }
}
