/// One thing that happened on the seat, as the daemon needs it.
///
/// Times are microseconds of CLOCK_MONOTONIC, taken from the kernel's event
/// time stamps (`libinput_event_*_get_time_usec`), not from when the event
/// was read: velocity estimates must not depend on how late the loop got to
/// the descriptor.
///
/// Touch and absolute pointer coordinates are panel pixels (see
/// `InputContext.panelSize`): `libinput_event_touch_get_x_transformed` and
/// friends, after the device's calibration matrix. The origin is the panel's
/// top-left corner in the panel's own (unrotated) orientation; mapping to a
/// rotated layout is the daemon's business, as for the display.
public enum InputEvent: Sendable, Hashable {
    /// A finger touched. `slot` is libinput's *seat* slot
    /// (`libinput_event_touch_get_seat_slot`): unique across all touch
    /// devices of the seat while the finger is down, so two touchscreens
    /// cannot produce the same slot at the same time.
    case touchDown(slot: Int, x: Double, y: Double, time: UInt64)
    case touchMotion(slot: Int, x: Double, y: Double, time: UInt64)
    case touchUp(slot: Int, time: UInt64)
    /// The touch ended without a lift: the device went away, libinput
    /// suspended it, or the hardware gave up on the contact. Treat it as a
    /// lift with zero velocity, never as a tap.
    case touchCancel(slot: Int, time: UInt64)
    /// The end of one hardware frame: every touch change of that instant has
    /// been reported. Gestures should act on frames, not on single contacts.
    case touchFrame(time: UInt64)
    /// Relative motion of a mouse or trackball, *accelerated*
    /// (`libinput_event_pointer_get_dx`), in the pixel-like units libinput
    /// gives a cursor: what moves an on-screen cursor, so a mouse drags the
    /// carousel as fast as a cursor would move over it.
    case pointerMotion(dx: Double, dy: Double, time: UInt64)
    /// Absolute pointer position (a tablet, QEMU's usb-tablet), in panel pixels.
    case pointerMotionAbsolute(x: Double, y: Double, time: UInt64)
    /// A pointer button, as a Linux code (BTN_LEFT is 0x110).
    case pointerButton(button: UInt32, pressed: Bool, time: UInt64)
    /// A key, as a Linux key code (linux/input-event-codes.h), before any
    /// keymap. libinput does no key repeat: one press, one release.
    case key(code: UInt32, pressed: Bool, time: UInt64)
    case deviceAdded(InputDeviceInfo)
    /// The device is gone. Any touch of it still down has been cancelled
    /// (by a `touchCancel` and a `touchFrame`) before this event.
    case deviceRemoved(InputDeviceInfo)

    /// The event's time stamp; nil for device events, which have none.
    public var time: UInt64? {
        switch self {
        case let .touchDown(_, _, _, time), let .touchMotion(_, _, _, time): time
        case let .touchUp(_, time), let .touchCancel(_, time), let .touchFrame(time): time
        case let .pointerMotion(_, _, time), let .pointerMotionAbsolute(_, _, time): time
        case let .pointerButton(_, _, time), let .key(_, _, time): time
        case .deviceAdded, .deviceRemoved: nil
        }
    }
}

/// What a device can do, as far as carouseld cares
/// (`libinput_device_has_capability`).
public struct InputCapabilities: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let touch = InputCapabilities(rawValue: 1 << 0)
    public static let pointer = InputCapabilities(rawValue: 1 << 1)
    public static let keyboard = InputCapabilities(rawValue: 1 << 2)

    /// "touch", "pointer", "keyboard", in that order.
    public var names: [String] {
        var names: [String] = []
        if contains(.touch) { names.append("touch") }
        if contains(.pointer) { names.append("pointer") }
        if contains(.keyboard) { names.append("keyboard") }
        return names
    }
}

/// A device's physical size in millimetres (`libinput_device_get_size`):
/// the extent of its absolute axes divided by their resolution.
public struct InputPhysicalSize: Sendable, Hashable {
    public var width: Double
    public var height: Double

    public init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }
}

/// One input device of the seat.
public struct InputDeviceInfo: Sendable, Hashable {
    /// Unique within one `InputContext` for its lifetime, so that a removal
    /// can be matched to its addition (sysnames are reused by the kernel).
    public var id: Int
    /// The kernel's device name (`libinput_device_get_name`), e.g. "ILITEK ILITEK-TP".
    public var name: String
    /// The event node's name (`libinput_device_get_sysname`), e.g. "event5".
    public var sysname: String
    /// The device node (`udev_device_get_devnode`), e.g. "/dev/input/event5", when known.
    public var devnode: String?
    public var capabilities: InputCapabilities
    /// Physical size in millimetres; nil for devices without absolute axes
    /// or whose axes report no resolution.
    public var physicalSize: InputPhysicalSize?

    public init(id: Int, name: String, sysname: String, devnode: String? = nil,
                capabilities: InputCapabilities, physicalSize: InputPhysicalSize? = nil) {
        self.id = id
        self.name = name
        self.sysname = sysname
        self.devnode = devnode
        self.capabilities = capabilities
        self.physicalSize = physicalSize
    }
}

/// The panel's size in pixels, which touch and absolute pointer coordinates
/// are scaled to.
public struct InputPanelSize: Sendable, Hashable {
    public var width: UInt32
    public var height: UInt32

    public init(width: UInt32, height: UInt32) {
        self.width = width
        self.height = height
    }

    /// 1x1: coordinates come out as fractions of the device's extent, 0..<1.
    /// What an `InputContext` reports until it is told the panel's size.
    public static let unit = InputPanelSize(width: 1, height: 1)

    /// Parses "WIDTHxHEIGHT" ("1280x800"); nil unless both are whole numbers
    /// from 1 to 65535.
    public init?(parsing text: String) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2,
              parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let w = UInt32(parts[0]), let h = UInt32(parts[1]),
              (1...65535).contains(w), (1...65535).contains(h)
        else { return nil }
        self.init(width: w, height: h)
    }
}
