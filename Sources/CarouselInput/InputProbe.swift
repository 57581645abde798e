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
}
