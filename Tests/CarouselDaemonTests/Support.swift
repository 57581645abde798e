// What the daemon tests share: the offscreen daemon on a manual clock (the
// harness of the tier-3 units), the executables built next to the test
// bundle, and the demo pictures.

import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselDaemon
import CarouselDisplay
import CarouselLoop
import CarouselImaging
import CarouselPlatform
import CarouselRender
import Dispatch
import Foundation
import Testing

/// The executable `name` built next to this test bundle, or the one `$variable` names.
func builtExecutable(_ name: String, variable: String) -> String? {
    let fm = FileManager.default
    if let env = ProcessInfo.processInfo.environment[variable], fm.isExecutableFile(atPath: env) { return env }
    guard let exe = try? fm.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
    var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = dir.appendingPathComponent(name).path
        if fm.isExecutableFile(atPath: candidate) { return candidate }
        dir = dir.deletingLastPathComponent()
    }
    return nil
}

/// The `carouseld` executable built next to this test bundle, or `$CAROUSELD_BIN`.
let daemonBinary: String? = builtExecutable("carouseld", variable: "CAROUSELD_BIN")

/// The repository, found from this file.
let repositoryRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// The source pictures of the repository's demo.
let demoImages: URL = repositoryRoot.appendingPathComponent("scripts/demo/images")

/// A daemon on an offscreen panel with a manual clock and its own image folder.
final class OffscreenDaemon {
    let folder: URL
    var now: Int64 = 1_000_000_000
    let backend: OffscreenBackend
    let daemon: Daemon

    init(images: [String] = ["01-mountains.jpg", "02-sunset.jpg", "04-panels.png"], panel: PixelSize = PixelSize(width: 320, height: 200),
         physicalSize: PhysicalSize? = nil, ini: String = "", backend given: DisplayBackend? = nil,
         reopen: (@Sendable (Configuration) throws -> DisplayBackend)? = nil, stateDirectory: String? = nil,
         localClock: LocalClock? = nil, backlightRoot: String? = nil, prepare: ItemCache.Prepare? = nil,
         controlSocket: Bool = false, runningClock: Bool = false, folderExtras: ((URL) throws -> Void)? = nil,
         boardMemory: Int = 0) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("carouseld-room-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("images"), withIntermediateDirectories: true)
        for name in images {
            // A name may put the demo picture in a subfolder: "trip/02-sunset.jpg".
            let target = folder.appendingPathComponent("images/\(name)")
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: demoImages.appendingPathComponent(target.lastPathComponent), to: target)
        }
        // Pictures a test makes itself, in the folder before the daemon lists it.
        try folderExtras?(folder.appendingPathComponent("images"))
        let path = folder.appendingPathComponent("c.ini").path
        let text = "[images]\npath = \(folder.appendingPathComponent("images").path)\n[autoplay]\nenabled = false\n" + ini
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let config = try readConfiguration(path)
        backend = OffscreenBackend(size: panel, physicalSize: physicalSize)
        var options = Daemon.Options()
        options.reopenDisplay = reopen
        options.input = false
        options.controlSocket = controlSocket
        options.signals = false
        options.hotplug = false
        options.stateDirectory = stateDirectory
        options.localClock = localClock
        options.backlightRoot = backlightRoot
        options.prepare = prepare
        // `cache_mb = auto` keeps a share of this for pictures paged past:
        // none unless a test asks, whatever the host's memory.
        options.boardMemory = boardMemory
        options.realTime = false
        let clock = Clock()
        clock.now = now
        self.clock = clock
        // A running clock moves on a microsecond at every reading, as a real
        // one does between the start of a pass and a service asked for its deadline.
        daemon = try Daemon(config: config, path: path, backend: given ?? backend, options: options, clock: {
            if runningClock { clock.now += 1 }
            return clock.now
        })
    }

    final class Clock: @unchecked Sendable { var now: Int64 = 0 }
    private let clock: Clock

    /// Moves the clock on and runs the loop's pass.
    func advance(ms: Int64) {
        now += ms * 1000
        clock.now = now
        daemon.step(now: now)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }
}

extension OffscreenDaemon {
    /// Every pixel of the screen, folded into one number: the same picture
    /// gives the same number.
    var screenDigest: UInt64 {
        var h: UInt64 = 14_695_981_039_346_656_037
        let size = backend.panelSize
        for y in 0..<size.height {
            for x in 0..<size.width {
                h = (h ^ UInt64(backend.pixel(x: x, y: y))) &* 1_099_511_628_211
            }
        }
        return h
    }

    /// Runs the loop until the pictures are decoded and drawn.
    func showFirstPicture() {
        advance(ms: 0)
        daemon.settleDecodes()
        for _ in 0..<5 { advance(ms: 20) }
    }

    /// A quick swipe from right to left through the loop's input path (a
    /// page forward when the display is on).
    func swipe() {
        var t = now
        daemon.carryOut(.touch(.down(id: 0, at: .init(x: 250, y: 100)), time: t))
        for k in 1...5 {
            t += 16_000
            daemon.carryOut(.touch(.move(id: 0, to: .init(x: 250 - Double(k) * 40, y: 100)), time: t))
        }
        daemon.carryOut(.touch(.up(id: 0), time: t))
        now = t
    }

    /// A tap in the middle of the screen, through the loop's input path.
    func tap() {
        daemon.carryOut(.touch(.down(id: 3, at: .init(x: 160, y: 100)), time: now))
        advance(ms: 50)
        daemon.carryOut(.touch(.up(id: 3), time: now))
    }

    func answer(_ line: String) -> ControlReply {
        guard case let .success(request) = ControlRequest.parse(line: line) else { return .error("unparsed: \(line)") }
        return daemon.answer(request, grant: .controlSocket)
    }

    var index: JSONValue? { daemon.status()["index"] }
}

extension OffscreenDaemon {
    /// A few frames, a swipe and a command under whatever is configured now.
    func exercise() {
        for _ in 0..<3 {
            advance(ms: 20)
            daemon.settleDecodes()
        }
        var t = now
        daemon.feed(.down(id: 0, at: .init(x: 150, y: 100)), at: t)
        for k in 1...4 {
            t += 16_000
            daemon.feed(.move(id: 0, to: .init(x: 150 - Double(k) * 40, y: 100)), at: t)
        }
        daemon.feed(.up(id: 0), at: t)
        now = t
        _ = daemon.answer(.next, grant: .controlSocket)
        for _ in 0..<10 { advance(ms: 50) }
        _ = daemon.status()
    }
}

extension ItemCache {
    /// The real decode, each waiting until `gate` is signalled (once
    /// signalled, every decode runs).
    static func held(by gate: DispatchSemaphore) -> Prepare {
        { key, settings in
            gate.wait()
            gate.signal()
            return try ItemCache.prepare(key, settings: settings)
        }
    }
}
