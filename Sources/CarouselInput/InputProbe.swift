import CarouselPlatform
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A look at the seat's input devices without keeping them open, for
/// `carouseld probe`.
public enum InputProbe {
    /// The devices libinput takes on `seat` right now: creates a context,
    /// dispatches once to collect the `deviceAdded` events of the devices
    /// the seat assignment opened, and tears the context down.
    public static func list(seat: String = "seat0",
                            log: @escaping InputLogHandler = InputLog.write) throws(InputError) -> [InputDeviceInfo] {
        let context = try InputContext(seat: seat, log: log)
        return try context.dispatch().compactMap { event in
            if case let .deviceAdded(info) = event { return info }
            return nil
        }
    }

    /// Why a seat may show no devices, as far as can be told from here: one
    /// line for the user.
    public static func emptySeatHint(seat: String) -> String {
        var causes: [String] = []
        // udevd creates its control socket at start; without udevd nothing
        // is tagged ID_INPUT and libinput skips every device.
        if (try? systemCall("access") { access("/run/udev/control", F_OK) }) == nil {
            causes.append("systemd-udevd does not seem to be running (no /run/udev/control), and libinput takes only devices udev has tagged")
        }
        if seat != "seat0" {
            causes.append("devices belong to seat0 unless a udev rule sets ID_SEAT=\(seat)")
        }
        causes.append("there may be no touchscreen, mouse or keyboard connected, or the daemon's user may lack access to /dev/input/event* (root or the 'input' group)")
        return "no input devices on \(seat): " + causes.joined(separator: "; ")
    }

    /// `carouseld probe`'s input section: a line with the count, then one
    /// line for each device libinput takes on `seat` (capabilities, name,
    /// physical size, node), or why there are none.
    public static func report(seat: String = "seat0") -> [String] {
        let devices: [InputDeviceInfo]
        do {
            devices = try list(seat: seat, log: InputLog.write)
        } catch {
            return ["input (\(seat)): unavailable: \(error)"]
        }
        var lines = ["input (\(seat)): \(devices.count) device\(devices.count == 1 ? "" : "s")"]
        if devices.isEmpty { lines.append("  \(emptySeatHint(seat: seat))") }
        for device in devices {
            var line = "  \(device.sysname)  \(device.capabilities.names.joined(separator: "+"))  \"\(device.name)\""
            if let size = device.physicalSize { line += "  \(size)" }
            if let node = device.devnode { line += "  \(node)" }
            lines.append(line)
        }
        return lines
    }
}

extension InputPhysicalSize: CustomStringConvertible {
    /// "154.2x86.7 mm": millimetres to a tenth, as libinput measures them.
    public var description: String { "\(width.formatted)x\(height.formatted) mm" }
}
