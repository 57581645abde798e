import CarouselLoop
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM and SIGINT stop the daemon, SIGHUP reloads its configuration:
/// through a signalfd, never an asynchronous handler. The signals are
/// blocked when this is made, before the decoder thread starts, so that
/// every thread inherits the mask; what they ask goes to the daemon once
/// it is made (`attach`).
final class SignalService: LoopService {
    let name = "signals"
    private let signals: Signals
    private var asks: ((LoopAsk) -> Void)?
    private var configPath = ""

    init() throws(SystemCallError) {
        signals = try Signals([SIGTERM, SIGINT, SIGHUP])
    }

    /// From now on, signals ask `ask` (the daemon's interpreter); `configPath` is for the log.
    func attach(configPath: String, ask: @escaping (LoopAsk) -> Void) {
        self.configPath = configPath
        asks = ask
    }

    var interests: [EpollInterest] { [EpollInterest(fd: signals.fd.raw)] }

    func ready(_ fd: Int32, events: UInt32, now: Int64) {
        guard let asks else { return }
        for signal in signals.read() {
            switch signal {
            case SIGTERM, SIGINT:
                asks(.stop(reason: "received \(signal == SIGTERM ? "SIGTERM" : "SIGINT")"))
            case SIGHUP:
                log(.info, "SIGHUP: reloading \(configPath)")
                asks(.reload)
            default:
                break
            }
        }
    }
}
