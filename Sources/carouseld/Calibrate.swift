import ArgumentParser
import CarouselCalibration
import CarouselConfig
import CarouselCore
import CarouselDaemon
import CarouselDRM
import CarouselDisplay
import CarouselInput
import CarouselPlatform
import CarouselRender
#if canImport(Glibc)
import Glibc
#endif

/// `carouseld calibrate`: targets on the display, touches read raw through
/// libinput, libinput's calibration matrix fitted and checked, and saved
/// where the user says.
struct Calibrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Calibrate the touchscreen against the display: touch the targets shown, save libinput's matrix.",
        discussion: """
        Shows \(CalibrationTargets.standard.targets.count) targets one after another on the display (the last \
        is a check point, not used for the fit), reads where the touchscreen says each was touched (with \
        the identity matrix, whatever is configured now), fits libinput's calibration matrix by least \
        squares, and reports how far off the check point is, in millimetres. Stop the running daemon first \
        (systemctl stop carouseld): the display and the touchscreen are needed here.

        Output on stdout, one line each:
          device "<name>" <sysname>            the touchscreen being calibrated
          target I/N at X Y                    a target is on screen, at logical pixels X Y
          touched I/N at RAWX RAWY             where the touchscreen said (fractions of its extent)
          matrix A B C D E F                   the fit (LIBINPUT_CALIBRATION_MATRIX)
          check MM mm uncalibrated MM mm       the check point's error with and without the fit
          saved PATH                           for each file written
        A fit worse than the uncalibrated panel at the check point is not saved (exit 1). \
        Without --config or --udev-rule (or with --dry-run) nothing is written.
        """
    )

    @Option(help: "The configuration file: its [display] and [input] settings are used, and the matrix is written to its [input] calibration key (the file is created if missing).")
    var config: String?

    @Option(name: .customLong("udev-rule"),
            help: "Write a udev rule setting LIBINPUT_CALIBRATION_MATRIX for this touchscreen to this file, e.g. /etc/udev/rules.d/99-touchscreen-calibration.rules.")
    var udevRule: String?

    @Flag(name: .customLong("dry-run"), help: "Print the matrix and the check point's error, write nothing.")
    var dryRun = false

    @Option(help: "Seconds to wait for each target to be touched.")
    var timeout: Double = 30

    func validate() throws {
        guard timeout.isFinite, timeout > 0, timeout <= 3600 else {
            throw ValidationError("--timeout: expected 0 to 3600 seconds, not \(timeout)")
        }
    }

    func run() throws {
        var configuration = Configuration()
        if let config, access(config, F_OK) == 0 { configuration = try loadConfiguration(config) }
        // Ctrl-C or a stop read from a descriptor, not by a handler: the
        // wait for a touch ends, the console comes back, nothing is written.
        let signals: Signals
        do {
            signals = try Signals([SIGINT, SIGTERM, SIGHUP])
        } catch {
            printError("carouseld: calibrate: \(error)")
            throw ExitCode(1)
        }
        let backend: DRMBackend
        do {
            backend = try openDRMBackend(configuration)
        } catch {
            printError("carouseld: calibrate: \(error)")
            throw ExitCode(1)
        }
        defer { backend.restore() }
        try calibrate(backend: backend, configuration: configuration, signals: signals)
    }

    private func calibrate(backend: DRMBackend, configuration: Configuration, signals: Signals) throws {
        let rotation = configuration.rotation.combined(with: backend.panelRotation.rotation)
        let panel = backend.panelSize
        let logical = rotation.logicalSize(panelWidth: panel.width, panelHeight: panel.height)
        let frame = Frame(width: logical.width, height: logical.height)

        let seat = configuration.input.seat
        let input: InputContext
        do {
            // Fractions of the device's extent: the space the matrix maps from.
            input = try InputContext(seat: seat, panelSize: .unit, log: InputLog.write)
            // libinput reports positions through the matrix it has (a udev
            // LIBINPUT_CALIBRATION_MATRIX among them): the fit needs them raw.
            try input.setCalibration(CalibrationMatrix.identity.values.map { Float($0) })
        } catch {
            throw failure(backend, "\(error)")
        }
        var devices: [InputDeviceInfo] = []
        var down: Set<Int> = []
        func read(into press: inout Press?, outcome: inout Press.Outcome?) throws {
            let events: [InputEvent]
            do {
                events = try input.dispatch()
            } catch {
                throw failure(backend, "\(error)")
            }
            for event in events {
                switch event {
                case let .deviceAdded(info) where info.capabilities.contains(.touch):
                    devices.append(info)
                case let .deviceRemoved(info) where devices.contains(where: { $0.id == info.id }):
                    throw failure(backend, "the touchscreen \(info.sysname) (\(info.name)) went away during calibration")
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
                throw failure(backend, "no touchscreen on \(seat); \(InputProbe.emptySeatHint(seat: seat))")
            }
            throw failure(backend, "\(devices.count) touchscreens on \(seat) (\(devices.map(\.sysname).joined(separator: ", "))): unplug all but the one to calibrate")
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
                        throw failure(backend, "no touch on target \(i + 1) within \(timeout.formattedSeconds) s (--timeout); is \(device.sysname) (\(device.name)) the touchscreen on this display?")
                    }
                    wait(for: [input.fileDescriptor, signals.fd.raw], microseconds: left)
                    if let signal = signals.read().first {
                        throw failure(backend, "stopped by signal \(signal) at target \(i + 1); nothing written")
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
            throw failure(backend, "\(error)")
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
        guard !result.isWorseThanUncalibrated else { throw failure(backend, result.refusal) }

        if dryRun || (config == nil && udevRule == nil) {
            log(.info, "calibrate: nothing written (\(dryRun ? "--dry-run" : "no --config or --udev-rule"))")
            return
        }
        if let config {
            do {
                try IniRewriter.update(path: config, section: "input", key: "calibration", value: matrix.text)
            } catch {
                throw failure(backend, "\(error)")
            }
            say("saved \(config)")
        }
        if let udevRule {
            do {
                try IniRewriter.writeAtomically(path: udevRule, text: UdevRule.text(deviceName: device.name, matrix: matrix), mode: 0o644)
            } catch {
                throw failure(backend, "\(error) (udev rules live in /etc/udev/rules.d, writable by root)")
            }
            say("saved \(udevRule)")
        }
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

    /// One error line, the display given back, exit 1.
    private func failure(_ backend: DRMBackend, _ message: String) -> ExitCode {
        backend.restore()
        printError("carouseld: calibrate: \(message)")
        return ExitCode(1)
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
