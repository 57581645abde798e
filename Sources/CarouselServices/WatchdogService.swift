import CarouselLoop
import CarouselPlatform

/// systemd's watchdog: `WATCHDOG=1` every half of `WatchdogSec=`, sent from
/// the loop itself, so that a loop that hangs stops them and systemd
/// restarts the daemon.
public final class WatchdogService: LoopService {
    public let name = "watchdog"
    private let notifier: ServiceNotifier
    private let interval: Int64
    public private(set) var deadline: Int64?

    /// Nil when systemd wants no keep-alives.
    public init?(notifier: ServiceNotifier, now: Int64) {
        guard let interval = notifier.watchdogInterval else { return nil }
        self.notifier = notifier
        self.interval = interval
        deadline = now
        log(.info, "systemd watchdog: a keep-alive every \(interval / 2000) ms")
    }

    public func due(now: Int64) {
        notifier.watchdog()
        deadline = now + interval / 2
    }
}
