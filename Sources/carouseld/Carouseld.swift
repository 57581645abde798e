import ArgumentParser
import CarouselConfig
import CarouselDaemon
import CarouselImaging
import CarouselPlatform
import CarouselVideo

@main
struct Carouseld: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "carouseld",
        abstract: "A full-screen touch image carousel for embedded Linux (DRM/KMS + libinput).",
        version: CarouselVersion.string,
        subcommands: [Run.self, Simulate.self, Render.self, CheckConfig.self, InputTest.self, Probe.self, DRMTest.self,
                      Calibrate.self, DecodePicture.self, DecodeClip.self, Sync.self],
        defaultSubcommand: Run.self
    )

    static func main() {
        // Every command that decodes pictures decodes HEIF and AVIF in a
        // helper process of its own: libheif 1.15 crashes on some damaged
        // HEICs, and that must cost the picture, not the carousel.
        ImageDecoder.heifProcess = DecodingProcess(executable: "/proc/self/exe",
                                                   arguments: ["carouseld", DecodePicture.configuration.commandName!])
        // And clips in one of their own: FFmpeg and its codecs never run
        // in the process that holds the display and the input devices.
        VideoDecoder.clipProcess = ClipProcess(executable: "/proc/self/exe",
                                               arguments: ["carouseld", DecodeClip.configuration.commandName!])
        // The service's own command line skips ArgumentParser's start (see
        // RunCommandLine); its errors end as ArgumentParser would end them.
        if let quick = RunCommandLine(Array(CommandLine.arguments.dropFirst())) {
            var run = Run()
            run.config = quick.config
            run.display = quick.display
            do {
                try run.run()
            } catch {
                exit(withError: error)
            }
            return
        }
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
        let text = try SimulationSession.readScript(script)
        let session: SimulationSession
        do {
            session = try SimulationSession(script: text, base: base, listsImages: config != nil)
        } catch {
            printError("\(error)")
            throw ExitCode(2)
        }
        session.run()
    }
}

struct CheckConfig: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate a configuration file without touching any device (exit 0 if valid, 1 if not).",
        discussion: """
            Reads the file, then the drop-ins in FILE.d/ (*.ini, in name order), then the frame's settings file \
            ([control] settings), each over the ones before, as the daemon does; then lists every key a file sets, \
            with the file and line its value comes from (the rest are at their defaults).
            """
    )

    @Argument(help: "The INI file.")
    var file: String = "/etc/carouseld/carouseld.ini"

    func run() throws {
        do {
            // As root it checks every secret the file names, the daemon's and the sync's.
            let (configuration, sources) = try readConfigurationLayers(file, for: .everyone)
            for line in configuration.cleartextWarnings(for: .everyone) { printError("carouseld: warning: \(line)") }
            for line in sources.ignored { printError("carouseld: warning: settings: \(line)") }
            print("\(file): OK")
            // Where each value comes from, in the schema's order.
            for spec in Schema.keys {
                guard let source = sources.entries["\(spec.section).\(spec.name)"] else { continue }
                print("\(spec.section).\(spec.name) = \(source.value)  (\(source.file):\(source.line))")
            }
        } catch {
            printError("\(error)")
            throw ExitCode(1)
        }
    }
}
