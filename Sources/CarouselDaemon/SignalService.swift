import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM and SIGINT stop the daemon, SIGHUP reloads its configuration:
/// through a signalfd, never an asynchronous handler. The signals are
/// blocked when this is made, before the decoder thread starts, so that
/// every thread inherits the mask.
final class SignalService: LoopService {
    let name = "signals"
    private let signals: Signals
    /// Set once the daemon is made (the signals are blocked before).
    weak var daemon: Daemon?

    init() throws(SystemCallError) {
        signals = try Signals([SIGTERM, SIGINT, SIGHUP])
    }

    var interests: [EpollInterest] { [EpollInterest(fd: signals.fd.raw)] }

    func ready(_ fd: Int32, events: UInt32, now: Int64) {
        guard let daemon else { return }
        for signal in signals.read() {
            switch signal {
            case SIGTERM, SIGINT:
                daemon.ask(.stop(reason: "received \(signal == SIGTERM ? "SIGTERM" : "SIGINT")"))
            case SIGHUP:
                log(.info, "SIGHUP: reloading \(daemon.configPath)")
                daemon.ask(.reload)
            default:
                break
            }
        }
    }
}
