import CarouselConfig
import CarouselDisplay
import CarouselFBDev
import CarouselImaging
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// `carouseld run` once its options are read (by ArgumentParser or by
/// `RunCommandLine`): the configuration read, the display opened (waited
/// for at boot), the daemon run on it until it stops.
public struct RunCommand {
    /// How it ended: the process's exit status (0 stopped, 1 failed while
    /// running, 2 a configuration that cannot be used), or a `--display`
    /// that is neither `drm` nor `offscreen:WIDTHxHEIGHT`, which the
    /// executable reports as a usage error, as its argument parser would.
    public enum Ending: Error, Equatable {
        case exit(Int32)
        case badDisplay(String)
    }

    /// The INI file, and `drm` or `offscreen:WIDTHxHEIGHT`.
    public var config: String
    public var display: String

    public init(config: String, display: String) {
        self.config = config
        self.display = display
    }

    public func run() -> Ending {
        var options = Daemon.Options()
        options.stateDirectory = Daemon.Options.stateDirectory(environment: getenv("STATE_DIRECTORY").map { String(cString: $0) })
        // The panel's backlight goes with the panel: an offscreen run (a
        // test, a desktop) leaves the machine's own alone.
        if display == "drm" { options.backlightRoot = "/sys/class/backlight" }
        // "After start" counts from exec: loading the libraries and Swift's
        // runtime, and parsing arguments, are part of the wait for a picture.
        options.enteredMain = MonotonicClock.now()
        options.startedAt = ProcessStart.monotonicMicroseconds().map { min($0, options.enteredMain!) } ?? options.enteredMain
        // A configuration that cannot be used is an error line journald files
        // at error priority, and exit 2 (restarting cannot help).
        let configuration: Configuration
        do {
            configuration = try readConfiguration(config)
        } catch {
            log(.error, "cannot start: \(error)")
            return .exit(2)
        }
        Log.threshold = configuration.logLevel
        for line in configuration.cleartextWarnings(for: .daemon) { log(.warning, line) }
        if display == "drm", configuration.display.backend == .drm {
            // A card that went away (driver unbound, module unloaded) is opened again when udev says one came.
            options.reopenDisplay = { try openDRMBackend($0) }
        }
        // Now, before the wait for a display, which checks them.
        blockTerminationSignals()
        let notifier = ServiceNotifier()
        let backend: DisplayBackend
        do {
            backend = try makeBackend(configuration, notifier: notifier)
        } catch {
            return error
        }
        let daemon: Daemon
        do {
            daemon = try Daemon(config: configuration, path: config, backend: backend, notifier: notifier, options: options)
        } catch {
            backend.restore()
            log(.error, "cannot start: \(error)")
            return .exit(1)
        }
        return .exit(daemon.run())
    }

    /// The display `--display` and `[display] backend` name; stopped while
    /// waiting for one is `.exit(0)`, one that cannot be used `.exit(1)`.
    func makeBackend(_ configuration: Configuration, notifier: ServiceNotifier) throws(Ending) -> DisplayBackend {
        if display.hasPrefix("offscreen:") {
            guard let mode = ModeRequest(String(display.dropFirst("offscreen:".count))), mode.refresh == nil else {
                throw .badDisplay("--display offscreen:WIDTHxHEIGHT, e.g. offscreen:1280x800")
            }
            return OffscreenBackend(size: PixelSize(width: mode.width, height: mode.height))
        }
        guard display == "drm" else { throw .badDisplay("--display must be drm or offscreen:WIDTHxHEIGHT") }
        do throws(StartupExit) {
            switch configuration.display.backend {
            case .drm:
                return try makeDRMBackend(configuration, notifier: notifier)
            case .fbdev:
                // An SPI panel's fbtft driver may load after us at boot: wait for its node as for a DRM card.
                let device = configuration.display.device
                return try waitForDisplay(open: { () throws(DisplayError) in try FBDevBackend(device: device) },
                                          isWorthWaiting: FBDevBackend.isWorthWaiting,
                                          wait: { FBDevBackend.waitForDevice(device, shouldStop: $0) }, notifier: notifier)
            }
        } catch {
            throw .exit(error == .success ? 0 : 1)
        }
    }
}
