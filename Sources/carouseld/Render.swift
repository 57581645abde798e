import ArgumentParser
import CarouselConfig
import CarouselDaemon
import CarouselPlatform
import CarouselCore
import CarouselDisplay
#if canImport(Glibc)
import Glibc
#endif
import CarouselImaging
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

    /// Offsets are in items; a billion is past any album and far inside
    /// what the page arithmetic can count.
    static let maximumOffset = 1e9

    func run() throws {
        guard let mode = ModeRequest(size), mode.refresh == nil else {
            throw ValidationError("--size must be WIDTHxHEIGHT, each side 1 to \(Viewport.maximumSide), e.g. 1280x800")
        }
        guard offset.isFinite, abs(offset) <= Self.maximumOffset else {
            throw ValidationError("--offset must be a number from -\(Int(Self.maximumOffset)) to \(Int(Self.maximumOffset))")
        }
        let minuteNow = LocalTime.weekMinute(at: Int(Glibc.time(nil))).minute % 1440
        var time = (hour: minuteNow / 60, minute: minuteNow % 60)
        if let clockTime {
            let parts = clockTime.split(separator: ":").map { Int($0) }
            guard parts.count == 2, let h = parts[0], let m = parts[1], (0..<24).contains(h), (0..<60).contains(m) else {
                throw ValidationError("--clock-time must be HH:MM, e.g. 09:41")
            }
            time = (hour: h, minute: m)
        }
        var zoomView: ZoomView?
        if let zoom {
            let parts = zoom.split(separator: ",").map { Double($0) }
            guard parts.count == 3, let s = parts[0], let tx = parts[1], let ty = parts[2], s.isFinite, s > 0, s <= 16,
                  tx.isFinite, ty.isFinite else {
                throw ValidationError("--zoom must be SCALE,TX,TY with SCALE above 0 and at most 16, e.g. 2.5,-480,-300")
            }
            zoomView = ZoomView(item: 0, scale: s, translation: Point(x: tx, y: ty))
        }
        if let crossfade {
            guard crossfade.isFinite, (0...1).contains(crossfade) else {
                throw ValidationError("--crossfade must be a fraction from 0 to 1, e.g. 0.5")
            }
            guard zoom == nil else { throw ValidationError("--crossfade and --zoom cannot be combined (a zoomed picture never fades)") }
        }
        let configuration = try loadConfiguration(config)
        var paths: [String] = []
        do {
            let listing = try configuration.imageListing()
            paths = listing.paths
            for line in listing.skipped { log(.warning, "skipping \(line)") }
        } catch {
            log(.warning, "\(error)")
        }
        let frame = Layout.still(configuration, panel: PixelSize(width: mode.width, height: mode.height), paths: paths,
                                 offset: offset, clock: time, zoom: zoomView, crossfade: crossfade)
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
