import ArgumentParser
import CarouselConfig
import CarouselDaemon
import CarouselPlatform
import CarouselRender

struct Render: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Render one frame of the carousel at a scroll offset and write it as a PNG.",
        discussion: """
        Lays the carousel out as the configuration says (rotation included: the
        PNG is what the panel shows), decodes the images, and writes the frame.
        Files that cannot be decoded are skipped with one log line each, before
        the offset is counted: --offset 1 is the second picture that shows.
        """
    )

    @Option(name: .long, help: "The INI configuration file.")
    var config: String = "/etc/carouseld/carouseld.ini"

    @Option(name: .long, help: "Panel size, WIDTHxHEIGHT.")
    var size: String

    // Unconditional parsing: "--offset -0.5" is a negative number, not a missing value.
    @Option(name: .long, parsing: .unconditional, help: "Scroll offset in items (1.5 is half-way between items 1 and 2).")
    var offset: Double = 0

    @Option(name: .long, help: "Where to write the PNG.")
    var out: String

    @Option(name: .long, help: "The time [overlay] clock shows, HH:MM (default: the local time now).")
    var clockTime: String?
    @Option(name: .long, parsing: .unconditional,
            help: ArgumentHelp("The picture at the offset zoomed: its scale and the translation of its frame, layout pixels (a status's zoom; 2.5,-480,-300 is a double tap at 320,200).",
                               valueName: "scale,tx,ty"))
    var zoom: String?
    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("The crossfade ([autoplay] effect = crossfade) from the picture at the offset to the next one, this far into it: 0 is the first picture, 1 the next.",
                                            valueName: "fraction"))
    var crossfade: Double?
    @Option(name: .long, help: ArgumentHelp("The picture at the offset this many seconds into its rest, moved as [ken_burns] moves it (enabled = true).",
                                            valueName: "seconds"))
    var kenBurns: Double?

    func run() throws {
        let request: StillFrameRequest
        do {
            request = try StillFrameRequest(size: size, offset: offset, clockTime: clockTime, zoom: zoom, crossfade: crossfade,
                                            kenBurns: kenBurns)
        } catch {
            throw ValidationError(error.message)
        }
        let configuration = try loadConfiguration(config)
        let frame = Layout.still(configuration, request)
        do {
            try frame.writePNG(to: out)
        } catch {
            printError("carouseld: \(error)")
            throw ExitCode(1)
        }
    }
}

/// `readConfiguration` for the tools: a bad file exits 2 with `FILE:LINE: message`.
func loadConfiguration(_ path: String) throws -> Configuration {
    do {
        return try readConfiguration(path)
    } catch let error as ConfigError {
        printError("carouseld: \(error)")
        throw ExitCode(2)
    } catch let error as FileReadError {
        throw ValidationError(error.message)
    }
}
