// Tier 3: the real daemon (`carouseld run`) on the offscreen display, with a
// real configuration file, a real image folder and real signals.

import CarouselImaging
import Foundation
import Testing

/// A running daemon whose stderr is collected in a file and read as it grows.
final class RunningDaemon {
    let process = Process()
    let folder: URL
    let logURL: URL

    init(config: String) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("carouseld-daemon-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("images"), withIntermediateDirectories: true)
        let ini = folder.appendingPathComponent("c.ini")
        try Data(config.replacingOccurrences(of: "$IMAGES", with: folder.appendingPathComponent("images").path).utf8).write(to: ini)
        logURL = folder.appendingPathComponent("stderr.log")
        FileManager.default.createFile(atPath: logURL.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: daemonBinary!)
        process.arguments = ["run", "--config", ini.path, "--display", "offscreen:320x200"]
        process.standardError = try FileHandle(forWritingTo: logURL)
        process.standardOutput = FileHandle.nullDevice
        // The position file goes to the test's own folder, not /var/lib/carouseld;
        // not next to images/ either, whose parent the folder watcher watches.
        let state = folder.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        environment["STATE_DIRECTORY"] = state.path
        process.environment = environment
    }

    func addImage(_ name: String, from source: String) throws {
        try FileManager.default.copyItem(at: demoImages.appendingPathComponent(source),
                                         to: folder.appendingPathComponent("images/\(name)"))
    }

    func start() throws { try process.run() }

    /// The log after `stop()` removed the folder.
    private var finalLog: String?

    var log: String { finalLog ?? (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

    /// Waits (polling, generous limit) until the log satisfies `condition`.
    @discardableResult
    func waitFor(_ what: String, limit: TimeInterval = 30, _ condition: (String) -> Bool) -> Bool {
        let end = Date().addingTimeInterval(limit)
        while Date() < end {
            if condition(log) { return true }
            usleep(50_000)
        }
        Issue.record("timed out waiting for \(what); log so far:\n\(log)")
        return false
    }

    func stop() -> Int32 {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        finalLog = log
        try? FileManager.default.removeItem(at: folder)
        return process.terminationStatus
    }

    /// The loop (main) thread sleeps in epoll_wait with none of the
    /// process's CLOCK_MONOTONIC timers armed: nothing of its own will wake
    /// it. (A count of context switches that stays the same for a while is
    /// not enough on a loaded machine: a starved process makes no switches
    /// either, then catches up inside the measurement.)
    var restingInEpoll: Bool {
        let pid = process.processIdentifier
        guard let wchan = try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/wchan", encoding: .utf8),
              wchan.contains("epoll_wait"),
              let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { return false }
        for fd in fds {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"),
                  target.contains("timerfd"),
                  let info = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8),
                  info.contains("clockid: 1") else { continue }
            if !info.contains("it_value: (0, 0)") { return false }
        }
        return true
    }

    /// Waits (up to 20 s) until the loop has settled: asleep in epoll_wait
    /// with no timer of its own armed, its switch count and the whole
    /// process's CPU time unchanged for 250 ms (a neighbour still decoding
    /// under a loaded full run wakes the loop when it is done). True once
    /// settled.
    func settle() -> Bool {
        var previous = -1
        var previousCPU = -1
        for _ in 0..<80 {
            usleep(250_000)
            guard let now = loopWakeups, let cpu = cpuTicks else { return false }
            if now == previous, cpu == previousCPU, restingInEpoll { return true }
            previous = now
            previousCPU = cpu
        }
        return false
    }

    /// CPU time of the whole process, every thread (clock ticks, utime + stime
    /// from /proc/PID/stat): unchanged while nothing at all runs, the
    /// decoder thread included.
    var cpuTicks: Int? {
        let pid = process.processIdentifier
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // After "(comm)": state is field 3, utime 14, stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }

    /// Voluntary context switches of the loop (main) thread.
    var loopWakeups: Int? {
        let pid = process.processIdentifier
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/status", encoding: .utf8) else { return nil }
        let line = text.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
        return line.flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }
    }
}

@Suite("carouseld run (offscreen)", .enabled(if: daemonBinary != nil, "carouseld binary not found; set CAROUSELD_BIN"))
struct DaemonTests {
    @Test func startsAndStopsCleanlyOnSIGTERM() throws {
        let d = try RunningDaemon(config: "[images]\npath = $IMAGES\n")
        try d.addImage("a.jpg", from: "01-mountains.jpg")
        try d.addImage("b.png", from: "04-panels.png")
        try d.start()
        d.waitFor("the start-up lines") { $0.contains("<6>images: 2 in ") && $0.contains("<6>display: offscreen 320x200") }
        #expect(d.stop() == 0)
        #expect(d.log.contains("<6>received SIGTERM, stopping"))
        #expect(d.log.contains("<6>stopped; display restored"))
    }

    @Test func aBadConfigurationAtStartIsOneErrorLineAndExitTwo() throws {
        let d = try RunningDaemon(config: "[images]\npath = $IMAGES\n[autoplay]\nintervall = 3\n")
        try d.start()
        d.process.waitUntilExit()
        #expect(d.process.terminationStatus == 2)
        let lines = d.log.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("<3>cannot start: \(d.folder.path)/c.ini:4: unknown key 'intervall' in [autoplay]") == true,
                "\(d.log)")
        _ = d.stop()
    }

    @Test func folderChangesAppearWithoutARestart() throws {
        let d = try RunningDaemon(config: "[images]\npath = $IMAGES\n[autoplay]\nenabled = false\n")
        try d.addImage("img1.jpg", from: "01-mountains.jpg")
        try d.addImage("img2.jpg", from: "02-sunset.jpg")
        try d.start()
        d.waitFor("start") { $0.contains("images: 2 in ") }
        try d.addImage("img10.jpg", from: "03-portrait.jpg")
        d.waitFor("the added file") { $0.contains("<6>images: 3 now, showing ") }
        // The current image (the first) stays on screen.
        #expect(d.log.contains("images: 3 now, showing \(d.folder.appendingPathComponent("images/img1.jpg").path)"))
        try FileManager.default.removeItem(at: d.folder.appendingPathComponent("images/img2.jpg"))
        d.waitFor("the removed file") { $0.contains("<6>images: 2 now") }
        #expect(d.stop() == 0)
    }

    @Test func aBrokenFileIsSkippedWithOneLineAndTheCarouselGoesOn() throws {
        let d = try RunningDaemon(config: "[images]\npath = $IMAGES\n[autoplay]\ninterval = 0.3\ntransition = 0.1\n")
        try d.addImage("1.jpg", from: "01-mountains.jpg")
        try Data("this is not a picture".utf8).write(to: d.folder.appendingPathComponent("images/2.jpg"))
        try d.addImage("3.webp", from: "05-glow.webp")
        try d.start()
        d.waitFor("the skip line") { $0.contains("<4>skipping ") && $0.contains("2.jpg") }
        // Autoplay keeps going over the remaining pictures.
        d.waitFor("two images left") { $0.contains("<6>images: 2 now") }
        let skips = d.log.split(separator: "\n").filter { $0.contains("skipping") && $0.contains("2.jpg") }
        #expect(skips.count == 1)
        #expect(d.process.isRunning)
        #expect(d.stop() == 0)
    }

    /// A damaged HEIC on which Debian 12's libheif 1.15 itself aborted (the
    /// heif fuzz target found it; Fuzz/libheif-crashes), and which its
    /// security update 1.15.1-1+deb12u3 refuses with an error: decoded in the
    /// daemon's helper process, it costs one skip line, not the daemon, in
    /// whichever way libheif refuses it.
    @Test func aHEICThatCrashedLibheifIsSkippedWithOneLine() throws {
        let d = try RunningDaemon(config: "[images]\npath = $IMAGES\n[autoplay]\ninterval = 0.3\ntransition = 0.1\n")
        try d.addImage("1.jpg", from: "01-mountains.jpg")
        try FileManager.default.copyItem(at: repositoryRoot.appendingPathComponent("Fuzz/libheif-crashes/threads-per-tile.heic"),
                                         to: d.folder.appendingPathComponent("images/2.heic"))
        try d.addImage("3.webp", from: "05-glow.webp")
        try d.start()
        let skip = "<4>skipping \(d.folder.appendingPathComponent("images/2.heic").path): "
        d.waitFor("the skip line") { $0.contains(skip) }
        d.waitFor("two images left") { $0.contains("<6>images: 2 now") }
        let lines = d.log.split(separator: "\n").filter { $0.contains("2.heic") }
        #expect(lines.count == 1, "\(lines)")
        #expect(d.process.isRunning)
        #expect(d.stop() == 0)
    }

    /// The helper killed while it decodes (DecodingProcess.TestFault: a HEIC
    /// carrying the marker, the variable set in the daemon's environment):
    /// one skip line naming the crash, the daemon runs on, the other HEIC
    /// and the other pictures show.
    @Test func aHelperKilledMidDecodeIsOneSkipLine() throws {
        let d = try RunningDaemon(config: "[images]\npath = $IMAGES\n[autoplay]\ninterval = 0.3\ntransition = 0.1\n")
        d.process.environment?[DecodingProcess.TestFault.variable] = "SIGSEGV"
        try d.addImage("1.jpg", from: "01-mountains.jpg")
        let heic = try Data(contentsOf: repositoryRoot.appendingPathComponent("Tests/CarouselImagingTests/Fixtures/quadrants.heic"))
        try Data(DecodingProcess.TestFault.marked([UInt8](heic))).write(to: d.folder.appendingPathComponent("images/2.heic"))
        try heic.write(to: d.folder.appendingPathComponent("images/3.heic"))
        try d.addImage("4.webp", from: "05-glow.webp")
        try d.start()
        d.waitFor("the skip line") {
            $0.contains("<4>skipping \(d.folder.appendingPathComponent("images/2.heic").path): corrupt HEIF data: "
                        + "libheif crashed on it (SIGSEGV in the process that decodes it; carouseld runs on)")
        }
        d.waitFor("three images left") { $0.contains("<6>images: 3 now") }
        let lines = d.log.split(separator: "\n").filter { $0.contains("2.heic") }
        #expect(lines.count == 1, "\(lines)")
        #expect(!d.log.contains("3.heic:"), "the unmarked HEIC was skipped")
        #expect(d.process.isRunning)
        #expect(d.stop() == 0)
    }

    /// A copy in progress (scp, a USB stick) shows an empty or truncated file
    /// first; once it is complete, the picture must appear.
    @Test func aFileSkippedWhileHalfWrittenIsShownOnceComplete() throws {
        let d = try RunningDaemon(config: "[images]\npath = $IMAGES\n[autoplay]\nenabled = false\n")
        try d.start()
        d.waitFor("start") { $0.contains("images: 0 in ") }
        let target = d.folder.appendingPathComponent("images/late.jpg")
        FileManager.default.createFile(atPath: target.path, contents: nil)
        d.waitFor("the empty file skipped") { $0.contains("<4>skipping \(target.path): empty file") }
        let picture = try Data(contentsOf: demoImages.appendingPathComponent("01-mountains.jpg"))
        let handle = try FileHandle(forWritingTo: target)
        try handle.write(contentsOf: picture)
        try handle.close()
        d.waitFor("the picture") { $0.contains("first picture on screen") }
        #expect(d.stop() == 0)
    }

    @Test func atRestTheLoopSleeps() throws {
        let d = try RunningDaemon(config: "[images]\npath = $IMAGES\n[autoplay]\nenabled = false\n")
        try d.addImage("a.jpg", from: "01-mountains.jpg")
        try d.start()
        // Wait for the state that ends all activity (the picture decoded and on
        // screen), not for a guessed quiet period: under load a decode is slow.
        d.waitFor("the first picture") { $0.contains("first picture on screen") }
        // Then let the loop settle (RunningDaemon.settle), and count its wake-ups.
        #expect(d.settle(), "the loop never came to rest")
        // The daemon watches the mount table (a pictures folder on a USB stick
        // going away): MountTests, running beside this in a full run, mount and
        // unmount, which rightly wakes it. A window in which the mount table
        // changed is measured again.
        // /proc/self/mounts polls POLLPRI once the table changed since it was
        // last read, however briefly (a mount and its unmount both count).
        let watch = open("/proc/self/mounts", O_RDONLY | O_CLOEXEC)
        defer { close(watch) }
        func readMounts() {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            _ = lseek(watch, 0, SEEK_SET)
            while buffer.withUnsafeMutableBytes({ read(watch, $0.baseAddress, $0.count) }) > 0 {}
        }
        func mountsChanged() -> Bool {
            var p = pollfd(fd: watch, events: Int16(POLLPRI), revents: 0)
            return poll(&p, 1, 0) > 0 && p.revents & Int16(POLLPRI | POLLERR) != 0
        }
        // A loaded full run can also finish the last of the start's work late
        // (a read blocked on a busy disk shows no CPU time): a window with a
        // wake-up is measured again, a few times. A loop that wakes by itself
        // at rest (a timer, a poll) wakes in every window and fails.
        var before: Int?
        var after: Int?
        for _ in 0..<6 {
            readMounts()
            before = d.loopWakeups
            usleep(1_500_000)
            after = d.loopWakeups
            if after == before, !mountsChanged() { break }
            usleep(500_000)
        }
        #expect(after == before, "the loop woke up with nothing to do")
        #expect(d.stop() == 0)
    }
}
