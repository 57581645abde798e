import CDRM
import CarouselDisplay

/// What the machine's DRM cards offer: for `carouseld probe`, and to wait
/// until a display is connected. Reading never modesets; connectors are
/// probed (the driver detects the display and reads its EDID again).
public enum DRMProbe {
    public struct Card: Sendable {
        public var path: String
        /// The kernel driver ("bochs-drm", "vc4", "i915") and its description.
        public var driver = ""
        public var driverDescription = ""
        public var hasDumbBuffers = false
        /// Whether the driver accepts DRM_CLIENT_CAP_ATOMIC.
        public var supportsAtomic = false
        /// Whether another program is DRM master (a desktop, X, a kiosk):
        /// carouseld could not modeset while it is.
        public var masterHeldElsewhere = false
        public var crtcCount = 0
        public var planeCount = 0
        public var connectors: [Connector] = []
        /// Why the card could not be read in full (permissions, a render-only
        /// device), with the hint.
        public var problem: String?
    }

    public struct Connector: Sendable {
        /// The kernel's name: "HDMI-A-1".
        public var name: String
        public var id: UInt32
        /// "connected", "disconnected" or "unknown".
        public var status: String
        /// Physical size in millimetres (0 when the display does not say).
        public var widthMM: Int
        public var heightMM: Int
        /// In the kernel's order (the preferred mode first).
        public var modes: [DRMMode]
        /// The DRM "panel orientation" property, if the connector has one.
        public var panelOrientation: PanelOrientation?

        public var preferredMode: DRMMode? { modes.first(where: \.isPreferred) }
    }

    /// Every `/dev/dri/card*`, in number order.
    public static func cards() -> [Card] {
        DRMDevice.cardPaths().map(card)
    }

    /// One card, read as far as it can be.
    public static func card(_ path: String) -> Card {
        var card = Card(path: path)
        let device: DRMDevice
        do {
            device = try DRMDevice(path: path)
        } catch {
            card.problem = "\(error)"
            return card
        }
        (card.driver, card.driverDescription) = device.driver
        card.hasDumbBuffers = device.capability(DRM_CAP_DUMB_BUFFER) ?? 0 != 0
        // Opening a card with no master makes the opener master: if this
        // descriptor is not (and cannot become) master, someone else is.
        card.masterHeldElsewhere = !device.becomeMaster()
        let universal = device.setClientCapability(DRM_CLIENT_CAP_UNIVERSAL_PLANES)
        card.supportsAtomic = universal && device.setClientCapability(DRM_CLIENT_CAP_ATOMIC)
        let resources: DRMDevice.Resources
        do {
            resources = try device.resources()
        } catch {
            card.problem = "no display outputs (a render-only device?): \(error)"
            return card
        }
        card.crtcCount = resources.crtcs.count
        card.planeCount = (try? device.planes().count) ?? 0
        for id in resources.connectors {
            guard let c = try? device.connector(id) else { continue }
            card.connectors.append(Connector(name: c.name, id: c.id, status: c.status.rawValue, widthMM: c.widthMM,
                                             heightMM: c.heightMM, modes: c.modes,
                                             panelOrientation: c.properties.panelOrientation))
        }
        return card
    }

    /// The first connected display, "/dev/dri/card0 HDMI-A-1", on `device`
    /// (else any card), named `connector` if given; `nil` if there is none.
    public static func connectedDisplay(device: String? = nil, connector: String? = nil) -> String? {
        for path in device.map({ [$0] }) ?? DRMDevice.cardPaths() {
            guard let d = try? DRMDevice(path: path), let resources = try? d.resources() else { continue }
            for id in resources.connectors {
                guard let c = try? d.connector(id) else { continue }
                if let connector, !DRMConnectorName.matches(connector, c.name) { continue }
                if c.status == .connected || (connector != nil && c.status == .unknown) { return "\(path) \(c.name)" }
            }
        }
        return nil
    }

    /// `carouseld probe`'s display section: every card with its connectors
    /// and modes (the preferred one marked '*'), in lines readable at 100
    /// columns, or why there is none. Each line ends in a newline.
    public static func report(_ cards: [Card] = cards()) -> String {
        guard !cards.isEmpty else {
            return "  none: no /dev/dri/card* (is the display driver loaded? e.g. modprobe vc4, or bochs in QEMU)\n"
        }
        return cards.map(\.report).joined()
    }
}

extension DRMProbe.Card {
    /// The card's lines of `carouseld probe`: driver, capabilities, and
    /// each connector with its state, size and modes.
    public var report: String {
        var out = "  \(path)"
        if !driver.isEmpty {
            out += ": driver \(driver)"
            if !driverDescription.isEmpty { out += " (\(driverDescription))" }
        }
        out += "\n"
        if !driver.isEmpty {
            let owner = masterHeldElsewhere ? "held by another program" : "free"
            out += "    atomic: \(supportsAtomic ? "yes" : "no"), dumb buffers: \(hasDumbBuffers ? "yes" : "no"),"
                + " DRM master: \(owner), \(crtcCount) CRTC(s), \(planeCount) plane(s)\n"
        }
        if let problem { out += "    \(problem)\n" }
        if problem == nil && connectors.isEmpty { out += "    no connectors\n" }
        for c in connectors {
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
