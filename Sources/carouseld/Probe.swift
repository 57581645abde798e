import ArgumentParser
import CarouselDRM
import CarouselFBDev

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
        printInputDevices(seat: seat)
    }
}

/// Prints every DRM card with its connectors and modes, readably, on
/// standard output.
func printDisplays() {
    print("Displays (DRM/KMS):")
    let cards = DRMProbe.cards()
    guard !cards.isEmpty else {
        print("  none: no /dev/dri/card* (is the display driver loaded? e.g. modprobe vc4, or bochs in QEMU)")
        return
    }
    for card in cards { print(describe(card), terminator: "") }
}

private func describe(_ card: DRMProbe.Card) -> String {
    var out = "  \(card.path)"
    if !card.driver.isEmpty {
        out += ": driver \(card.driver)"
        if !card.driverDescription.isEmpty { out += " (\(card.driverDescription))" }
    }
    out += "\n"
    if !card.driver.isEmpty {
        let owner = card.masterHeldElsewhere ? "held by another program" : "free"
        out += "    atomic: \(card.supportsAtomic ? "yes" : "no"), dumb buffers: \(card.hasDumbBuffers ? "yes" : "no"),"
            + " DRM master: \(owner), \(card.crtcCount) CRTC(s), \(card.planeCount) plane(s)\n"
    }
    if let problem = card.problem { out += "    \(problem)\n" }
    if card.problem == nil && card.connectors.isEmpty { out += "    no connectors\n" }
    for c in card.connectors {
        out += "    \(c.name) (connector \(c.id)): \(c.status)"
        if c.widthMM > 0 && c.heightMM > 0 { out += ", \(c.widthMM)x\(c.heightMM) mm" }
        if let o = c.panelOrientation { out += ", panel orientation \(o.rawValue)" }
        out += "\n"
        if let p = c.preferredMode { out += "      preferred mode: \(p.name)\n" }
        if !c.modes.isEmpty {
            out += wrapped(DRMMode.listing(c.modes), lead: "      modes: ", indent: "             ")
        }
    }
    return out
}

/// `words` after `lead`, wrapped before column 100.
private func wrapped(_ words: [String], lead: String, indent: String) -> String {
    var out = "", line = lead
    for w in words {
        if line.count + w.count + 1 > 100 && line != lead && line != indent {
            out += line + "\n"
            line = indent
        }
        line += (line == lead || line == indent ? "" : " ") + w
    }
    return out + line + "\n"
}

/// The framebuffer devices, for `[display] backend = fbdev`.
func printFramebuffers() {
    let framebuffers = FBDevBackend.probe()
    print("Framebuffers (fbdev):")
    if framebuffers.isEmpty { print("  none (an SPI panel's fbtft driver, or vfb, makes one)") }
    for line in framebuffers { print("  \(line)") }
}
