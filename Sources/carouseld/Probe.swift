import ArgumentParser
import CarouselDRM
import CarouselFBDev
import CarouselInput

struct Probe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "List the displays (DRM cards, connectors, modes) and input devices carouseld could use, without changing them.",
        discussion: """
        Names printed here are what [display] device, connector and mode take. \
        The preferred mode of each connector is marked with '*'.
        """
    )

    @Option(name: .long, help: "The udev seat whose input devices to list.")
    var seat: String = "seat0"

    func run() throws {
        printDisplays()
        printFramebuffers()
        for line in InputProbe.report(seat: seat) { print(line) }
    }
}

/// Prints every DRM card with its connectors and modes, readably, on
/// standard output.
func printDisplays() {
    print("Displays (DRM/KMS):")
    print(DRMProbe.report(), terminator: "")
}

/// The framebuffer devices, for `[display] backend = fbdev`.
func printFramebuffers() {
    let framebuffers = FBDevBackend.probe()
    print("Framebuffers (fbdev):")
    if framebuffers.isEmpty { print("  none (an SPI panel's fbtft driver, or vfb, makes one)") }
    for line in framebuffers { print("  \(line)") }
}
