import CarouselConfig
import CarouselDRM
import CarouselDisplay
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// The DRM backend, as the configuration's [display] section asks for it.
///
/// No display device or no display connected at start is not a reason to
/// exit (systemd would restart us into the same state, over and over): log
/// once, wait for one, and start when it comes. SIGTERM still stops the wait.
public func makeDRMBackend(_ configuration: Configuration, notifier: ServiceNotifier) throws(StartupExit) -> DisplayBackend {
    let display = configuration.display
    var waited = false
    while true {
        do {
            return try openDRMBackend(configuration)
        } catch {
            guard DRMBackend.isWorthWaiting(error), !waited else {
                log(.error, "display: \(error)")
                throw StartupExit.failure
            }
            log(.warning, "display: \(error); waiting for one")
            waited = true
            // systemd's start timeout and watchdog wait with us: a kiosk whose
            // monitor is off is starting, not failing.
            let status = "waiting for a display: \(error)"
            guard DRMBackend.waitForConnector(device: display.device, connector: display.connector, shouldStop: {
                notifier.extendTimeout(microseconds: 10_000_000, status: status)
                notifier.watchdog()
                return terminationRequested()
            }) != nil else {
                log(.info, "stopped while waiting for a display")
                throw StartupExit.success
            }
        }
    }
}

/// The DRM display the configuration's [display] section names, opened
/// now (at start, and again when a card that went away comes back).
public func openDRMBackend(_ configuration: Configuration) throws(DisplayError) -> DRMBackend {
    let display = configuration.display
    return try DRMBackend(device: display.device, connector: display.connector, mode: configuration.displayModeRequest,
                          api: DRMAPI(rawValue: display.api.rawValue) ?? .auto)
}

/// Start-up ended before the loop: stopped while waiting (exit 0), or a
/// display that cannot be used (exit 1).
public enum StartupExit: Error {
    case success, failure
}

/// Blocks SIGTERM, SIGINT and SIGHUP for the rest of the process's life:
/// the waits before the event loop check them (`terminationRequested`), and
/// the loop reads them from a signalfd later.
public func blockTerminationSignals() {
    var blocked = sigset_t()
    sigemptyset(&blocked)
    for s in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&blocked, s) }
    sigprocmask(SIG_BLOCK, &blocked, nil)
}

/// Whether SIGTERM or SIGINT is pending (blocked signals stay pending), for
/// waits that happen before the event loop exists.
public func terminationRequested() -> Bool {
    var pending = sigset_t()
    sigpending(&pending)
    return sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1
}
