import ArgumentParser
import CarouselConfig
import CarouselDaemon
import CarouselDisplay
import CarouselFBDev
import CarouselImaging
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the carousel on the display (the default).",
        discussion: """
        --display offscreen:WIDTHxHEIGHT draws into memory instead of a panel, for
        machines without a display; everything else (decoding, timing, input) runs as on a board.

        SIGTERM or SIGINT stops it (the display is restored, exit 0); SIGHUP reloads the
        configuration file (a file with an error is refused and the running one stays).
        Under systemd (NOTIFY_SOCKET) it reports READY=1 once the first frame is on screen,
        sends watchdog keep-alives from its event loop (WATCHDOG_USEC), and STATUS= lines.
        Exit status: 0 stopped, 1 failed while running, 2 bad configuration or usage.
        """
    )

    @Option(name: .long, help: "The INI configuration file.")
    var config: String = RunCommandLine.defaultConfig

    @Option(name: .long, help: "drm (the default) or offscreen:WIDTHxHEIGHT.")
    var display: String = RunCommandLine.defaultDisplay

    func run() throws {
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
            throw ExitCode(2)
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
        } catch StartupExit.success {
            return
        } catch StartupExit.failure {
            throw ExitCode(1)
        }
        let daemon: Daemon
        do {
            daemon = try Daemon(config: configuration, path: config, backend: backend, notifier: notifier, options: options)
        } catch {
            backend.restore()
            log(.error, "cannot start: \(error)")
            throw ExitCode(1)
        }
        let status = daemon.run()
        if status != 0 { throw ExitCode(status) }
    }

    func makeBackend(_ configuration: Configuration, notifier: ServiceNotifier) throws -> DisplayBackend {
        if display.hasPrefix("offscreen:") {
            guard let mode = ModeRequest(String(display.dropFirst("offscreen:".count))), mode.refresh == nil else {
                throw ValidationError("--display offscreen:WIDTHxHEIGHT, e.g. offscreen:1280x800")
            }
            return OffscreenBackend(size: PixelSize(width: mode.width, height: mode.height))
        }
        guard display == "drm" else { throw ValidationError("--display must be drm or offscreen:WIDTHxHEIGHT") }
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
    }
}
