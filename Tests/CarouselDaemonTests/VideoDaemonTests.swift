// Clips on a running daemon (offscreen display, manual clock; the clip's
// own thread decodes with FFmpeg in real time and the tests wait for it):
// a clip plays where it stands, at its own timing, autoplay waits for its
// end, a drag pauses it, the display off stops it, pause and play, status
// and events, a damaged clip skipped.

import CarouselClips
import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselImaging
import CarouselDaemon
import CarouselPlatform
import CarouselRender
import Foundation
import Testing

@Suite("Clips on the daemon", .serialized) struct VideoDaemonTests {
    /// A 3 s clip at 10 frames a second, red for a second, then green, then
    /// blue, of the panel's shape (it fills the screen): made by Debian's ffmpeg.
    /// The real binary (not started) with a picture first in its folder,
    /// autoplay off and a control socket of its own, named `socketPrefix-...`.
    static func runningWithAPicture(socketPrefix: String) throws -> (RunningDaemon, String) {
        let socket = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(socketPrefix)-\(UUID().uuidString.prefix(8)).sock").path
        let d = try RunningDaemon(config: "[images]\npath = $IMAGES\n[autoplay]\nenabled = false\n[control]\nsocket = \(socket)\n")
        try d.addImage("1.jpg", from: "01-mountains.jpg")
        return (d, socket)
    }

    static func makeClip(_ path: String) throws {
        let colours = ["red", "lime", "blue"]
        var arguments = ["-loglevel", "error", "-y"]
        for c in colours { arguments += ["-f", "lavfi", "-i", "color=c=\(c):s=160x100:r=10:d=1"] }
        arguments += ["-filter_complex", "[0][1][2]concat=n=3:v=1:a=0", "-pix_fmt", "yuv420p", "-c:v", "libx264", path]
        try PortraitPairDaemonTests.run("/usr/bin/ffmpeg", arguments)
    }

    /// The folder: a picture, the clip, a picture.
    static func daemon(ini: String = "", extra: ((URL) throws -> Void)? = nil, controlSocket: Bool = false) throws -> OffscreenDaemon {
        let d = try OffscreenDaemon(images: ["01-mountains.jpg", "04-panels.png"], ini: "[indicator]\nenabled = false\n" + ini,
                                    controlSocket: controlSocket, folderExtras: { images in
            try makeClip(images.appendingPathComponent("02-clip.mp4").path)
            try extra?(images)
        })
        d.showFirstPicture()
        return d
    }

    /// The clips' service on `d`'s loop.
    static func clips(_ d: OffscreenDaemon) -> VideoService? { d.daemon.service(VideoService.self) }

    /// Runs the loop for `ms` in steps of `step`, letting the clip's thread catch up before each.
    static func play(_ d: OffscreenDaemon, ms: Int, step: Int = 50) {
        for _ in 0..<(ms / step) {
            Self.clips(d)?.settle()
            d.advance(ms: Int64(step))
        }
        Self.clips(d)?.settle()
        d.advance(ms: 0)
    }

    /// Goes to item `index` (a jump) and waits for its picture, or its clip's start.
    static func go(_ d: OffscreenDaemon, to index: Int) {
        guard case .ok = d.answer("goto \(index) 0") else { Issue.record("goto \(index) refused"); return }
        d.advance(ms: 0)
        d.daemon.settleDecodes()
        play(d, ms: 100)
    }

    /// Goes to the clip and waits for its start.
    static func toClip(_ d: OffscreenDaemon) { go(d, to: 1) }

    /// The colour in the middle of the screen: which of red, green and blue is lit.
    static func colour(_ d: OffscreenDaemon) -> String {
        let p = d.backend.pixel(x: 160, y: 100)
        let (r, g, b) = ((p >> 16) & 0xFF, (p >> 8) & 0xFF, p & 0xFF)
        switch (r > 180, g > 180, b > 180, r < 60 || g < 60 || b < 60) {
        case (true, false, false, true): return "red"
        case (false, true, false, true): return "green"
        case (false, false, true, true): return "blue"
        default: return String(format: "#%06x", p & 0xFFFFFF)
        }
    }

    static func video(_ d: OffscreenDaemon) -> JSONValue? {
        let v = d.daemon.status()["video"]
        return v == .null ? nil : v
    }

    @Test func aClipPlaysWhereItStandsAtItsOwnTiming() throws {
        let d = try Self.daemon()
        #expect(Self.video(d) == nil)
        Self.toClip(d)
        let v = try #require(Self.video(d))
        #expect(v["state"] == .string("playing"))
        #expect(v["image"]?.stringValue?.hasSuffix("/02-clip.mp4") == true)
        #expect(abs((v["duration"]?.doubleValue ?? 0) - 3) < 0.05)
        #expect(d.daemon.status()["autoplay"]?["paused_by"] == .array([.string("video")]))
        // Red in its first second, green in its second, blue in its third.
        #expect(Self.colour(d) == "red")
        // While its frames show, its first frame is not kept besides them.
        let key = try #require(v["image"]?.stringValue)
        #expect(!d.daemon.keepsPicture(PageKey(key)))
        Self.play(d, ms: 1000)
        #expect(Self.colour(d) == "green")
        Self.play(d, ms: 1000)
        #expect(Self.colour(d) == "blue")
        let position = Self.video(d)?["position"]?.doubleValue ?? 0
        #expect(position > 2 && position < 2.3)
        // The end: with autoplay off, the last frame stays.
        Self.play(d, ms: 1500)
        let ended = try #require(Self.video(d))
        #expect(ended["state"] == .string("ended"))
        #expect(ended["frames"] == .int(30))
        #expect(ended["dropped"] == .int(0))
        #expect(Self.colour(d) == "blue")
        #expect(d.index == .int(1))
    }

    @Test func autoplayWaitsForTheEndAndMovesOn() throws {
        let d = try Self.daemon(ini: "[autoplay]\ninterval = 1\ntransition = 0.2\n")
        Self.toClip(d)
        // Autoplay on (the rig's INI keeps it off): it waits for the clip.
        guard case .ok = d.answer("resume") else { Issue.record("resume refused"); return }
        #expect(Self.video(d)?["state"] == .string("playing"))
        Self.play(d, ms: 2500)  // autoplay's interval passed twice over
        #expect(d.index == .int(1))
        Self.play(d, ms: 1000)  // the end at 3 s, then the transition
        #expect(d.index == .int(2))
        #expect(Self.video(d) == nil)
    }

    @Test func aDragPausesTheClipAndLettingGoPlaysItOn() throws {
        let d = try Self.daemon()
        Self.toClip(d)
        Self.play(d, ms: 1200)
        #expect(Self.colour(d) == "green")
        let before = Self.video(d)?["position"]?.doubleValue ?? 0
        // A finger drags the clip a little and holds it: it pauses.
        d.daemon.carryOut(.touch(.down(id: 0, at: .init(x: 200, y: 100)), time: d.now))
        for k in 1...4 {
            d.advance(ms: 16)
            d.daemon.carryOut(.touch(.move(id: 0, to: .init(x: 200 - Double(k) * 10, y: 100)), time: d.now))
        }
        Self.play(d, ms: 1500)
        let held = try #require(Self.video(d))
        #expect(held["state"] == .string("paused"))
        let heldAt = held["position"]?.doubleValue ?? 0
        #expect(heldAt >= before && heldAt < before + 0.2)
        // The frame moved with the finger: green 40 px left of where it was.
        #expect(d.backend.pixel(x: 300, y: 100) & 0xFFFFFF != d.backend.pixel(x: 100, y: 100) & 0xFFFFFF)
        // Let go: it settles back and plays on from where it held.
        d.daemon.carryOut(.touch(.up(id: 0), time: d.now))
        Self.play(d, ms: 1500)
        let again = try #require(Self.video(d))
        #expect(again["state"] == .string("playing"))
        // Less than 1.5 s on: the settle back took some of it.
        let position = again["position"]?.doubleValue ?? 0
        #expect(position > heldAt + 0.8 && position < heldAt + 1.5)
        #expect(Self.colour(d) == "blue")
        #expect(d.index == .int(1))
    }

    @Test func theDisplayOffStopsTheClipAndItStartsAgainWhenItIsBack() throws {
        let d = try Self.daemon()
        Self.toClip(d)
        Self.play(d, ms: 1500)
        #expect(Self.colour(d) == "green")
        #expect(d.daemon.setDisplayPower(.off) == nil)
        Self.play(d, ms: 500)
        #expect(Self.video(d) == nil)
        #expect(d.daemon.setDisplayPower(.on) == nil)
        Self.play(d, ms: 300)
        let v = try #require(Self.video(d))
        #expect(v["state"] == .string("playing"))
        #expect((v["position"]?.doubleValue ?? 9) < 0.5)
        #expect(Self.colour(d) == "red")
    }

    @Test func pauseHoldsTheFrameAndPlayPlaysOn() throws {
        let d = try Self.daemon()
        Self.toClip(d)
        Self.play(d, ms: 500)
        guard case .ok = d.answer("pause") else { Issue.record("pause refused"); return }
        Self.play(d, ms: 2000)
        #expect(Self.video(d)?["state"] == .string("paused"))
        #expect(Self.colour(d) == "red")
        guard case .ok = d.answer("play") else { Issue.record("play refused"); return }
        Self.play(d, ms: 800)
        #expect(Self.video(d)?["state"] == .string("playing"))
        #expect(Self.colour(d) == "green")
        // `play` lifted the pause and turned nothing on ([autoplay] enabled = false).
        #expect(d.daemon.status()["autoplay"]?["enabled"] == .bool(false))
        // Paged away, the clip stops; back on it, its first frame shows at once (decoded again as the cache's).
        Self.go(d, to: 2)
        #expect(Self.video(d) == nil)
        guard case .ok = d.answer("goto 1 0") else { Issue.record("goto 1 refused"); return }
        d.advance(ms: 0)
        d.daemon.settleDecodes()
        d.advance(ms: 20)
        #expect(Self.colour(d) == "red")
    }

    @Test func setVideoLoopAppliesToTheClipPlayingWithoutStartingItAgain() throws {
        let d = try Self.daemon()
        Self.toClip(d)
        Self.play(d, ms: 1500)
        guard case .ok = d.answer("set video.loop true") else { Issue.record("set refused"); return }
        Self.play(d, ms: 100)
        #expect((Self.video(d)?["position"]?.doubleValue ?? 0) > 1.5)
        #expect(Self.colour(d) == "green")
        Self.play(d, ms: 1800)  // past the end: it starts again
        #expect(Self.video(d)?["state"] == .string("playing"))
        #expect(Self.colour(d) == "red")
    }

    @Test func aNewLayoutWhileAClipPlaysStartsItAgainForTheNewLayout() throws {
        let d = try Self.daemon()
        Self.toClip(d)
        Self.play(d, ms: 1500)
        #expect(Self.colour(d) == "green")
        // The panel turned: frames of the old layout's size would not fit.
        guard case .ok = d.answer("set images.fit cover") else { Issue.record("set refused"); return }
        guard case .ok = d.answer("set display.rotation 180") else { Issue.record("set refused"); return }
        d.daemon.settleDecodes()
        Self.play(d, ms: 300)
        let v = try #require(Self.video(d))
        #expect(v["state"] == .string("playing"))
        #expect((v["position"]?.doubleValue ?? 9) < 0.6)
        #expect(Self.colour(d) == "red")
    }

    @Test func loopStartsTheClipAgainWhileAutoplayIsOff() throws {
        let d = try Self.daemon(ini: "[video]\nloop = true\n")
        Self.toClip(d)
        Self.play(d, ms: 3400)
        #expect(Self.video(d)?["state"] == .string("playing"))
        #expect(Self.colour(d) == "red")
    }

    /// The real binary on its own loop, in real time: a subscriber on the
    /// control socket hears the clip start and end, and the log says so.
    @Test(.enabled(if: daemonBinary != nil, "carouseld binary not found; set CAROUSELD_BIN"))
    func subscribersHearTheClipStartAndEnd() throws {
        let (d, socket) = try Self.runningWithAPicture(socketPrefix: "vs")
        try Self.makeClip(d.folder.appendingPathComponent("images/2.mp4").path)
        try d.start()
        defer { _ = d.stop() }
        #expect(d.waitFor("the control socket") { $0.contains("<6>control socket: \(socket)") })
        let watcher = try ControlClient(path: socket)
        _ = try watcher.request(.subscribe)
        let client = try ControlClient(path: socket)
        _ = try client.request(.goto(index: 1, milliseconds: 0))
        var events: [JSONValue] = []
        while !events.contains(where: { $0["event"] == .string("didEndVideo") }), let line = try watcher.readLine() {
            if let event = JSONValue.parse(line), event["event"]?.stringValue?.hasSuffix("Video") == true { events.append(event) }
        }
        #expect(events.map { $0["event"] } == [.string("didStartVideo"), .string("didEndVideo")])
        #expect(events.first?["index"] == .int(1))
        #expect(events.first?["image"]?.stringValue?.hasSuffix("/2.mp4") == true)
        #expect(abs((events.first?["duration"]?.doubleValue ?? 0) - 3) < 0.05)
        #expect(events.last?["frames"].flatMap(\.intValue).map { $0 > 0 && $0 <= 30 } == true)
        #expect(d.waitFor("the log's lines") { $0.contains("video: playing 1 (") && $0.contains("video: ended 1 (") })
    }

    @Test func aDamagedClipIsSkippedLikeABrokenPicture() throws {
        let d = try Self.daemon(extra: { images in
            // The first 30% of a good clip: its header promises what is not there.
            let good = images.appendingPathComponent("02-clip.mp4")
            let bytes = try Data(contentsOf: good)
            try bytes.prefix(bytes.count * 3 / 10).write(to: images.appendingPathComponent("03-cut.mp4"))
            try Data(repeating: 0x5A, count: 4096).write(to: images.appendingPathComponent("03-garbage.mov"))
        })
        #expect(d.daemon.status()["pictures"] == .int(5))
        // On the first, skipped; the second takes its place on screen, and is skipped too.
        Self.go(d, to: 2)
        d.daemon.settleDecodes()
        Self.play(d, ms: 100)
        #expect(d.daemon.status()["pictures"] == .int(3))
        guard case .ok(let list) = d.answer("list") else { Issue.record("list refused"); return }
        #expect(PortraitPairDaemonTests.names(list["images"]) == ["01-mountains.jpg", "02-clip.mp4", "04-panels.png"])
    }

    /// A Cinepak clip with ms-adpcm audio (it played, `"decoder":
    /// "cinepak"`) on the real binary: one `skipping PATH: why` line naming
    /// its codec, and the H.264 clip beside it plays.
    @Test(.enabled(if: daemonBinary != nil, "carouseld binary not found; set CAROUSELD_BIN"))
    func aClipOfACodecNoPhoneRecordsIsSkippedWithOneLine() throws {
        let (d, socket) = try Self.runningWithAPicture(socketPrefix: "vc")
        let cinepak = d.folder.appendingPathComponent("images/2.mov").path
        try PortraitPairDaemonTests.run("/usr/bin/ffmpeg", ["-loglevel", "error", "-y", "-f", "lavfi", "-i",
                                                           "color=c=red:s=160x100:r=10:d=1", "-f", "lavfi", "-i",
                                                           "sine=duration=1", "-c:v", "cinepak", "-c:a", "adpcm_ms", cinepak])
        try Self.makeClip(d.folder.appendingPathComponent("images/3.mp4").path)
        try d.start()
        defer { _ = d.stop() }
        #expect(d.waitFor("the skip line") {
            $0.contains("<4>skipping \(cinepak): cinepak is not a codec phones or cameras record (only H.264, HEVC, VP8, VP9 and AV1 clips play)")
        })
        #expect(d.waitFor("two left") { $0.contains("<6>images: 2 now") })
        let client = try ControlClient(path: socket)
        _ = try client.request(.goto(index: 1, milliseconds: 0))
        #expect(d.waitFor("the H.264 clip playing") { $0.contains("video: playing 1 (") && $0.contains("/3.mp4), 160x100 h264") })
        let lines = d.log.split(separator: "\n").filter { $0.contains("2.mov") }
        #expect(lines.count == 1, "\(lines)")
        #expect(d.process.isRunning)
    }

    /// The real binary decodes clips in its helper process: while a clip
    /// plays, none of FFmpeg's libraries is mapped in the daemon (the
    /// display process), and the helper, its child, has them.
    @Test(.enabled(if: daemonBinary != nil, "carouseld binary not found; set CAROUSELD_BIN"))
    func whileAClipPlaysNoFFmpegLibraryIsMappedInTheDaemon() throws {
        let (d, socket) = try Self.runningWithAPicture(socketPrefix: "vm")
        try Self.makeClip(d.folder.appendingPathComponent("images/2.mp4").path)
        try d.start()
        defer { _ = d.stop() }
        #expect(d.waitFor("the control socket") { $0.contains("<6>control socket: \(socket)") })
        let client = try ControlClient(path: socket)
        _ = try client.request(.goto(index: 1, milliseconds: 0))
        #expect(d.waitFor("the clip playing") { $0.contains("video: playing 1 (") })
        let pid = d.process.processIdentifier
        let ffmpeg = ["libavcodec", "libavformat", "libavutil", "libswscale"]
        /// A file of /proc read to its end (String(contentsOfFile:) stops
        /// after the first 4 KiB of a file whose size reads as 0).
        func procFile(_ path: String) -> String? {
            guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
            defer { try? handle.close() }
            return (try? handle.readToEnd()).map { String(decoding: $0 ?? Data(), as: UTF8.self) }
        }
        /// The maps of the daemon's children (each listed under the thread that started it).
        func helpersMaps() -> [String] {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            return tasks.compactMap { procFile("/proc/\(pid)/task/\($0)/children") }
                .flatMap { $0.split(whereSeparator: \.isWhitespace) }
                .compactMap { procFile("/proc/\($0)/maps") }
        }
        // Sampled while the clip plays (3 s): a helper with FFmpeg is there,
        // and the daemon then has none of it.
        var samples = 0, withHelper = 0
        while samples < 20 {
            samples += 1
            let helperHasFFmpeg = helpersMaps().contains { $0.contains("libavcodec") }
            let maps = try #require(procFile("/proc/\(pid)/maps"))
            // The whole file: the daemon's own executable and libc are in it.
            #expect(maps.contains("libc.so"))
            #expect(!ffmpeg.contains { maps.contains($0) }, "FFmpeg mapped in the daemon")
            if helperHasFFmpeg { withHelper += 1 }
            usleep(50_000)
        }
        #expect(withHelper > 0, "no helper with FFmpeg while the clip played")
        #expect(d.waitFor("the clip's end") { $0.contains("video: ended 1 (") })
        #expect(!d.log.contains("video: ended 1 (\(d.folder.appendingPathComponent("images/2.mp4").path)) after 0 frames"))
    }

    /// The helper dies mid-clip (its test fault: SIGSEGV on the tenth
    /// frame): one line naming the crash, and the daemon runs on.
    @Test(.enabled(if: daemonBinary != nil, "carouseld binary not found; set CAROUSELD_BIN"))
    func aHelperThatDiesMidClipIsOneLine() throws {
        let (d, socket) = try Self.runningWithAPicture(socketPrefix: "vd")
        d.process.environment?["CAROUSELD_TEST_CLIP_FAULT"] = "SIGSEGV"
        let clip = d.folder.appendingPathComponent("images/2.mp4").path
        try Self.makeClip(clip)
        try d.start()
        defer { _ = d.stop() }
        #expect(d.waitFor("the control socket") { $0.contains("<6>control socket: \(socket)") })
        let client = try ControlClient(path: socket)
        _ = try client.request(.goto(index: 1, milliseconds: 0))
        #expect(d.waitFor("the crash line") {
            $0.contains("<4>video: \(clip): FFmpeg crashed on it (SIGSEGV in the process that decodes it; carouseld runs on); moving on")
        })
        let lines = d.log.split(separator: "\n").filter { $0.contains("crashed") }
        #expect(lines.count == 1, "\(lines)")
        #expect(d.process.isRunning)
        let status = JSONValue.parse(try client.request(.status))
        #expect(status?["ok"] == .bool(true), "\(String(describing: status))")
        #expect(status?["index"] == .int(1))
    }

    @Test func frameOvertakenOnTheLoopAreDroppedAndTheClipKeepsItsTime() throws {
        // The loop draws every 200 ms (a board that cannot keep up): two
        // frames are due each time; the newer shows, the older is dropped
        // (taken, but never presented: it counts as dropped).
        let d = try Self.daemon()
        Self.toClip(d)
        for _ in 0..<12 {
            Self.clips(d)?.settle()
            d.advance(ms: 200)
        }
        Self.clips(d)?.settle()
        let v = try #require(Self.video(d))
        let position = v["position"]?.doubleValue ?? 0
        #expect(position > 2.4 && position < 2.6)
        #expect(Self.colour(d) == "blue")
        let shown = v["frames"]?.intValue ?? 0, dropped = v["dropped"]?.intValue ?? 0
        // One frame reaches the screen a look (14 looks); the rest are dropped.
        #expect(dropped >= 8 && shown <= 16)
        // Every frame up to the position is shown or dropped, give or take
        // one: whether the clip's thread has judged the frame due last (t =
        // 2.4 s) by the time status is read is a race with its thread.
        #expect(shown + dropped >= 23 && shown + dropped <= 26)
        // Said once, with the rate reached.
        #expect(Self.clips(d)?.heavyLogged == true)
    }

    @Test func aClipLargerThanMaxPixelsIsSkipped() throws {
        let d = try Self.daemon(ini: "[video]\nmax_pixels = 100000\n", extra: { images in
            try PortraitPairDaemonTests.run("/usr/bin/ffmpeg", ["-loglevel", "error", "-y", "-f", "lavfi", "-i",
                                                               "color=c=red:s=480x300:r=10:d=1", "-pix_fmt", "yuv420p",
                                                               "-c:v", "libx264", images.appendingPathComponent("03-big.mp4").path])
        })
        Self.go(d, to: 2)
        guard case .ok(let list) = d.answer("list") else { Issue.record("list refused"); return }
        #expect(PortraitPairDaemonTests.names(list["images"]) == ["01-mountains.jpg", "02-clip.mp4", "04-panels.png"])
    }

    @Test func withVideoDisabledClipsAreNotInTheAlbum() throws {
        let d = try Self.daemon(ini: "[video]\nenabled = false\n")
        guard case .ok(let list) = d.answer("list") else { Issue.record("list refused"); return }
        #expect(PortraitPairDaemonTests.names(list["images"]) == ["01-mountains.jpg", "04-panels.png"])
    }

    @Test func aScreenshotMidClipShowsTheFrameOnScreen() throws {
        let d = try Self.daemon()
        Self.toClip(d)
        Self.play(d, ms: 1500)
        #expect(Self.colour(d) == "green")
        let (shot, _) = d.daemon.composeScreenshot()
        #expect(shot.pixel(x: 160, y: 100) == d.backend.pixel(x: 160, y: 100) | 0xFF00_0000)
        #expect(shot.pixel(x: 10, y: 10) == d.backend.pixel(x: 10, y: 10) | 0xFF00_0000)
    }

    /// A clip of another shape than the page, fitted with the blurred fill,
    /// on a panel mounted on its side: each frame sits where the first frame
    /// does, turned with the panel, and the fill around it stays the first
    /// frame's (made once, as a picture's is).
    @Test func fitBlurAndAPanelOnItsSideApplyToEveryFrame() throws {
        let d = try OffscreenDaemon(images: ["01-mountains.jpg"], panel: PixelSize(width: 200, height: 320),
                                    ini: "[display]\nrotation = 90\n[images]\nfit = blur\n[indicator]\nenabled = false\n",
                                    folderExtras: { images in
            var arguments = ["-loglevel", "error", "-y"]
            for c in ["red", "lime"] { arguments += ["-f", "lavfi", "-i", "color=c=\(c):s=90x160:r=10:d=1"] }
            arguments += ["-filter_complex", "[0][1]concat=n=2:v=1:a=0", "-pix_fmt", "yuv420p", "-c:v", "libx264",
                          images.appendingPathComponent("02-tall.mp4").path]
            try PortraitPairDaemonTests.run("/usr/bin/ffmpeg", arguments)
        })
        d.showFirstPicture()
        Self.go(d, to: 1)
        // The layout is 320x200 (the panel turned); the 9:16 clip fits 112x200 in the middle.
        func logical(_ x: Int, _ y: Int) -> UInt32 {
            // rotation 90: logical (x, y) is panel (height - 1 - y, x).
            d.backend.pixel(x: 199 - y, y: x) & 0xFFFFFF
        }
        func lit(_ p: UInt32) -> (r: UInt32, g: UInt32, b: UInt32) { ((p >> 16) & 0xFF, (p >> 8) & 0xFF, p & 0xFF) }
        #expect(Self.video(d)?["state"] == .string("playing"))
        let redCentre = lit(logical(160, 100))
        #expect(redCentre.r > 180 && redCentre.g < 60)
        let fill = logical(20, 100), rightFill = logical(300, 150)
        // The fill is the first frame blurred and dimmed: red, darker.
        #expect(lit(fill).r > lit(fill).g && lit(fill).r < 200)
        #expect(lit(rightFill).r > lit(rightFill).g && lit(rightFill).r < 200)
        Self.play(d, ms: 1200)
        let greenCentre = lit(logical(160, 100))
        #expect(greenCentre.g > 180 && greenCentre.r < 60)
        #expect(logical(20, 100) == fill)
        #expect(logical(300, 150) == rightFill)
    }

    @Test func aPictureAddedBeforeThePlayingClipLetsItPlayOn() throws {
        let d = try Self.daemon()
        Self.toClip(d)
        Self.play(d, ms: 1200)
        try FileManager.default.copyItem(at: demoImages.appendingPathComponent("02-sunset.jpg"),
                                         to: d.folder.appendingPathComponent("images/00-sunset.jpg"))
        d.daemon.rescanAlbum()
        Self.play(d, ms: 500)
        let v = try #require(Self.video(d))
        #expect(d.index == .int(2))
        #expect(v["index"] == .int(2))
        #expect(v["state"] == .string("playing"))
        #expect((v["position"]?.doubleValue ?? 0) > 1.5)
        // Removed while it plays: it stops, and the picture in its place shows.
        try FileManager.default.removeItem(at: d.folder.appendingPathComponent("images/02-clip.mp4"))
        d.daemon.rescanAlbum()
        Self.play(d, ms: 200)
        #expect(Self.video(d) == nil)
    }

    /// `carouseld render` shows a clip's page as the running carousel does
    /// before it plays: its first frame, fitted; a broken clip is left out.
    @Test func renderShowsAClipsFirstFrame() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("clip-render-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let clip = folder.appendingPathComponent("a.mp4").path
        try Self.makeClip(clip)
        let broken = folder.appendingPathComponent("b.webm").path
        try Data(repeating: 7, count: 100).write(to: URL(fileURLWithPath: broken))
        var config = Configuration()
        config.indicator.enabled = false
        let frame = Layout.still(config, panel: PixelSize(width: 320, height: 200), paths: [broken, clip], offset: 0,
                                 clock: (12, 0), zoom: nil, crossfade: nil)
        let p = frame.pixel(x: 160, y: 100)
        #expect((p >> 16) & 0xFF > 180 && (p >> 8) & 0xFF < 60 && p & 0xFF < 60, "\(String(p, radix: 16))")
    }

    /// A board that decodes slower than real time: every frame is late when
    /// it comes out of the decoder. The thread still prepares one every half
    /// second of the clip, so the clip is seen moving on, never frozen.
    @Test func aClipLateEverywhereStillShowsAFrameEveryHalfSecond() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("clip-late-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let clip = folder.appendingPathComponent("a.mp4").path
        try Self.makeClip(clip)
        let settings = ItemCache.Settings(itemSize: PixelSize(width: 160, height: 100), fit: .contain,
                                          background: PixelColor(red: 0, green: 0, blue: 0), maxPixels: 1_000_000,
                                          budgetBytes: 1 << 24)
        let player = ClipPlayer(path: clip, settings: settings, hardware: false, maxPixels: 1_000_000, elapsed: { 0 }) {}
        player.start()
        player.waitUntilIdle()
        // The first frame is taken at the start; the clip's clock starts then.
        let first = player.take(upTo: 0, first: true)
        #expect(first.frame?.time == 0)
        player.play(from: 0, at: 0)
        // The loop looks again 10 s later: every frame after the first is late.
        var times: [Double] = []
        for _ in 0..<10 {
            player.waitUntilIdle()
            let taken = player.take(upTo: 10_000_000)
            if let frame = taken.frame { times.append(frame.time) }
            if case .end? = taken.last { break }
        }
        player.stop()
        #expect(times.count >= 4 && times.count <= 7, "\(times)")
        for (a, b) in zip(times, times.dropFirst()) { #expect(b - a >= 0.45 && b - a <= 0.55, "\(times)") }
        #expect(player.droppedLate >= 20)
    }
}
