import ArgumentParser
import CarouselConfig
import CarouselCore
import CarouselDisplay
import CarouselImaging

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the carousel on the display (the default).",
        discussion: """
        --display offscreen:WIDTHxHEIGHT draws into memory instead of a panel, for
        machines without a display; everything else (decoding, timing, input) runs as on a board.
        """
    )

    @Option(name: .long, help: "The INI configuration file.")
    var config: String = "/etc/carouseld/carouseld.ini"

    @Option(name: .long, help: "drm (the default) or offscreen:WIDTHxHEIGHT.")
    var display: String = "drm"

    func run() throws {
        let configuration = try loadConfiguration(config)
        logThreshold = Priority(configuration.logLevel)
        let backend = try makeBackend(configuration)
        let daemon: Daemon
        do {
            daemon = try Daemon(config: configuration, backend: backend)
        } catch {
            backend.restore()
            log(.error, "cannot start: \(error)")
            throw ExitCode(1)
        }
        daemon.onEvent = { event in
            switch event.kind {
            case .didScroll: break
            case .didSelectItem(let i): log(.info, "select \(i)")
            default: log(.debug, "\(event.kind.name)")
            }
        }
        let status = daemon.run()
        if status != 0 { throw ExitCode(status) }
    }

    func makeBackend(_ configuration: Configuration) throws -> DisplayBackend {
        if display.hasPrefix("offscreen:") {
            guard let mode = ModeRequest(String(display.dropFirst("offscreen:".count))), mode.refresh == nil else {
                throw ValidationError("--display offscreen:WIDTHxHEIGHT, e.g. offscreen:1280x800")
            }
            return OffscreenBackend(size: PixelSize(width: mode.width, height: mode.height))
        }
        guard display == "drm" else { throw ValidationError("--display must be drm or offscreen:WIDTHxHEIGHT") }
        return try makeDRMBackend(configuration)
    }
}
