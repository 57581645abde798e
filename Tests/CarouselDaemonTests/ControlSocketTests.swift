// The daemon's control socket, end to end: the real binary on the offscreen
// display, a real Unix socket, the same client carouselctl uses.

import CarouselControl
import CarouselImaging
import CPlatform
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

/// `screenshot` with an open file sent over the socket (SCM_RIGHTS): what
/// carouselctl does, so that the daemon writes no path it is given.
@Suite("control socket: screenshot into a passed file", .enabled(if: daemonBinary != nil, "carouseld binary not found; set CAROUSELD_BIN"))
struct PassedFileScreenshotTests {
    func field(_ line: String, _ key: String) -> JSONValue? {
        guard case let .object(fields)? = JSONValue.parse(line) else { return nil }
        return fields[key]
    }

    func openDescriptors(_ pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }

    /// `zoom SCALE` / `zoom reset` (issue 13): the reply's status says where
    /// the zoom is heading, subscribers get didZoom and didEndZooming with
    /// the scale, autoplay waits, the frame on screen is zoomed, and with
    /// [zoom] enabled = false the request is refused.
    /// A JSON number (whole numbers parse as integers).
    func number(_ value: JSONValue?) -> Double? {
        switch value {
        case .int(let i)?: Double(i)
        case .double(let d)?: d
        default: nil
        }
    }

    @Test func zoomRequests() throws {
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("cz-\(UUID().uuidString.prefix(8)).sock").path
        let d = try RunningDaemon(config: "[images]\npath = $IMAGES\n[control]\nsocket = \(socket)\n")
        try d.addImage("1.jpg", from: "01-mountains.jpg")
        try d.addImage("2.jpg", from: "02-sunset.jpg")
        try d.start()
        defer { _ = d.stop() }
        d.waitFor("the first picture") { $0.contains("first picture on screen") }
        let client = try ControlClient(path: socket)
        let watcher = try ControlClient(path: socket)
        #expect(field(try watcher.request(.subscribe), "ok") == .bool(true))
        let plain = FileManager.default.temporaryDirectory.appendingPathComponent("z0-\(UUID().uuidString.prefix(8)).png").path
        #expect(field(try client.request(.screenshot(path: plain)), "ok") == .bool(true))

        let reply = try client.request(.zoom(scale: 2))
        #expect(field(reply, "ok") == .bool(true), "\(reply)")
        #expect(number(field(reply, "zoom_target")) == 2, "\(reply)")
        var ended: JSONValue?
        var zoomed = false
        while ended == nil, let line = try watcher.readLine() {
            if field(line, "event") == .string("didZoom"), field(line, "scale") != nil { zoomed = true }
            if field(line, "event") == .string("didEndZooming") { ended = field(line, "scale") }
        }
        #expect(zoomed)
        #expect(number(ended) == 2)
        let status = try client.request(.status)
        #expect(number(field(status, "zoom")) == 2, "\(status)")
        guard case let .object(autoplay)? = field(status, "autoplay") else { Issue.record("no autoplay in \(status)"); return }
        #expect(autoplay["paused_by"] == .array([.string("zoom")]), "\(status)")
        #expect(autoplay["next_ms"] == .null)
        let shot = FileManager.default.temporaryDirectory.appendingPathComponent("z2-\(UUID().uuidString.prefix(8)).png").path
        #expect(field(try client.request(.screenshot(path: shot)), "ok") == .bool(true))
        #expect(try Data(contentsOf: URL(fileURLWithPath: shot)) != Data(contentsOf: URL(fileURLWithPath: plain)))
        try? FileManager.default.removeItem(atPath: shot)
        try? FileManager.default.removeItem(atPath: plain)

        #expect(number(field(try client.request(.zoom(scale: nil)), "zoom_target")) == 1)
        ended = nil
        while ended == nil, let line = try watcher.readLine() {
            if field(line, "event") == .string("didEndZooming") { ended = field(line, "scale") }
        }
        #expect(number(ended) == 1)
        try client.send(line: "zoom 40")
        #expect(field(try client.readLine() ?? "", "ok") == .bool(false))
        #expect(field(try client.request(.set(key: "zoom.enabled", value: "false")), "ok") == .bool(true))
        let refused = try client.request(.zoom(scale: 2))
        #expect(field(refused, "ok") == .bool(false))
        if case let .string(text)? = field(refused, "error") { #expect(text.contains("[zoom] enabled = false")) }
    }

    @Test func theDaemonWritesIntoTheFileAndKeepsNoDescriptor() throws {
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("pf-\(UUID().uuidString.prefix(8)).sock").path
        let d = try RunningDaemon(config: "[images]\npath = $IMAGES\n[autoplay]\nenabled = false\n[control]\nsocket = \(socket)\n")
        try d.addImage("1.jpg", from: "01-mountains.jpg")
        try d.start()
        defer { _ = d.stop() }
        d.waitFor("the first picture") { $0.contains("first picture on screen") }
        let client = try ControlClient(path: socket)
        let pid = d.process.processIdentifier
        _ = try client.request(.status)
        let before = openDescriptors(pid)

        // A regular file open for writing: a PNG lands in it, the reply says how big.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pf-\(UUID().uuidString.prefix(8)).png").path
        defer { unlink(path) }
        let fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o600)
        #expect(fd >= 0)
        _ = write(fd, "old contents, longer than nothing", 33)
        let reply = try client.request(.screenshot(path: nil), passing: fd)
        close(fd)
        #expect(field(reply, "ok") == .bool(true), "\(reply)")
        let bytes = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
        #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]), "not a PNG from its first byte")
        #expect(field(reply, "bytes") == .int(bytes.count), "\(reply)")

        // `screenshot raw`: the same picture as pixels, no PNG. Made into a
        // PNG by the same writer, it is the daemon's PNG byte for byte.
        let raw = cplatform_memory_file("screenshot-raw-test")
        #expect(raw >= 0)
        let rawReply = try client.request(.screenshotPixels, passing: raw)
        #expect(field(rawReply, "ok") == .bool(true), "\(rawReply)")
        #expect(field(rawReply, "format") == .string("XRGB8888"), "\(rawReply)")
        if case let .int(width)? = field(rawReply, "width"), case let .int(height)? = field(rawReply, "height"),
           case let .int(stride)? = field(rawReply, "stride") {
            #expect(lseek(raw, 0, SEEK_END) == off_t(stride * height))
            var pixels = [UInt8](repeating: 0, count: stride * height)
            #expect(pixels.withUnsafeMutableBytes { pread(raw, $0.baseAddress, stride * height, 0) } == stride * height)
            let again = path + ".again.png"
            defer { unlink(again) }
            try pixels.withUnsafeBytes { bytes in
                try PNGWriter.write(path: again, pixels: bytes.baseAddress!, width: width, height: height, stride: stride)
            }
            #expect([UInt8](FileManager.default.contents(atPath: again) ?? Data()) == bytes, "the pixels are not the PNG's picture")
        } else {
            Issue.record("no width, height and stride in \(rawReply)")
        }
        close(raw)
        #expect(field(try client.request(.screenshotPixels), "error")?.stringValue?.contains("SCM_RIGHTS") == true)

        // No file: an error saying what to send.
        let none = try client.request(.screenshot(path: nil))
        #expect(field(none, "ok") == .bool(false))
        #expect(field(none, "error")?.stringValue?.contains("SCM_RIGHTS") == true, "\(none)")

        // A pipe (a writer could block on it for ever) and a read-only file: refused.
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let piped = try client.request(.screenshot(path: nil), passing: ends[1])
        close(ends[0]); close(ends[1])
        #expect(field(piped, "error")?.stringValue?.contains("not a regular file") == true, "\(piped)")
        let readOnly = open(path, O_RDONLY | O_CLOEXEC)
        let refused = try client.request(.screenshot(path: nil), passing: readOnly)
        close(readOnly)
        #expect(field(refused, "error")?.stringValue?.contains("not open for writing") == true, "\(refused)")
        #expect(FileManager.default.contents(atPath: path)?.count == bytes.count, "a refused request changed the file")

        // Descriptors sent with requests that take none are closed, not kept:
        // a client cannot fill the daemon's table.
        for _ in 0..<40 {
            let spare = open("/dev/null", O_RDONLY | O_CLOEXEC)
            #expect(field(try client.request(.status, passing: spare), "ok") == .bool(true))
            close(spare)
        }
        #expect(openDescriptors(pid) == before, "the daemon kept descriptors it was sent")
    }
}
