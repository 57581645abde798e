import ArgumentParser
import CarouselConfig
import CarouselDaemon
import CarouselDRM
import CarouselDisplay
import CarouselPlatform

#if canImport(Glibc)
import Glibc
#endif

/// The display's smoke test: page-flips a moving colour bar through the DRM
/// backend, as the daemon will (acquire, write rows, present, wait for the
/// descriptor, dispatch), then restores the console and prints one JSON line.
struct DRMTest: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drm-test",
        abstract: "Page-flip a moving colour bar on the display, print measurements as JSON, restore the console.",
        discussion: """
        Output (one line): frames, api, device, driver, connector, mode (the last), panel_orientation, \
        flip_interval_ms_mean/max (between the kernel's flip timestamps), \
        flip_latency_ms_mean/max (present to flip event), draw_ms_mean, elapsed_s, flips_completed, \
        and switch_remodeset/reprobe_remodeset with --switch-mode/--reprobe. \
        Progress lines go to standard error ('drm-test: drawing', 'holding', 'restored').
        """,
        shouldDisplay: false
    )

    @Option(help: "The DRM card (default: the first with a connected display).")
    var device: String?

    @Option(help: "The connector, such as HDMI-A-1 (default: the first connected).")
    var connector: String?

    @Option(help: "WIDTHxHEIGHT or WIDTHxHEIGHT@HZ (default: the preferred mode).")
    var mode: String?

    @Option(help: "auto, atomic or legacy.")
    var api: String = "auto"

    @Option(help: "Frames to flip.")
    var frames: Int = 120

    @Option(name: .customLong("hold-ms"), help: "Keep the last frame on screen this long before restoring.")
    var holdMilliseconds: Int = 0

    @Option(name: .customLong("after-restore-ms"),
            help: "Keep the device open this long after restoring (shows that the restore, not the kernel's last close, brought the console back).")
    var afterRestoreMilliseconds: Int = 0

    @Option(name: .customLong("switch-mode"),
            help: "Halfway through, switch to this mode (WIDTHxHEIGHT[@HZ]) as a configuration reload would.")
    var switchMode: String?

    @Flag(help: "After the frames, re-read the connector as on a hotplug event and report whether it re-modeset.")
    var reprobe = false

    @Flag(name: .customLong("restore-in-flight"),
          help: "Present one more frame and restore at once, without waiting for its flip (restore must wait for it).")
    var restoreInFlight = false

    @Option(name: .customLong("wait-seconds"),
            help: "If there is no DRM device or no display yet, wait up to this long for one (as the daemon does at boot).")
    var waitSeconds: Int = 0

    func validate() throws {
        if let switchMode, ModeRequest(switchMode) == nil {
            throw ValidationError("--switch-mode: expected WIDTHxHEIGHT or WIDTHxHEIGHT@HZ, not '\(switchMode)'")
        }
        if let mode, ModeRequest(mode) == nil { throw ValidationError("--mode: expected WIDTHxHEIGHT or WIDTHxHEIGHT@HZ, not '\(mode)'") }
        if DRMAPI(rawValue: api) == nil { throw ValidationError("--api: expected auto, atomic or legacy, not '\(api)'") }
        if frames < 1 { throw ValidationError("--frames: at least 1") }
    }

    func run() throws {
        let backend: DRMBackend
        do {
            backend = try openBackend()
        } catch {
            guard waitSeconds > 0, DRMBackend.isWorthWaiting(error) else {
                log(.error, "drm-test: \(error)")
                throw ExitCode(1)
            }
            log(.warning, "drm-test: \(error); waiting up to \(waitSeconds) s for a display")
            let deadline = MonotonicClock.now() + Int64(waitSeconds) * 1_000_000
            guard let found = DRMBackend.waitForConnector(device: device, connector: connector, interval: 0.5,
                                                          shouldStop: { MonotonicClock.now() > deadline }) else {
                log(.error, "drm-test: still no display after \(waitSeconds) s")
                throw ExitCode(1)
            }
            log(.info, "drm-test: found \(found)")
            do {
                backend = try openBackend()
            } catch {
                log(.error, "drm-test: \(error)")
                throw ExitCode(1)
            }
        }
        log(.info, "drm-test: drawing \(frames) frames on \(backend.summary)")
        var painter = BarPainter()
        var intervals: [Double] = [], latencies: [Double] = [], drawTimes: [Double] = []
        var lastFlip: Int64? = backend.lastFlipMicroseconds
        var switched: Bool? = nil, reprobed: Bool? = nil
        let start = MonotonicClock.now()
        do {
            for frame in 0..<frames {
                if frame == frames / 2, let switchMode {
                    let changed = try backend.changeMode(to: ModeRequest(switchMode)?.displayModeRequest)
                    log(.info, "drm-test: switched to \(backend.modeName) (re-modeset: \(changed))")
                    switched = changed
                    lastFlip = nil
                }
                guard let buffer = backend.acquire() else {
                    throw DisplayError("no free buffer for frame \(frame)", hint: "a bug in the backend's flip bookkeeping")
                }
                let t0 = MonotonicClock.now()
                painter.draw(frame: frame, into: buffer)
                let t1 = MonotonicClock.now()
                try backend.present(buffer)
                try backend.waitForFlip(timeoutMilliseconds: 2000)
                let t2 = MonotonicClock.now()
                drawTimes.append(Double(t1 - t0) / 1000)
                latencies.append(Double(t2 - t1) / 1000)
                if let previous = lastFlip, let now = backend.lastFlipMicroseconds { intervals.append(Double(now - previous) / 1000) }
                lastFlip = backend.lastFlipMicroseconds
            }
        } catch {
            log(.error, "drm-test: \(error)")
            backend.restore()
            throw ExitCode(1)
        }
        let elapsed = Double(MonotonicClock.now() - start) / 1_000_000
        if reprobe {
            do {
                reprobed = try backend.reprobe()
                log(.info, "drm-test: reprobe: connected \(backend.isConnected), re-modeset \(reprobed!)")
            } catch {
                log(.error, "drm-test: reprobe: \(error)")
                backend.restore()
                throw ExitCode(1)
            }
        }
        if holdMilliseconds > 0 {
            log(.info, "drm-test: holding the last frame for \(holdMilliseconds) ms")
            sleep(milliseconds: holdMilliseconds)
        }
        if restoreInFlight, let buffer = backend.acquire() {
            painter.draw(frame: frames, into: buffer)
            do {
                try backend.present(buffer)
            } catch {
                log(.error, "drm-test: \(error)")
                backend.restore()
                throw ExitCode(1)
            }
        }
        backend.restore()
        log(.info, "drm-test: restored")
        if afterRestoreMilliseconds > 0 { sleep(milliseconds: afterRestoreMilliseconds) }

        func mean(_ v: [Double]) -> Double { v.isEmpty ? 0 : v.reduce(0, +) / Double(v.count) }
        /// Milliseconds (or seconds) with three decimals.
        func fixed(_ x: Double) -> JSONValue { .double((x * 1000).rounded() / 1000) }
        var fields: [JSONField] = [
            JSONField("frames", .int(frames)),
            JSONField("api", .string(backend.api.rawValue)),
            JSONField("device", .string(backend.devicePath)),
            JSONField("driver", .string(backend.driverName)),
            JSONField("connector", .string(backend.connectorName)),
            JSONField("mode", .string(backend.modeName)),
            JSONField("panel_orientation", .string(backend.panelRotation.rawValue)),
            JSONField("flip_interval_ms_mean", fixed(mean(intervals))),
            JSONField("flip_interval_ms_max", fixed(intervals.max() ?? 0)),
            JSONField("flip_latency_ms_mean", fixed(mean(latencies))),
            JSONField("flip_latency_ms_max", fixed(latencies.max() ?? 0)),
            JSONField("draw_ms_mean", fixed(mean(drawTimes))),
            JSONField("elapsed_s", fixed(elapsed)),
            JSONField("flips_completed", .int(Int(backend.flipsCompleted))),
        ]
        if let switched { fields.append(JSONField("switch_remodeset", .bool(switched))) }
        if let reprobed { fields.append(JSONField("reprobe_remodeset", .bool(reprobed))) }
        print(JSONValue.fields(fields).encoded)
    }

    private func openBackend() throws(DisplayError) -> DRMBackend {
        try DRMBackend(device: device, connector: connector, mode: mode.flatMap(ModeRequest.init)?.displayModeRequest,
                       api: DRMAPI(rawValue: api)!)
    }
}

private func sleep(milliseconds: Int) {
    _ = try? systemCall("poll") { poll(nil, 0, Int32(clamping: milliseconds)) }
}
