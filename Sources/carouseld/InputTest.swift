import ArgumentParser
import CarouselInput
import CarouselPlatform

struct InputTest: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "input-test",
        abstract: "Print the seat's input events as JSON lines for a while, then exit 0.",
        discussion: """
        Reads touchscreens, pointers and keyboards through libinput (udev backend), \
        as the daemon does, and prints one JSON object a line on stdout:
          {"t":<µs>,"type":"ready","seat":"seat0","devices":N}   after the first dispatch
          {"t":<µs>,"type":"touchDown","slot":0,"x":640.5,"y":400}
          {"t":<µs>,"type":"deviceAdded","id":1,"name":"...","sysname":"event5",...}
        Times are microseconds of CLOCK_MONOTONIC (the kernel's event time stamps); \
        touch and absolute pointer coordinates are pixels of a --size panel. \
        libinput's messages and errors go to stderr.
        """
    )

    @Option(help: "The udev seat to read.")
    var seat: String = "seat0"

    @Option(help: "Panel size WIDTHxHEIGHT that touch and absolute pointer coordinates are scaled to.")
    var size: String = "1920x1080"

    @Option(help: "How long to listen, in seconds.")
    var seconds: Double = 10

    // .unconditional: the matrix often starts with a minus sign ("-1 0 1 0 1 0").
    @Option(parsing: .unconditional, help: "Calibration matrix for touch devices: six numbers 'a b c d e f'.")
    var calibration: String?

    @Flag(help: "Pass libinput's debug messages to stderr.")
    var verbose = false

    func validate() throws {
        guard InputPanelSize(parsing: size) != nil else {
            throw ValidationError("--size: expected WIDTHxHEIGHT in pixels, e.g. 1280x800, not '\(size)'")
        }
        guard seconds.isFinite, seconds >= 0, seconds <= 86_400 else {
            throw ValidationError("--seconds: expected 0 to 86400, not \(seconds)")
        }
    }

    func run() throws {
        if verbose { Log.threshold = .debug }
        var dump = InputEventDump(panel: InputPanelSize(parsing: size)!, microseconds: UInt64(seconds * 1_000_000))
        dump.seat = seat
        dump.verbose = verbose
        if let calibration {
            guard let matrix = InputEventDump.calibration(parsing: calibration) else {
                throw ValidationError("--calibration: expected six numbers, not '\(calibration)'")
            }
            dump.calibration = matrix
        }
        guard dump.run() else { throw ExitCode(1) }
    }
}
