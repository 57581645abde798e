import CarouselConfig
import CarouselControl
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// The panel's backlight as the daemon drives it: lit at `lit` percent,
/// dimmed to `[power] dim_level` after `dim_after` without use (the
/// screen power policy decides when), powered down (`bl_power`) with the display.
struct BacklightState {
    /// The device driven; nil: none (none found, `backlight = none`, or it
    /// failed and was let go until a reload looks again).
    var device: Backlight?
    /// The lit level, percent of the device's range.
    var lit = 100
}

extension Daemon {
    /// The lit level a `brightness N` set, kept beside the position so that
    /// `brightness = auto` comes back to it after a restart (and not to the
    /// dimmed level a crash while dimmed would leave in the kernel).
    static let brightnessFileName = "brightness"

    /// Finds the backlight `[power] backlight` names and lights it at the
    /// configured level: `brightness`, else the level a `brightness N` left
    /// in the state directory, else the level the board has. At start and
    /// when a reload changed the backlight keys.
    func openBacklight() {
        backlight = BacklightState()
        guard let root = backlightRoot else { return }
        let device: Backlight
        switch config.power.backlight {
        case .none:
            return
        case .auto:
            let (found, problems) = Backlight.all(root: root)
            for problem in problems { log(.debug, "backlight: skipped: \(problem)") }
            guard let preferred = Backlight.preferred(found) else {
                log(.debug, "backlight: none under \(root) (dim_after, dim_level and brightness do nothing)")
                return
            }
            device = preferred
        case .named(let name):
            switch Backlight.open(name, root: root) {
            case .success(let named): device = named
            case .failure(let error):
                log(.warning, "backlight \(name): \(error); the display runs without one"
                    + " (names: \(Backlight.all(root: root).found.map(\.name).joined(separator: ", ")); reload looks again)")
                return
            }
        }
        do throws(BacklightError) {
            let level = try device.brightness()
            let chosen = config.power.brightness ?? savedBrightness()
            backlight.lit = chosen ?? max(1, device.percent(level: level))
            // A daemon that stopped while the display was off left it powered down.
            if try device.isPoweredDown() { try device.setPower(on: true) }
            // The board's own level is left exactly as it is.
            if let chosen, !power.isOff { try device.setBrightness(device.level(percent: chosen)) }
        } catch {
            log(.warning, "backlight \(device.name): \(error); the display runs without one (reload tries again)")
            return
        }
        backlight.device = device
        log(.info, "backlight: \(device.name) (\(device.type), 0 to \(device.maxBrightness)), lit at \(backlight.lit) %"
            + (config.power.dimAfter > 0 ? ", dims to \(config.power.dimLevel) % after \(Schema.format(config.power.dimAfter)) min" : ""))
    }

    /// The policy dimmed the backlight (no use for `dim_after`).
    func backlightDims() {
        tell(.stateChanged)
        writeBacklight(percent: config.power.dimLevel)
        log(.info, "backlight: dimmed to \(config.power.dimLevel) % (no use for \(Schema.format(config.power.dimAfter)) min)")
    }

    /// The policy lit it again (use since it dimmed, a rule that no longer
    /// dims, or the display gone dark: then it stays dark).
    func backlightUndims() {
        tell(.stateChanged)
        guard backlight.device != nil, !power.isOff else { return }
        writeBacklight(percent: backlight.lit)
        log(.info, "backlight: \(backlight.lit) % again")
    }

    /// The display went off or came on: the backlight powers down with it,
    /// and comes back lit (waking is use: never dimmed).
    func backlightFollowsDisplay(on: Bool) {
        guard let device = backlight.device else { return }
        do throws(BacklightError) {
            if on {
                try device.setPower(on: true)
                try device.setBrightness(device.level(percent: backlight.lit))
            } else {
                try device.setPower(on: false)
            }
        } catch {
            letGoOfBacklight(error)
        }
    }

    /// On the way out the console comes back on the panel: lit, at the lit
    /// level, not dimmed or dark.
    func restoreBacklight() {
        guard let device = backlight.device else { return }
        do throws(BacklightError) {
            try device.setPower(on: true)
            try device.setBrightness(device.level(percent: backlight.lit))
        } catch {
            log(.warning, "backlight \(device.name): \(error); left as it was")
        }
    }

    /// `brightness N`: the lit level from now on, kept for the next start.
    /// Off, it is the level the display wakes at.
    func setBrightness(percent: Int) -> String? {
        guard backlight.device != nil else {
            return "this display has no backlight carouseld can drive ([power] backlight = \(config.power.backlight);"
                + " see /sys/class/backlight)"
        }
        backlight.lit = percent
        if !power.isOff { writeBacklight(percent: percent) }
        guard backlight.device != nil else { return "the backlight failed (see the log)" }
        saveBrightness(percent)
        return nil
    }

    private func writeBacklight(percent: Int) {
        guard let device = backlight.device else { return }
        do throws(BacklightError) {
            try device.setBrightness(device.level(percent: percent))
        } catch {
            letGoOfBacklight(error)
        }
    }

    /// A backlight that cannot be written (unplugged, its driver unloaded,
    /// no permission): said once, and the carousel runs on without it.
    private func letGoOfBacklight(_ error: BacklightError) {
        log(.warning, "backlight \(backlight.device?.name ?? ""): \(error); the display runs on without it (reload looks again)")
        backlight = BacklightState()
    }

    private var brightnessPath: String? {
        stateDirectory.map { $0 + "/" + Self.brightnessFileName }
    }

    /// The level a `brightness N` kept, if there is a readable one.
    private func savedBrightness() -> Int? {
        guard let path = brightnessPath else { return nil }
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 16)
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 1, bytes[n - 1] == UInt8(ascii: "\n"), let percent = Int(String(decoding: bytes[0..<(n - 1)], as: UTF8.self)),
              (1...100).contains(percent) else {
            log(.warning, "backlight: \(path) is not a level from 1 to 100 and a newline; ignored")
            return nil
        }
        return percent
    }

    private func saveBrightness(_ percent: Int) {
        guard let path = brightnessPath else { return }
        do throws(ConfigWriteError) {
            try IniRewriter.writeAtomically(path: path, text: "\(percent)\n", mode: 0o640)
        } catch {
            log(.warning, "backlight: cannot keep the level in \(path): \(error.message); after a restart it is the board's own again")
        }
    }
}
