import CarouselDisplay
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// The DRM room's errors: what failed, on what, and what to do about it.
enum DRMErrors {
    /// Hints of the failures that waiting can cure (a driver still loading
    /// at boot, a monitor not plugged in yet). Text for people only:
    /// `DRMBackend.isWorthWaiting` decides on `DisplayError.reason`.
    static let noDeviceHint = "is the display driver loaded? e.g. modprobe vc4, or bochs in QEMU"
    static let notConnectedHint = "connect a display; carouseld waits for one"
    static let masterHint = "another program owns the display (a desktop, X, another kiosk): stop it"

    static func noDevice(_ directory: String) -> DisplayError {
        DisplayError("no DRM device in \(directory)", hint: noDeviceHint, reason: .noDevice)
    }

    static func noDisplayConnected(_ where_: String, connectors: [String]) -> DisplayError {
        let listing = connectors.isEmpty ? "" : " (connectors: \(connectors.joined(separator: ", ")))"
        return DisplayError("no display connected to \(where_)\(listing)", hint: notConnectedHint, reason: .notConnected)
    }

    static func notMaster(_ path: String) -> DisplayError {
        DisplayError("cannot become DRM master of \(path)", hint: masterHint, reason: .busy)
    }

    /// A failed system or libdrm call: "drmModeSetCrtc (CRTC 38 to Virtual-1)
    /// on /dev/dri/card0: Permission denied (hint)".
    static func failed(_ error: SystemCallError, what: String? = nil, device: String) -> DisplayError {
        let subject = what.map { "\(error.call) (\($0))" } ?? error.call
        return DisplayError("\(subject) on \(device): \(errnoDescription(error.errno))",
                            hint: hint(errno: error.errno, call: error.call), reason: reason(errno: error.errno))
    }

    /// The kind of failure `errno` means, for code that acts on it.
    static func reason(errno code: Int32) -> DisplayError.Reason {
        switch code {
        case EACCES, EPERM: return .permission
        case EBUSY: return .busy
        case ENODEV: return .gone
        default: return .other
        }
    }

    /// What a user can do about `errno` from `call`.
    static func hint(errno code: Int32, call: String) -> String? {
        switch code {
        case EACCES, EPERM:
            return call == "open" ? "add the user to the 'video' group, or run as root" : masterHint
        case ENOENT:
            return call == "open" ? "no such device: 'carouseld probe' lists the cards there are"
                : "the display object went away (unplugged?)"
        case ENOMEM, ENOSPC:
            return "not enough video memory for two buffers in this mode: choose a smaller [display] mode,"
                + " or give the GPU more memory (QEMU: vgamem=64M)"
        case ENODEV, ENXIO:
            return "the display device went away (driver unloaded or device unplugged)"
        case EBUSY:
            return "the display is busy (a flip still pending, or another program changed it)"
        case EINVAL, ERANGE:
            return "the driver refused this configuration: try another [display] mode, or api = legacy"
        case EOPNOTSUPP:
            return "the driver does not support this: try [display] api = legacy"
        default:
            return nil
        }
    }
}
