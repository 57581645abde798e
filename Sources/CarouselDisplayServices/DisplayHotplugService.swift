import CarouselDRM
import CarouselLoop
import CarouselPlatform

/// Display hotplug through udev's "drm" events, for a backend that names
/// its device (`DisplayBackend.hotplugDevice`): a monitor plugged in later
/// or back after standby, a card whose driver was unbound, and the card
/// coming back. What to do about it is the daemon's (`LoopAsk.displayGone`,
/// `.displayMayBeBack`, `.displayChanged`).
public final class DisplayHotplugService: LoopService {
    public let name = "display hotplug"
    private let context: ServiceContext
    private let monitor: HotplugMonitor

    /// Nil, with one line, when udev cannot be watched.
    public init?(context: ServiceContext) {
        do {
            monitor = try HotplugMonitor()
        } catch {
            log(.warning, "no display hotplug: \(error)")
            return nil
        }
        self.context = context
    }

    public var interests: [EpollInterest] { [EpollInterest(fd: monitor.fileDescriptor)] }

    public func ready(_ fd: Int32, events: UInt32, now: Int64) {
        let events = monitor.drain()
        let view = context.view
        // Asked, not done: the display is away from here on, though the view
        // shows it until the loop has carried the ask out.
        var away = view.displayIsAway
        if let device = view.displayHotplugDevice, events.removedCards.contains(device) {
            context.ask(.displayGone(why: "its card was removed: driver unbound or unloaded?"))
            away = true
        }
        if away {
            if events.count > 0 { context.ask(.displayMayBeBack) }
        } else if events.hotplug, !view.displayIsOff {
            // Off, many monitors drop hotplug in standby: the mode is kept,
            // and waking looks again.
            context.ask(.displayChanged)
        }
    }
}
