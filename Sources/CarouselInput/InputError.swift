import CarouselPlatform
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why input could not be set up or read, with a hint a person can act on.
///
/// `description` is one log line, e.g.
/// `"input: cannot assign seat seat0 to libinput (udev could not list the input devices; is /sys mounted and systemd-udevd running?)"`.
public enum InputError: Error, Sendable, Equatable, CustomStringConvertible {
    /// libinput.so.10 could not be opened with dlopen, or lacks a function
    /// carouseld calls; `reason` is the loader's, naming the library.
    case libraryUnavailable(reason: String)
    /// `udev_new` returned NULL.
    case udevUnavailable
    /// `libinput_udev_create_context` returned NULL.
    case contextUnavailable
    /// `libinput_udev_assign_seat` failed.
    case seatAssignmentFailed(seat: String)
    /// `libinput_dispatch` failed with this errno.
    case dispatchFailed(errno: Int32)
    /// A calibration matrix that is not six finite numbers.
    case invalidCalibration(count: Int)
    /// `libinput_resume` failed.
    case resumeFailed

    public var message: String {
        switch self {
        case let .libraryUnavailable(reason):
            return "cannot load libinput (\(reason)): touch and keys are not read"
        case .udevUnavailable:
            return "cannot create a udev context (udev_new failed)"
        case .contextUnavailable:
            return "cannot create a libinput context (libinput_udev_create_context failed)"
        case let .seatAssignmentFailed(seat):
            return "cannot assign seat \(seat) to libinput (libinput_udev_assign_seat failed)"
        case let .dispatchFailed(code):
            return "cannot read input events: libinput_dispatch: \(errnoDescription(code)) (errno \(code))"
        case let .invalidCalibration(count):
            return "calibration matrix has \(count) finite numbers where six are needed"
        case .resumeFailed:
            return "cannot resume libinput (libinput_resume failed)"
        }
    }

    public var hint: String? {
        switch self {
        case .libraryUnavailable:
            return "apt-get install \(InputLibrary.package)"
        case .udevUnavailable, .contextUnavailable:
            return "the system may be out of memory"
        case .seatAssignmentFailed:
            return "udev could not list the input devices; is /sys mounted and systemd-udevd running?"
        case .dispatchFailed(EACCES), .dispatchFailed(EPERM):
            return "Maybe you don't have the right permissions? The daemon's user needs the 'input' group"
        case .dispatchFailed(ENOMEM):
            return "the system is out of memory"
        case .dispatchFailed:
            return nil
        case .invalidCalibration:
            return "give [input] calibration as six numbers 'a b c d e f' (libinput's matrix, first two rows), or leave it empty"
        case .resumeFailed:
            return "the input devices may be gone or no longer accessible; restart the daemon"
        }
    }

    public var description: String {
        guard let hint else { return "input: \(message)" }
        return "input: \(message) (\(hint))"
    }
}
