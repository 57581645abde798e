import ArgumentParser
import CarouselVideo

/// The helper process a clip is decoded in (see `ClipProcess`): started by
/// carouseld itself, never by people.
struct DecodeClip: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode-clip",
        abstract: "Decode the clip on descriptor 3 for the parent on descriptor 4 (carouseld's own helper).",
        shouldDisplay: false
    )

    @Option(name: .long, help: "The [video] max_pixels limit.")
    var maxPixels: Int

    @Flag(name: .long, help: "Try the codec's V4L2 memory-to-memory decoder first.")
    var hardware = false

    func run() throws {
        let status = ClipProcess.serveHelperRequest(maxPixels: maxPixels, hardware: hardware)
        if status != 0 { throw ExitCode(status) }
    }
}
