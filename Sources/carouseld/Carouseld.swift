import ArgumentParser
import CarouselConfig
import CarouselDaemon
import CarouselPlatform
import CarouselCore
import CarouselDisplay
import CarouselRender
import CarouselImaging
import CarouselSimulation

#if canImport(Glibc)
import Glibc
#endif

@main
struct Carouseld: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "carouseld",
        abstract: "A full-screen touch image carousel for embedded Linux (DRM/KMS + libinput).",
        version: CarouselVersion.string,
        subcommands: [Run.self, Simulate.self, Render.self, CheckConfig.self, InputTest.self, Probe.self, DRMTest.self,
                      Calibrate.self, DecodePicture.self],
        defaultSubcommand: Run.self
    )

    static func main() {
        // Every command that decodes pictures decodes HEIF and AVIF in a
        // helper process of its own: libheif 1.15 crashes on some damaged
        // HEICs, and that must cost the picture, not the carousel.
        ImageDecoder.heifProcess = DecodingProcess(executable: "/proc/self/exe",
                                                   arguments: ["carouseld", DecodePicture.configuration.commandName!])
        main(nil)
    }
}

struct Simulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the carousel model headless on a virtual 60 Hz clock and print JSON lines.",
        discussion: """
        SCRIPT has one command a line ('#' starts a comment, times in ms from start):
          size WIDTHxHEIGHT        set KEY VALUE        images COUNT
          at MS down X Y [ID] | move X Y [ID] | up [ID] | cancel [ID] | probe
          at MS command next|prev|goto I [MS]|pause|resume|zoom SCALE|zoom reset
          at MS frame PATH.png     until MS
        ID tells fingers apart (0 to 9, default 0): two fingers pinch with [zoom] on.
        Output: one JSON object a line, in time order. A bad line exits 2 with 'line N: ...'.
        """
    )

    @Argument(help: "The script file ('-' for standard input).")
    var script: String

    @Option(name: .long, help: "An INI configuration file applied before the script's 'set' lines.")
    var config: String?

    func run() throws {
        var base = Configuration()
        if let config { base = try loadConfiguration(config) }
        let text: String
        if script == "-" {
            var lines: [String] = []
            while let l = readLine(strippingNewline: false) { lines.append(l) }
            text = lines.joined()
        } else {
            text = try readTextFile(script)
        }
        let parsed: SimulationScript
        do {
            parsed = try SimulationScript.parse(text, configuration: base)
        } catch {
            printError("\(error)")
            throw ExitCode(2)
        }
        // Images: a configured folder (or list) gives the pictures of `frame`
        // steps, and the item count unless the script sets one.
        var paths: [String] = []
        var count = parsed.itemCount
        if config != nil {
            do {
                let listing = try base.imageListing()
                paths = listing.paths
                for line in listing.skipped { log(.warning, "skipping \(line)") }
                if !parsed.itemCountGiven { count = paths.count }
            } catch {
                if parsed.hasFrames || !parsed.itemCountGiven {
                    log(.warning, "\(error); simulating \(count) items without pictures")
                }
            }
        }
        let effective = parsed.configuration(base: base)
        var painter: FramePainter? = nil
        var out = ""
        out.reserveCapacity(1 << 16)
        func flush() {
            writeAll(1, out)
            out.removeAll(keepingCapacity: true)
        }
        SimulationRunner.run(parsed, base: base, itemCount: count, emit: { line in
            out += line
            out += "\n"
            if out.utf8.count > 1 << 16 { flush() }
        }, diagnostic: { printError("carouseld: \($0)") }, frame: { request in
            let rotation = effective.rotation
            let w = Int(parsed.viewport.width), h = Int(parsed.viewport.height)
            // The script's size is the layout; the PNG is what the panel shows.
            let panel = rotation == .clockwise90 || rotation == .clockwise270
                ? PixelSize(width: h, height: w) : PixelSize(width: w, height: h)
            // Captions as the daemon draws them; no clock (scripts run on a virtual clock).
            if painter == nil { painter = Layout.stillPainter(effective, panel: panel, paths: paths) }
            let (frame, failures) = painter!.paint(offset: request.offset, count: request.model.numberOfItems,
                                                   page: request.snapshot.page, pageCount: request.model.numberOfPages,
                                                   crossfade: request.model.crossfade(at: request.time),
                                                   zoom: request.model.zoomView(at: request.time))
            for failure in failures { log(.warning, "cannot show \(failure.message)") }
            do {
                try frame.writePNG(to: request.path)
            } catch {
                return "\(error)"
            }
            return nil
        })
        flush()
    }
}

struct CheckConfig: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate a configuration file without touching any device (exit 0 if valid, 1 if not)."
    )

    @Argument(help: "The INI file.")
    var file: String = "/etc/carouseld/carouseld.ini"

    func run() throws {
        do {
            _ = try readConfiguration(file)
            print("\(file): OK")
        } catch let error as ConfigError {
            printError("\(error)")
            throw ExitCode(1)
        } catch {
            printError("\(error)")
            throw ExitCode(1)
        }
    }
}
