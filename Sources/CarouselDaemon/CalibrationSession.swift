import CarouselCalibration
import CarouselConfig
import CarouselCore
import CarouselDRM
import CarouselDisplay
import CarouselImaging
import CarouselInput
import CarouselPlatform
import CarouselRender
#if canImport(Glibc)
import Glibc
#endif

/// What `carouseld calibrate` found: the touchscreen and its fitted matrix
/// (better than none at the check point).
public struct CalibrationOutcome {
    public let device: InputDeviceInfo
    public let matrix: CalibrationMatrix
}

/// Why a calibration stopped (said in one line).
struct CalibrationFailure: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// The calibration on the display and the touchscreen: targets shown one
/// after another through the DRM backend, touches read raw through
/// libinput (with the identity matrix, whatever is configured now),
/// libinput's matrix fitted by least squares and checked at the last
/// target. Progress lines go to standard output (`device`, `target`,
/// `touched`, `matrix`, `check`).
public struct CalibrationSession {
    public var seat: String
    /// The configured turn of the display (the panel's own is added).
    public var rotation: Rotation
    /// Seconds to wait for each target to be touched.
    public var timeout: Double

    public init(seat: String, rotation: Rotation, timeout: Double) {
        self.seat = seat
        self.rotation = rotation
        self.timeout = timeout
    }

    /// Runs it on `backend`; `signals` stop it. Nil after a failure: one
    /// error line, the display given back.
    public func run(on backend: DRMBackend, signals: Signals) -> CalibrationOutcome? {
        do {
            return try calibrate(backend, signals: signals)
        } catch {
            backend.restore()
            printError("carouseld: calibrate: \(error.message)")
            return nil
        }
    }

    private func calibrate(_ backend: DRMBackend, signals: Signals) throws(CalibrationFailure) -> CalibrationOutcome {
        let rotation = self.rotation.combined(with: backend.panelRotation.rotation)
        let panel = backend.panelSize
        let logical = rotation.logicalSize(panelWidth: panel.width, panelHeight: panel.height)
        let frame = Frame(width: logical.width, height: logical.height)

        let input: InputContext
        do {
            // Fractions of the device's extent: the space the matrix maps from.
            input = try InputContext(seat: seat, panelSize: .unit, log: InputLog.write)
            // libinput reports positions through the matrix it has (a udev
            // LIBINPUT_CALIBRATION_MATRIX among them): the fit needs them raw.
            try input.setCalibration(CalibrationMatrix.identity.values.map { Float($0) })
        } catch {
            throw CalibrationFailure("\(error)")
        }
        var devices: [InputDeviceInfo] = []
        var down: Set<Int> = []
        func read(into press: inout Press?, outcome: inout Press.Outcome?) throws(CalibrationFailure) {
            let events: [InputEvent]
            do {
                events = try input.dispatch()
            } catch {
                throw CalibrationFailure("\(error)")
            }
            for event in events {
                switch event {
                case let .deviceAdded(info) where info.capabilities.contains(.touch):
                    devices.append(info)
                case let .deviceRemoved(info) where devices.contains(where: { $0.id == info.id }):
                    throw CalibrationFailure("the touchscreen \(info.sysname) (\(info.name)) went away during calibration")
                case let .touchDown(slot, x, y, _):
                    down.insert(slot)
                    press?.down(slot: slot, x: x, y: y)
                case let .touchMotion(slot, x, y, _):
                    press?.motion(slot: slot, x: x, y: y)
                case let .touchUp(slot, _):
                    down.remove(slot)
                    if let o = press?.up(slot: slot) { outcome = o }
                case let .touchCancel(slot, _):
                    down.remove(slot)
                    if let o = press?.cancel(slot: slot) { outcome = o }
                default:
                    break
                }
            }
        }
        var none: Press? = nil, nothing: Press.Outcome? = nil
        try read(into: &none, outcome: &nothing)
        guard devices.count == 1, let device = devices.first else {
            if devices.isEmpty {
                throw CalibrationFailure("no touchscreen on \(seat); \(InputProbe.emptySeatHint(seat: seat))")
            }
            throw CalibrationFailure("\(devices.count) touchscreens on \(seat) (\(devices.map(\.sysname).joined(separator: ", "))): unplug all but the one to calibrate")
        }
        say("device \(JSONValue.quoted(device.name)) \(device.sysname)")

        let targets = CalibrationTargets.standard.targets
        var samples: [CalibrationSample] = []
        for (i, target) in targets.enumerated() {
            let p = CalibrationTargets.logicalPixels(target, width: logical.width, height: logical.height)
            var lines = [target.isCheck ? "Check: touch the centre of the cross" : "Touch the centre of the cross",
                         "\(i + 1) of \(targets.count)"]
            var attempt = 0
            while true {
                show(backend, frame, rotation: rotation, target: p, lines: lines)
                if attempt == 0 { say("target \(i + 1)/\(targets.count) at \(Int(p.x)) \(Int(p.y))") }
                attempt += 1
                var press: Press? = Press(alreadyDown: down)
                var outcome: Press.Outcome? = nil
                let deadline = MonotonicClock.now() + Int64(timeout * 1_000_000)
                while outcome == nil {
                    let left = deadline - MonotonicClock.now()
                    guard left > 0 else {
                        throw CalibrationFailure("no touch on target \(i + 1) within \(timeout.formattedSeconds) s (--timeout); is \(device.sysname) (\(device.name)) the touchscreen on this display?")
                    }
                    wait(for: [input.fileDescriptor, signals.fd.raw], microseconds: left)
                    if let signal = signals.read().first {
                        throw CalibrationFailure("stopped by signal \(signal) at target \(i + 1); nothing written")
                    }
                    try read(into: &press, outcome: &outcome)
                }
                switch outcome! {
                case let .pressed(raw, _):
                    say("touched \(i + 1)/\(targets.count) at \(fixed(raw.x)) \(fixed(raw.y))")
                    samples.append(CalibrationSample(
                        raw: raw, target: rotation.normalizedPanelPoint(p, panelWidth: panel.width, panelHeight: panel.height)))
                case let .spoiled(reason):
                    log(.warning, "calibrate: target \(i + 1): \(reason)")
                    lines = [reason, "\(i + 1) of \(targets.count)"]
                    continue
                }
                break
            }
        }

        let fitted = zip(targets, samples).filter { !$0.0.isCheck }.map(\.1)
        let check = zip(targets, samples).first { $0.0.isCheck }!.1
        let matrix: CalibrationMatrix
        do {
            matrix = try AffineFit.fit(fitted)
        } catch {
            throw CalibrationFailure("\(error)")
        }
        say("matrix \(matrix.text)")
        // Millimetres from the display's EDID if it has a plausible size,
        // else from the touchscreen's axes through the fit; else pixels.
        var unit = "mm"
        let size = backend.physicalSize.flatMap { PanelMillimetres.fromDisplay(widthMM: $0.widthMillimetres, heightMM: $0.heightMillimetres) }
            ?? device.physicalSize.flatMap { PanelMillimetres.fromDevice(width: $0.width, height: $0.height, matrix: matrix) }
            ?? { unit = "px"; return (Double(panel.width), Double(panel.height)) }()
        let result = CheckPointResult(matrix: matrix, sample: check, panelMillimetres: size)
        say("check \(CheckPointResult.format(result.calibratedMillimetres)) \(unit) uncalibrated \(CheckPointResult.format(result.uncalibratedMillimetres)) \(unit)")
        if unit == "px" { log(.warning, "calibrate: neither the display nor the touchscreen reports its size: the check point's error is in pixels") }
        guard !result.isWorseThanUncalibrated else { throw CalibrationFailure(result.refusal) }
        return CalibrationOutcome(device: device, matrix: matrix)
    }

    /// Draws the screen upright and shows it on the panel.
    private func show(_ backend: DRMBackend, _ frame: Frame, rotation: Rotation, target: Point, lines: [String]) {
        CalibrationScreen.draw(into: frame, target: target, lines: lines)
        do {
            guard let buffer = backend.acquire() else {
                throw DisplayError("no free buffer", hint: "a bug in the backend's flip bookkeeping")
            }
            Scanout.write(frame, rotation: rotation, to: buffer.pixels, stride: buffer.stride,
                          panelWidth: buffer.size.width, panelHeight: buffer.size.height)
            try backend.present(buffer)
            try backend.waitForFlip(timeoutMilliseconds: 2000)
        } catch {
            log(.warning, "calibrate: display: \(error)")
        }
    }
}

extension CalibrationSession {
    /// `carouseld calibrate` once its options are read: the DRM display
    /// `configuration` names opened, a session on it (Ctrl-C or a stop is
    /// read from a descriptor, not by a handler: the wait for a touch ends,
    /// the console comes back, nothing is written), and the matrix saved
    /// where `config` and `udevRule` say (`CalibrationOutcome.save`), unless
    /// `dryRun` or neither is given. The display is given back before it
    /// returns. The exit status: 0, or 1 after one error line.
    public static func runCommand(configuration: Configuration, timeout: Double, config: String?, udevRule: String?,
                                  dryRun: Bool) -> Int32 {
        let signals: Signals
        do {
            signals = try Signals([SIGINT, SIGTERM, SIGHUP])
        } catch {
            printError("carouseld: calibrate: \(error)")
            return 1
        }
        let backend: DRMBackend
        do {
            backend = try openDRMBackend(configuration)
        } catch {
            printError("carouseld: calibrate: \(error)")
            return 1
        }
        defer { backend.restore() }
        let session = CalibrationSession(seat: configuration.input.seat, rotation: configuration.rotation, timeout: timeout)
        guard let outcome = session.run(on: backend, signals: signals) else { return 1 }
        if dryRun || (config == nil && udevRule == nil) {
            log(.info, "calibrate: nothing written (\(dryRun ? "--dry-run" : "no --config or --udev-rule"))")
            return 0
        }
        do {
            try outcome.save(config: config, udevRule: udevRule, saved: { say("saved \($0)") })
        } catch {
            // The display given back first: the error line shows on the console.
            backend.restore()
            printError("carouseld: calibrate: \(error)")
            return 1
        }
        return 0
    }
}

/// A line on stdout, at once (print's buffer would hold it back from a pipe).
private func say(_ line: String) { writeAll(1, line + "\n") }

private func fixed(_ x: Double) -> String { CalibrationMatrix.format(x) }

private extension Double {
    var formattedSeconds: String { self == rounded() ? "\(Int(self))" : "\(self)" }
}

/// Waits until one of `fds` is readable or the time is up (poll(2)); EINTR is a wake-up.
private func wait(for fds: [Int32], microseconds: Int64) {
    var entries = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    let ms = Int32(min(max(1, (microseconds + 999) / 1000), 60_000))
    _ = poll(&entries, nfds_t(entries.count), ms)
}
