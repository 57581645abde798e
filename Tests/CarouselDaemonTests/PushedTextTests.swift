// Pushed text ([overlay] text_file, `overlay text`, `overlay clear`): on the
// offscreen display with a manual clock, where it is drawn, that a change
// writes its rectangle only and that at rest it costs no wake-up; and on the
// real daemon, the file followed across replace-by-rename and deletion, the
// files that are not shown (one line each), the socket over the file, and
// a reload that keeps what was pushed.

import CarouselPushedText
import CarouselServices
import CarouselControl
import CarouselCore
import CarouselPlatform
import Foundation
import Testing
import CarouselDaemon
import CarouselLoop
@testable import CarouselServices
import CarouselPushedTextWords

/// A folder of its own for a text file (not the album's: its parent is watched too).
final class TextFolder {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("carouseld-text-\(UUID().uuidString)")
    init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
    var file: String { url.appendingPathComponent("text").path }

    /// Writes `text` as a script should: a temporary file beside it, renamed over the name.
    func replace(with text: String) throws {
        let temporary = url.appendingPathComponent(".text.tmp")
        try Data(text.utf8).write(to: temporary)
        #expect(rename(temporary.path, file) == 0)
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}

@Suite("pushed text, manual clock") struct PushedTextScreenTests {
    func service(_ d: OffscreenDaemon) throws -> PushedTextService {
        try #require(d.daemon.service(PushedTextService.self))
    }

    /// Runs the loop's descriptors (inotify, the drawing handed back) until `condition`.
    func settle(_ d: OffscreenDaemon, until condition: () throws -> Bool) throws {
        for _ in 0..<300 where try !condition() {
            try d.daemon.dispatchDescriptors(timeoutMilliseconds: 10)
        }
        #expect(try condition(), "the loop never got there")
        // Past the frame pacer's interval: the frame asked for is drawn.
        for _ in 0..<3 { d.advance(ms: 20) }
    }

    func screen(_ d: OffscreenDaemon) -> [UInt32] {
        let size = d.backend.panelSize
        var pixels: [UInt32] = []
        for y in 0..<size.height { for x in 0..<size.width { pixels.append(d.backend.pixel(x: x, y: y)) } }
        return pixels
    }

    func box(_ a: [UInt32], _ b: [UInt32], width: Int = 320) -> (x0: Int, y0: Int, x1: Int, y1: Int)? {
        var r: (x0: Int, y0: Int, x1: Int, y1: Int)?
        for i in a.indices where a[i] != b[i] {
            let x = i % width, y = i / width
            r = r.map { (min($0.x0, x), min($0.y0, y), max($0.x1, x), max($0.y1, y)) } ?? (x, y, x, y)
        }
        return r
    }

    @Test func theFilesTextShowsInItsCornerAndAChangeWritesItsRectangleOnly() throws {
        let folder = try TextFolder()
        try folder.replace(with: "Sunny 21 °C\nRain from 16:00\n")
        let ini = "[indicator]\nenabled = false\n[overlay]\nsize = 14\n"
        let plain = try OffscreenDaemon(ini: ini)
        plain.showFirstPicture()
        let d = try OffscreenDaemon(ini: ini + "text_file = \(folder.file)\ntext_position = bottom-right\n")
        d.showFirstPicture()
        let text = try service(d)
        try settle(d) { text.stamp != nil }
        #expect(text.shown?.source == .file)
        #expect(text.shown?.lines.lines == ["Sunny 21 °C", "Rain from 16:00"])
        let b = try #require(box(screen(plain), screen(d)), "the text is drawn")
        // Bottom-right, two lines of 14 px, within half the screen's width.
        #expect(b.x0 >= 160 && b.x1 > 280 && b.y0 > 120 && b.y1 > 180, "\(b)")
        // At rest it costs no wake-up.
        for _ in 0..<3 { d.advance(ms: 1000) }
        #expect(d.daemon.nextWake(now: d.now) == nil, "the text asks nothing of the loop at rest")
        // Pushed over the socket: the frame that shows it writes its rectangle, old and new, only
        // (once each buffer of the pair has had a frame with the text: the first may be written whole).
        let before = screen(d)
        for word in ["Hail", "Rain"] {
            #expect(isOK(d.daemon.answer(.declared(PushedTextWords.text(word)), grant: .controlSocket)))
            try settle(d) { text.drawn?.lines == [word] }
        }
        let old = try #require(text.stamp)
        let rain = screen(d)
        #expect(isOK(d.daemon.answer(.declared(PushedTextWords.text("Snow")), grant: .controlSocket)))
        try settle(d) { text.drawn?.lines == ["Snow"] }
        let new = try #require(text.stamp)
        let written = d.daemon.pixelsWritten
        #expect(written > 0 && written <= old.image.width * old.image.height + new.image.width * new.image.height,
                "\(written) pixels written")
        let changed = try #require(box(rain, screen(d)))
        #expect(changed.x0 >= min(old.x, new.x) - 40 && changed.y0 >= min(old.y, new.y) - 4, "\(changed) outside the text")
        #expect(d.daemon.nextWake(now: d.now) == nil)
        // Cleared: the file's text again.
        #expect(isOK(d.daemon.answer(.declared(PushedTextWords.clear), grant: .controlSocket)))
        try settle(d) { text.drawn?.lines == ["Sunny 21 °C", "Rain from 16:00"] }
        #expect(screen(d) == before, "the file's text as it was")
    }

    @Test func inTheClocksCornerTheTextGoesBeneathTheClock() throws {
        let week = ManualWeek(start: ManualWeek.minute(0, 12, 34))
        let folder = try TextFolder()
        try folder.replace(with: "Sunny")
        let d = try OffscreenDaemon(ini: "[indicator]\nenabled = false\n[overlay]\nsize = 14\nclock = HH:MM\n"
                                    + "clock_position = top-right\ntext_position = top-right\ntext_file = \(folder.file)\n",
                                    localClock: week.clock)
        d.showFirstPicture()
        let text = try service(d)
        try settle(d) { text.stamp != nil }
        let clock = try #require(d.daemon.service(ClockOverlay.self)?.stamp)
        let stamp = try #require(text.stamp)
        #expect(stamp.y >= clock.y + clock.image.height, "the text \(stamp.y) starts beneath the clock \(clock.y)+\(clock.image.height)")
        #expect(stamp.x + stamp.image.width > 280, "right-aligned in the same corner")
    }

    @Test func aLineTooWideIsCutToItsShareAndRightToLeftAndCJKAreDrawn() throws {
        let d = try OffscreenDaemon(ini: "[overlay]\nsize = 14\ntext_position = top-right\n")
        d.showFirstPicture()
        let text = try service(d)
        // More than 4 lines: the first 4; a line far too wide: cut to half the screen.
        #expect(isOK(d.daemon.answer(.declared(PushedTextWords.text(String(repeating: "Rain later today ", count: 20) + #"\n2\n3\n4\n5"#)), grant: .controlSocket)))
        try settle(d) { text.stamp != nil }
        #expect(text.shown?.lines.lines.count == 4)
        let wide = try #require(text.stamp)
        #expect(wide.image.width <= 160 + 14, "cut to its share: \(wide.image.width) px of 320")
        #expect(wide.x + wide.image.width > 300, "right-aligned in the top-right corner")
        // Arabic and Japanese draw (the fallback fonts are the captions').
        #expect(isOK(d.daemon.answer(.declared(PushedTextWords.text(#"مطر بعد الظهر\n雨のち晴れ"#)), grant: .controlSocket)))
        try settle(d) { text.drawn?.lines == ["مطر بعد الظهر", "雨のち晴れ"] }
        let rtl = try #require(text.stamp)
        #expect(rtl.image.height > 2 * 14, "two lines drawn: \(rtl.image.height) px high")
    }

    @Test func theFileFollowedAcrossRenameAndDeletion() throws {
        let folder = try TextFolder()
        let d = try OffscreenDaemon(ini: "[overlay]\ntext_file = \(folder.file)\n")
        d.showFirstPicture()
        let text = try service(d)
        #expect(text.shown == nil, "no file yet")
        try folder.replace(with: "one")
        try settle(d) { text.stamp != nil }
        #expect(text.shown?.lines.lines == ["one"])
        try folder.replace(with: "two")
        try settle(d) { text.drawn?.lines == ["two"] }
        try FileManager.default.removeItem(atPath: folder.file)
        try settle(d) { text.shown == nil && text.stamp == nil }
        #expect(d.daemon.stampShown(.text) == nil)
    }
}

private func isOK(_ reply: ControlReply) -> Bool {
    if case .ok = reply { return true }
    return false
}

@Suite("pushed text on the real daemon", .enabled(if: daemonBinary != nil, "carouseld binary not found; set CAROUSELD_BIN"))
struct PushedTextDaemonTests {
    func overlay(_ status: [String: JSONValue]) -> (text: String?, source: String?) {
        guard case let .object(fields)? = status["overlay"] else { return (nil, nil) }
        return (fields["text"]?.stringValue, fields["source"]?.stringValue)
    }

    /// Asks for `status` until `condition` holds of its overlay field.
    func waitForOverlay(_ d: ControlledDaemon, _ what: String,
                        _ condition: ((text: String?, source: String?)) -> Bool) throws {
        for _ in 0..<200 {
            if condition(overlay(try d.status())) { return }
            usleep(50_000)
        }
        Issue.record("timed out waiting for \(what): \(overlay(try d.status()))")
    }

    func lines(_ d: ControlledDaemon, containing text: String) -> Int {
        d.daemon.log.split(separator: "\n").filter { $0.contains(text) }.count
    }

    @Test func theFileTheSocketAndAReload() throws {
        let folder = try TextFolder()
        try folder.replace(with: "Sunny 21 °C\nRain from 16:00\n")
        let ini = "[images]\npath = $IMAGES\n[autoplay]\nenabled = false\n[overlay]\ntext_file = \(folder.file)\n"
        let d = try ControlledDaemon(ini, images: [("1.jpg", "01-mountains.jpg")])
        defer { _ = d.stop() }
        try waitForOverlay(d, "the file's text") { $0.text == "Sunny 21 °C\nRain from 16:00" && $0.source == "file" }
        // Replaced by rename, as a script should.
        try folder.replace(with: "Cloudy 18 °C")
        try waitForOverlay(d, "the new text") { $0.text == "Cloudy 18 °C" }
        // The socket's text shows over it until cleared; \n ends a line.
        let pushed = try d.request(#"overlay text "Doorbell!\nParcel at the door""#)
        #expect(pushed["ok"] == .bool(true), "\(pushed)")
        #expect(overlay(pushed).text == "Doorbell!\nParcel at the door" && overlay(pushed).source == "pushed")
        // The file changes meanwhile: the pushed text stays on top.
        try folder.replace(with: "Rain 12 °C")
        usleep(300_000)
        #expect(overlay(try d.status()).source == "pushed")
        // A reload keeps the pushed text.
        #expect(try d.request("reload")["ok"] == .bool(true))
        #expect(overlay(try d.status()).text == "Doorbell!\nParcel at the door")
        let cleared = try d.request("overlay clear")
        #expect(overlay(cleared).text == "Rain 12 °C" && overlay(cleared).source == "file", "\(cleared)")
        // The file goes: its text goes, one line said.
        try FileManager.default.removeItem(atPath: folder.file)
        try waitForOverlay(d, "no text") { $0.text == nil && $0.source == nil }
        #expect(lines(d, containing: "is gone; its text is taken away") == 1)
        #expect(d.daemon.process.isRunning)
    }

    @Test func aHugeAndABinaryFileAreOneLineEachAndTheDaemonRunsOn() throws {
        let folder = try TextFolder()
        let ini = "[images]\npath = $IMAGES\n[autoplay]\nenabled = false\n[overlay]\ntext_file = \(folder.file)\n"
        let d = try ControlledDaemon(ini, images: [("1.jpg", "01-mountains.jpg")])
        defer { _ = d.stop() }
        d.daemon.waitFor("the missing file said") { $0.contains("does not exist yet") }
        // Written in place, in several writes and closes, then touched: one line.
        for _ in 0..<3 {
            try Data(repeating: 0x41, count: 20_000).write(to: URL(fileURLWithPath: folder.file))
            usleep(100_000)
        }
        d.daemon.waitFor("the huge file said") { $0.contains("more than the 16 KiB of a text file shown") }
        try folder.replace(with: "fine")
        try waitForOverlay(d, "the text") { $0.text == "fine" }
        for _ in 0..<3 {
            try folder.replace(with: "PNG\u{0}\u{1}binary")
            usleep(100_000)
        }
        d.daemon.waitFor("the binary file said") { $0.contains("holds a NUL byte") }
        try waitForOverlay(d, "no text") { $0.text == nil }
        usleep(300_000)
        #expect(lines(d, containing: "more than the 16 KiB") == 1, "\(d.daemon.log)")
        #expect(lines(d, containing: "holds a NUL byte") == 1, "\(d.daemon.log)")
        #expect(lines(d, containing: "does not exist yet") == 1)
        #expect(try d.status()["ok"] == .bool(true))
    }

    @Test func aFolderThatDoesNotExistIsOneLineAndTheCarouselRuns() throws {
        let ini = "[images]\npath = $IMAGES\n[autoplay]\nenabled = false\n[overlay]\ntext_file = /nonexistent-\(UUID().uuidString)/text\n"
        let d = try ControlledDaemon(ini, images: [("1.jpg", "01-mountains.jpg")])
        defer { _ = d.stop() }
        d.daemon.waitFor("the first picture") { $0.contains("first picture on screen") }
        #expect(lines(d, containing: "cannot follow text_file") == 1, "\(d.daemon.log)")
        #expect(overlay(try d.status()).text == nil)
        #expect(overlay(try d.request("overlay text hello")).text == "hello", "the socket's text shows all the same")
    }

    @Test func atRestWithATextFileTheLoopSleeps() throws {
        let folder = try TextFolder()
        try folder.replace(with: "Sunny 21 °C")
        let d = try RunningDaemon(config: "[images]\npath = $IMAGES\n[autoplay]\nenabled = false\n[overlay]\ntext_file = \(folder.file)\n")
        try d.addImage("a.jpg", from: "01-mountains.jpg")
        try d.start()
        defer { _ = d.stop() }
        d.waitFor("the first picture") { $0.contains("first picture on screen") }
        // Settled as in DaemonTests.atRestTheLoopSleeps: asleep in epoll_wait, no timer armed, nothing moving.
        #expect(d.settle(), "the loop never came to rest")
        // The text file's folder is quiet: no wake-up in a few windows of 1.5 s (one may
        // catch the end of a loaded machine's start; a loop that polls wakes in all).
        var quiet = false
        for _ in 0..<4 {
            let before = d.loopWakeups
            usleep(1_500_000)
            if d.loopWakeups == before { quiet = true; break }
        }
        #expect(quiet, "the loop woke up with nothing to do")
    }
}
