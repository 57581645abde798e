import ArgumentParser
import CarouselDaemon

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
        DeviceProbe.printReport(seat: seat)
    }
}
