import CUdev
#if canImport(Glibc)
import Glibc
#endif

/// Tells when a display is plugged or unplugged, and when a card comes or
/// goes: udev's "drm" events (the kernel sends a change with HOTPLUG=1 for
/// any connector change, and add/remove for a card whose driver is bound or
/// unbound), read from a netlink descriptor the event loop polls. The
/// backend's `reprobe` then finds out what changed.
public final class HotplugMonitor {
    private let udev: OpaquePointer
    private let monitor: OpaquePointer

    /// What the pending events said.
    public struct Events: Equatable, Sendable {
        /// A connector changed (HOTPLUG=1): look at the display again.
        public var hotplug = false
        /// Device numbers (`st_rdev`) of cards that went away (action "remove").
        public var removedCards: [UInt64] = []
        /// A card appeared (action "add" of a device node): a display may be back.
        public var cardAdded = false
        /// How many events there were, of any kind: while the display is
        /// away, each is a reason to look again (a card's connectors are
        /// announced after the card itself).
        public var count = 0
        public init() {}

        /// Adds one udev event: its action, whether it names a device node
        /// (a card, not a connector), its device number and its HOTPLUG property.
        public mutating func note(action: String?, hasDeviceNode: Bool, deviceNumber: UInt64, hotplug: String?) {
            count += 1
            if hotplug == "1" { self.hotplug = true }
            guard hasDeviceNode else { return }
            switch action {
            case "remove": removedCards.append(deviceNumber)
            case "add": cardAdded = true
            default: break
            }
        }
    }

    /// The corresponding C functions are `udev_monitor_new_from_netlink`,
    /// `udev_monitor_filter_add_match_subsystem_devtype` and `udev_monitor_enable_receiving`.
    public init() throws(DisplayErrorBox) {
        guard let udev = udev_new() else { throw DisplayErrorBox("cannot create a udev context for display hotplug") }
        guard let monitor = udev_monitor_new_from_netlink(udev, "udev") else {
            udev_unref(udev)
            throw DisplayErrorBox("cannot listen to udev events (is systemd-udevd running?)")
        }
        guard udev_monitor_filter_add_match_subsystem_devtype(monitor, "drm", nil) >= 0,
              udev_monitor_enable_receiving(monitor) >= 0 else {
            udev_monitor_unref(monitor)
            udev_unref(udev)
            throw DisplayErrorBox("cannot listen to udev's drm events")
        }
        self.udev = udev
        self.monitor = monitor
    }

    deinit {
        udev_monitor_unref(monitor)
        udev_unref(udev)
    }

    /// The descriptor to poll (`udev_monitor_get_fd`).
    public var fileDescriptor: Int32 { udev_monitor_get_fd(monitor) }

    /// Reads the pending events (`udev_monitor_receive_device`).
    public func drain() -> Events {
        var events = Events()
        while let device = udev_monitor_receive_device(monitor) {
            events.note(action: udev_device_get_action(device).map { String(cString: $0) },
                        hasDeviceNode: udev_device_get_devnode(device) != nil,
                        deviceNumber: UInt64(udev_device_get_devnum(device)),
                        hotplug: udev_device_get_property_value(device, "HOTPLUG").map { String(cString: $0) })
            udev_device_unref(device)
        }
        return events
    }
}

/// A hotplug monitor error: one line for the log (hotplug is optional, the
/// display works without it).
public struct DisplayErrorBox: Error, CustomStringConvertible {
    public let description: String
    init(_ text: String) { description = text }
}
