import ArgumentParser
import CarouselImaging

/// The helper process a HEIF or AVIF picture is decoded in (see
/// `DecodingProcess`): started by carouseld itself, never by people.
struct DecodePicture: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode-picture",
        abstract: "Decode the picture on descriptor 3 into descriptor 4 (carouseld's own helper).",
        shouldDisplay: false
    )

    @Option(name: .long, help: "The [images] max_pixels limit.")
    var maxPixels: Int

    @Option(name: .long, help: "The bytes a decode may hold ([images] decode_mb).")
    var decodeBudget: Int = .max

    func run() throws {
        let status = DecodingProcess.serveHelperRequest(maxPixels: maxPixels, decodeBudget: decodeBudget)
        if status != 0 { throw ExitCode(status) }
    }
}
