import ArgumentParser
import CarouselDaemon

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
        switch RunCommand(config: config, display: display).run() {
        case .exit(let status):
            if status != 0 { throw ExitCode(status) }
        case .badDisplay(let message):
            throw ValidationError(message)
        }
    }
}
