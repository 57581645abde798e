import CUdev

/// Tells when a display is plugged or unplugged: udev's "drm" change events
/// (the kernel sends one with HOTPLUG=1 for any connector change), read from
/// a netlink descriptor the event loop polls. The backend's `reprobe` then
/// finds out what changed.
public final class HotplugMonitor {
    private let udev: OpaquePointer
    private let monitor: OpaquePointer

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

    /// Reads the pending events; `true` if one was a display hotplug.
    public func drain() -> Bool {
        var hotplug = false
        while let device = udev_monitor_receive_device(monitor) {
            if let value = udev_device_get_property_value(device, "HOTPLUG"), String(cString: value) == "1" {
                hotplug = true
            }
            udev_device_unref(device)
        }
        return hotplug
    }
}

/// A hotplug monitor error: one line for the log (hotplug is optional, the
/// display works without it).
public struct DisplayErrorBox: Error, CustomStringConvertible {
    public let description: String
    init(_ text: String) { description = text }
}
