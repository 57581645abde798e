import CarouselDisplay
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// The display's smoke test (`carouseld drm-test`): page-flips a moving
/// colour bar through the DRM backend, as the daemon does (acquire, write
/// rows, present, wait for the flip), optionally switches modes, re-reads
/// the connector, shows scan-out windows of longer buffers and times window
/// moves against frame copies, then restores the console. The VM tests read
/// its measurements.
public struct DRMFlipTest {
    public var device: String?
    public var connector: String?
    public var mode: DisplayModeRequest?
    public var api = DRMAPI.auto
    /// Frames to flip.
    public var frames = 120
    /// Keep the last frame on screen this long before restoring.
    public var holdMilliseconds = 0
    /// Keep the device open this long after restoring.
    public var afterRestoreMilliseconds = 0
    /// Halfway through, switch to this mode (as a configuration reload would).
    public var switchMode: DisplayModeRequest?
    /// After the frames, re-read the connector as on a hotplug event.
    public var reprobe = false
    /// Present one more frame and restore at once, without waiting for its flip.
    public var restoreInFlight = false
    /// Flip as the daemon does (`DRMBackend.flipsInCommitWithoutVblank`):
    /// where the CRTC has no vblank, blocking commits without events. Off,
    /// every flip waits for its event, whatever the driver.
    public var flipsInCommit = false
    /// After the frames, ask for buffers this many pixels longer along `windowAxis`.
    public var windowRoom: Int?
    public var windowAxis = ScanoutAxis.horizontal
    /// The windows to show of the pattern.
    public var windows: [PixelPoint] = [.zero]
    /// After each window, wait for a line on standard input.
    public var step = false
    /// Let the kernel, not the backend, refuse windows outside the buffer.
    public var uncheckedWindows = false
    /// Window moves (and frame copies) to time.
    public var measureMoves = 0
    /// After the windows, switch to this mode and show windows again.
    public var windowSwitchMode: DisplayModeRequest?
    /// Wait up to this long for a DRM device or a display.
    public var waitSeconds = 0

    public init() {}

    /// A value on drm-test's command line that cannot be used; `message`
    /// names the option, what it takes and what it got.
    public struct OptionError: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// The test drm-test's command line asks for, from its options as typed:
    /// modes as `WIDTHxHEIGHT[@HZ]`, `api` auto, atomic or legacy,
    /// `windowAxis` horizontal or vertical, `windows` as `X,Y;X,Y...`.
    /// Throws for the first value that cannot be used, in the order the
    /// command has always checked them (switch mode, mode, api, frames,
    /// window axis, windows, moves, window switch mode).
    public init(device: String?, connector: String?, mode: String?, api: String, frames: Int,
                holdMilliseconds: Int, afterRestoreMilliseconds: Int, switchMode: String?, reprobe: Bool,
                restoreInFlight: Bool, windowRoom: Int?, windowAxis: String, windows: String, step: Bool,
                uncheckedWindows: Bool, measureMoves: Int, windowSwitchMode: String?,
                waitSeconds: Int) throws(OptionError) {
        func parsedMode(_ text: String?, _ option: String) throws(OptionError) -> DisplayModeRequest? {
            guard let text else { return nil }
            guard let request = DisplayModeRequest(text) else {
                throw OptionError(message: "--\(option): expected WIDTHxHEIGHT or WIDTHxHEIGHT@HZ, not '\(text)'")
            }
            return request
        }
        self.switchMode = try parsedMode(switchMode, "switch-mode")
        self.mode = try parsedMode(mode, "mode")
        guard let api = DRMAPI(rawValue: api) else {
            throw OptionError(message: "--api: expected auto, atomic or legacy, not '\(api)'")
        }
        self.api = api
        guard frames >= 1 else { throw OptionError(message: "--frames: at least 1") }
        self.frames = frames
        guard let axis = ScanoutAxis(rawValue: windowAxis) else {
            throw OptionError(message: "--window-axis: expected horizontal or vertical, not '\(windowAxis)'")
        }
        self.windowAxis = axis
        guard let points = Self.windows(windows) else {
            throw OptionError(message: "--windows: expected X,Y;X,Y..., not '\(windows)'")
        }
        self.windows = points
        guard measureMoves >= 0 else { throw OptionError(message: "--measure-moves: at least 0") }
        self.measureMoves = measureMoves
        self.windowSwitchMode = try parsedMode(windowSwitchMode, "window-switch-mode")
        self.device = device
        self.connector = connector
        self.holdMilliseconds = holdMilliseconds
        self.afterRestoreMilliseconds = afterRestoreMilliseconds
        self.reprobe = reprobe
        self.restoreInFlight = restoreInFlight
        self.windowRoom = windowRoom
        self.step = step
        self.uncheckedWindows = uncheckedWindows
        self.waitSeconds = waitSeconds
    }

    /// `X,Y;X,Y...` as points; nil when any is not two integers, or there are none.
    static func windows(_ text: String) -> [PixelPoint]? {
        var points: [PixelPoint] = []
        for item in text.split(separator: ";") {
            let xy = item.split(separator: ",")
            guard xy.count == 2, let x = Int(xy[0]), let y = Int(xy[1]) else { return nil }
            points.append(PixelPoint(x: x, y: y))
        }
        return points.isEmpty ? nil : points
    }

    /// Opens the display (waiting for one up to `waitSeconds`), flips the
    /// frames and what the options ask for, restores the console, and
    /// returns the measurements; nil after a failure (logged).
    public func run() -> [JSONField]? {
        let backend: DRMBackend
        do {
            backend = try openBackend()
        } catch {
            guard waitSeconds > 0, DRMBackend.isWorthWaiting(error) else {
                log(.error, "drm-test: \(error)")
                return nil
            }
            log(.warning, "drm-test: \(error); waiting up to \(waitSeconds) s for a display")
            let deadline = MonotonicClock.now() + Int64(waitSeconds) * 1_000_000
            guard let found = DRMBackend.waitForConnector(device: device, connector: connector, interval: 0.5,
                                                          shouldStop: { MonotonicClock.now() > deadline }) else {
                log(.error, "drm-test: still no display after \(waitSeconds) s")
                return nil
            }
            log(.info, "drm-test: found \(found)")
            do {
                backend = try openBackend()
            } catch {
                log(.error, "drm-test: \(error)")
                return nil
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
                    let changed = try backend.changeMode(to: switchMode)
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
            return nil
        }
        let elapsed = Double(MonotonicClock.now() - start) / 1_000_000
        if reprobe {
            do {
                reprobed = try backend.reprobe()
                log(.info, "drm-test: reprobe: connected \(backend.isConnected), re-modeset \(reprobed!)")
            } catch {
                log(.error, "drm-test: reprobe: \(error)")
                backend.restore()
                return nil
            }
        }
        var windowFields: [JSONField] = []
        if let windowRoom {
            do {
                windowFields = try showWindows(on: backend, room: windowRoom)
            } catch {
                log(.error, "drm-test: \(error)")
                backend.restore()
                return nil
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
                return nil
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
            JSONField("vblank", .bool(backend.hasVblank)),
            JSONField("flips_in_commit", .bool(backend.flipsInCommit)),
        ]
        if let switched { fields.append(JSONField("switch_remodeset", .bool(switched))) }
        if let reprobed { fields.append(JSONField("reprobe_remodeset", .bool(reprobed))) }
        fields += windowFields
        return fields
    }

    /// Asks for window room, shows each of `windows` of the window pattern
    /// (refusals are results, not failures), asks for the room once more,
    /// and with `measureMoves` times window moves against frame copies.
    private func showWindows(on backend: DRMBackend, room: Int) throws(DisplayError) -> [JSONField] {
        let axis = windowAxis
        backend.checksWindowBounds = !uncheckedWindows
        let granted = backend.reserveWindowRoom(room, along: axis)
        log(.info, "drm-test: asked for \(room) pixels of room along \(axis.rawValue): granted \(granted)")
        var filled: Set<[Int]> = []  // [generation, index] of buffers holding the pattern
        func nextBuffer() throws(DisplayError) -> ScanoutBuffer {
            guard let b = backend.acquire() else {
                throw DisplayError("no free buffer for a window", hint: "a bug in the backend's flip bookkeeping")
            }
            if filled.insert([b.generation, b.index]).inserted { WindowPattern.fill(b) }
            return b
        }
        var extent = backend.acquire()?.extent
        var results: [JSONValue] = []
        /// Says a window is on screen (or refused) and, with --step, waits for the host.
        func announce(_ window: PixelPoint, shown: Bool) {
            // Straight to the descriptor: print's buffer would hold it back from a pipe.
            writeAll(1, "window \(window.x) \(window.y) \(shown ? "shown" : "refused")\n")
            if step { _ = readLine() }
        }
        for window in windows {
            let buffer = try nextBuffer()
            extent = buffer.extent
            var result: [JSONField] = [JSONField("x", .int(window.x)), JSONField("y", .int(window.y))]
            var shown = false
            do {
                try backend.present(buffer, window: window)
                try backend.waitForFlip(timeoutMilliseconds: 2000)
                shown = true
                result += [JSONField("shown", .bool(true)), JSONField("generation", .int(buffer.generation))]
                log(.info, "drm-test: window \(window) of the \(buffer.extent) buffer shown")
            } catch where error.reason == .windowRefused || error.reason == .other {
                // Refusals are what some windows are here to show.
                result += [JSONField("shown", .bool(false)), JSONField("generation", .int(buffer.generation)),
                           JSONField("error", .string(error.description)),
                           JSONField("reason", .string(error.reason == .windowRefused ? "window_refused" : "other"))]
                log(.info, "drm-test: window \(window) refused: \(error)")
            }
            results.append(.fields(result))
            announce(window, shown: shown)
        }
        var fields: [JSONField] = [
            JSONField("room_granted", .int(granted)),
            JSONField("extent", .string(extent.map { "\($0)" } ?? "none")),
            JSONField("windows", .array(results)),
        ]
        let again = backend.reserveWindowRoom(room, along: axis)
        fields.append(JSONField("room_granted_again", .int(again)))
        if measureMoves > 0 { fields += try measure(on: backend, axis: axis, announce: announce) }
        if let windowSwitchMode {
            // A new mode makes new buffers: panel-sized, a new generation, no
            // room until asked again.
            let before = backend.generation
            let changed = try backend.changeMode(to: windowSwitchMode)
            let b = try nextBuffer()
            fields += [JSONField("switch_remodeset", .bool(changed)), JSONField("generation_before_switch", .int(before)),
                       JSONField("switch_generation", .int(b.generation)), JSONField("switch_extent", .string("\(b.extent)"))]
            try backend.present(b, window: .zero)
            try backend.waitForFlip(timeoutMilliseconds: 2000)
            announce(.zero, shown: true)
            let granted = backend.reserveWindowRoom(room, along: axis)
            fields.append(JSONField("switch_room_granted", .int(granted)))
            if granted > 0 {
                let window = axis == .horizontal ? PixelPoint(x: 1, y: 0) : PixelPoint(x: 0, y: 1)
                let b = try nextBuffer()
                fields.append(JSONField("switch_room_extent", .string("\(b.extent)")))
                try backend.present(b, window: window)
                try backend.waitForFlip(timeoutMilliseconds: 2000)
                announce(window, shown: true)
            }
        }
        return fields
    }

    /// Times `measureMoves` window moves (present and its flip, the pattern
    /// already in the buffers) against as many full-frame copies into a
    /// buffer, what a copying slide pays per frame at the least.
    private func measure(on backend: DRMBackend, axis: ScanoutAxis,
                         announce: (PixelPoint, Bool) -> Void) throws(DisplayError) -> [JSONField] {
        guard let first = backend.acquire() else { throw DisplayError("no free buffer to measure with") }
        let size = first.size, extent = first.extent
        let room = axis == .horizontal ? extent.width - size.width : extent.height - size.height
        guard room > 0 else {
            log(.warning, "drm-test: no window room left to measure moves in")
            return [JSONField("measured_moves", .int(0))]
        }
        var filled: Set<[Int]> = []
        var present: [Double] = [], flip: [Double] = [], copy: [Double] = []
        var last = PixelPoint.zero
        for i in 0..<measureMoves {
            guard let b = backend.acquire() else { throw DisplayError("no free buffer for move \(i)") }
            if filled.insert([b.generation, b.index]).inserted { WindowPattern.fill(b) }
            let offset = (i * 37 + 1) % (room + 1)
            let window = axis == .horizontal ? PixelPoint(x: offset, y: 0) : PixelPoint(x: 0, y: offset)
            let t0 = MonotonicClock.now()
            try backend.present(b, window: window)
            let t1 = MonotonicClock.now()
            try backend.waitForFlip(timeoutMilliseconds: 2000)
            let t2 = MonotonicClock.now()
            present.append(Double(t1 - t0))
            flip.append(Double(t2 - t0))
            last = window
        }
        // The frame a copying slide would write: in ordinary memory, copied
        // row after row into the scanout buffer.
        let frame = [UInt32](unsafeUninitializedCapacity: size.width * size.height) { p, n in
            for y in 0..<size.height { for x in 0..<size.width { p[y * size.width + x] = WindowPattern.color(x: x + 1, y: y) } }
            n = size.width * size.height
        }
        guard let target = backend.acquire() else { throw DisplayError("no free buffer to copy into") }
        frame.withUnsafeBytes { source in
            for _ in 0..<measureMoves {
                let t0 = MonotonicClock.now()
                for y in 0..<size.height {
                    (target.pixels + y * target.stride).copyMemory(from: source.baseAddress! + y * size.width * 4,
                                                                    byteCount: size.width * 4)
                }
                copy.append(Double(MonotonicClock.now() - t0))
            }
        }
        func mean(_ v: [Double]) -> Double { v.reduce(0, +) / Double(v.count) }
        // The median too: under emulation and on a shared host a few slow
        // samples (the vCPU descheduled) pull a mean far from the typical cost.
        func median(_ v: [Double]) -> Double { v.sorted()[v.count / 2] }
        func rounded(_ x: Double, _ places: Double) -> JSONValue { .double((x * places).rounded() / places) }
        let (p, f, c) = (mean(present), mean(flip), mean(copy))
        let (pm, fm, cm) = (median(present), median(flip), median(copy))
        // The last move's window is still on screen (the copies went into
        // the other buffer), with more framebuffers made and removed than
        // the backend keeps: none on screen was removed.
        announce(last, true)
        log(.info, "drm-test: \(measureMoves) window moves: present \(Int(p)) us, with its flip \(Int(f)) us; a frame copy \(Int(c)) us")
        return [
            JSONField("measured_moves", .int(measureMoves)),
            JSONField("window_present_us_mean", rounded(p, 10)),
            JSONField("window_flip_us_mean", rounded(f, 10)),
            JSONField("frame_copy_us_mean", rounded(c, 10)),
            JSONField("window_to_copy_ratio", rounded(p / c, 10_000)),
            JSONField("window_flip_to_copy_ratio", rounded(f / c, 10_000)),
            JSONField("window_present_us_median", rounded(pm, 10)),
            JSONField("window_flip_us_median", rounded(fm, 10)),
            JSONField("frame_copy_us_median", rounded(cm, 10)),
            JSONField("window_to_copy_ratio_median", rounded(pm / cm, 10_000)),
            JSONField("window_flip_to_copy_ratio_median", rounded(fm / cm, 10_000)),
        ]
    }

    private func openBackend() throws(DisplayError) -> DRMBackend {
        let backend = try DRMBackend(device: device, connector: connector, mode: mode, api: api)
        backend.flipsInCommitWithoutVblank = flipsInCommit
        return backend
    }
}

private func sleep(milliseconds: Int) {
    _ = try? systemCall("poll") { poll(nil, 0, Int32(clamping: milliseconds)) }
}
