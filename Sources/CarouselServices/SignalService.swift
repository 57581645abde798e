import CarouselLoop
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM and SIGINT stop the daemon, SIGHUP reloads its configuration:
/// through a signalfd, never an asynchronous handler. The signals are
/// blocked when this is made, before the decoder thread starts, so that
/// every thread inherits the mask; what they ask goes to the loop once
/// the service is registered (`attach`).
public final class SignalService: LoopService {
    public let name = "signals"
    private let signals: Signals
    private var context: ServiceContext?
    private var configPath = ""

    public init() throws(SystemCallError) {
        signals = try Signals([SIGTERM, SIGINT, SIGHUP])
    }

    /// From now on, signals ask `ask` (the daemon's interpreter); `configPath` is for the log.
    /// Registered: from now on its signals are asks
    /// (`services.register { signals.attach($0, configPath: path) }`).
    public func attach(_ context: ServiceContext, configPath: String) -> SignalService {
        self.context = context
        self.configPath = configPath
        return self
    }

    public var interests: [EpollInterest] { [EpollInterest(fd: signals.fd.raw)] }

    public func ready(_ fd: Int32, events: UInt32, now: Int64) {
        guard let context else { return }
        for signal in signals.read() {
            switch signal {
            case SIGTERM, SIGINT:
                context.ask(.stop(reason: "received \(signal == SIGTERM ? "SIGTERM" : "SIGINT")"))
            case SIGHUP:
                log(.info, "SIGHUP: reloading \(configPath)")
                context.ask(.reload)
            default:
                break
            }
        }
    }
}
