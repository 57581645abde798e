import CarouselPlatform

/// The wall clock being set (NTP, by hand): the services that follow local
/// time (the schedule, the clock on screen) look again.
final class WallClockService: LoopService {
    let name = "wall clock"
    private let watch: ClockChangeWatch
    private unowned let daemon: Daemon

    /// Nil, with one line, when the kernel does not say (the schedule may
    /// then run late after a clock change).
    init?(daemon: Daemon) {
        do {
            watch = try ClockChangeWatch()
        } catch {
            log(.warning, "the wall clock's changes are not watched (\(error)): [power] schedule may run late after one")
            return nil
        }
        self.daemon = daemon
    }

    var interests: [EpollInterest] { [EpollInterest(fd: watch.fd.raw)] }

    func ready(_ fd: Int32, events: UInt32, now: Int64) {
        guard watch.clockWasSet() else { return }
        log(.info, "the wall clock was set: [power] schedule and [overlay] clock looked at again")
        daemon.wallClockWasSet(now: now)
    }
}
