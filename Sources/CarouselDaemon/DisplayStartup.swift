import CarouselConfig
import CarouselDRM
import CarouselDisplay
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// The DRM backend, as the configuration's [display] section asks for it,
/// once there is a display to show on (`waitForDisplay`).
public func makeDRMBackend(_ configuration: Configuration, notifier: ServiceNotifier) throws(StartupExit) -> DisplayBackend {
    let display = configuration.display
    return try waitForDisplay(open: { () throws(DisplayError) in try openDRMBackend(configuration) },
                              isWorthWaiting: DRMBackend.isWorthWaiting,
                              wait: { shouldStop in
                                  DRMBackend.waitForConnector(device: display.device, connector: display.connector,
                                                              shouldStop: shouldStop) != nil
                              },
                              notifier: notifier)
}

/// A display backend opened with `open`, at start, whichever kind it is.
///
/// No display device or no display connected at start is not a reason to
/// exit (systemd would restart us into the same state, over and over):
/// when `isWorthWaiting` says waiting can cure the error, log once, `wait`
/// for the display (it returns `true` when one came, `false` when its
/// `shouldStop` said stop), and open it again. While waiting, systemd's
/// start timeout is extended and its watchdog fed, and SIGTERM or SIGINT
/// (blocked, so pending) stops the wait: `StartupExit.success`. Any other
/// error, or one that waiting did not cure, is logged: `.failure`.
public func waitForDisplay<Backend>(open: () throws(DisplayError) -> Backend,
                                    isWorthWaiting: (DisplayError) -> Bool,
                                    wait: (_ shouldStop: () -> Bool) -> Bool,
                                    notifier: ServiceNotifier) throws(StartupExit) -> Backend {
    var waited = false
    while true {
        do {
            return try open()
        } catch {
            guard isWorthWaiting(error), !waited else {
                log(.error, "display: \(error)")
                throw StartupExit.failure
            }
            log(.warning, "display: \(error); waiting for one")
            waited = true
            // systemd's start timeout and watchdog wait with us: a kiosk whose
            // monitor is off is starting, not failing.
            let status = "waiting for a display: \(error)"
            guard wait({
                notifier.extendTimeout(microseconds: 10_000_000, status: status)
                notifier.watchdog()
                return terminationRequested()
            }) else {
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

