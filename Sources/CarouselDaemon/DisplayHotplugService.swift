import CarouselLoop
import CarouselDisplay
import CarouselDRM
import CarouselPlatform

/// Display hotplug through udev's "drm" events, for a backend that names
/// its device (`DisplayBackend.hotplugDevice`): a monitor plugged in later
/// or back after standby, a card whose driver was unbound, and the card
/// coming back.
final class DisplayHotplugService: LoopService {
    let name = "display hotplug"
    private unowned let daemon: Daemon
    private let monitor: HotplugMonitor

    /// Nil, with one line, when udev cannot be watched.
    init?(daemon: Daemon) {
        do {
            monitor = try HotplugMonitor()
        } catch {
            log(.warning, "no display hotplug: \(error)")
            return nil
        }
        self.daemon = daemon
    }

    var interests: [EpollInterest] { [EpollInterest(fd: monitor.fileDescriptor)] }

    func ready(_ fd: Int32, events: UInt32, now: Int64) {
        let events = monitor.drain()
        if let device = daemon.backend.hotplugDevice, events.removedCards.contains(device) {
            daemon.ask(.displayGone(why: "its card was removed: driver unbound or unloaded?"))
        }
        if !daemon.backend.isPresent {
            if events.count > 0 { daemon.ask(.displayMayBeBack) }
        } else if events.hotplug, !daemon.displayIsOff {
            // Off, many monitors drop hotplug in standby: the mode is kept,
            // and waking looks again.
            daemon.ask(.displayChanged)
        }
    }
}
