/// What a request may touch on the frame. Every request says which one it
/// needs (`ControlRequest.capability`, and per key for `set`:
/// `Schema.capability`); every way in holds a `Grant`, the capabilities it
/// allows. Nothing else decides what a peer may do.
public enum Capability: String, CaseIterable, Comparable, Sendable {
    /// Reading what the frame shows and holds: status, list, version, help,
    /// a screenshot handed to the one who asked.
    case look
    /// Moving the frame: next, prev, goto, pause, play, resume, zoom,
    /// display, brightness, overlay text.
    case drive
    /// `set` of a key that only changes how the frame looks and moves
    /// (interval, transition, effect, the dots, the clock, brightness
    /// levels...): nothing on the board it names, no memory it sizes.
    case tune
    /// `set` of any other key that names nothing on the board (cache sizes,
    /// the display's mode, the log level...), and `reload`.
    case configure
    /// What reaches past the frame: `set` of a key that names a path, a
    /// device, a broker, credentials or the control socket, and
    /// `screenshot PATH` (a file written where the peer says).
    case administer

    public static func < (a: Capability, b: Capability) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// The words a refusal uses for it.
    public var meaning: String {
        switch self {
        case .look: "looking"
        case .drive: "driving the frame"
        case .tune: "tuning how it looks and moves"
        case .configure: "configuring it"
        case .administer: "administering the board (paths, devices, brokers, credentials, the control socket)"
        }
    }
}

/// What one way in to the frame may do: the capabilities it allows, under
/// the name a refusal gives it.
public struct Grant: Equatable, Sendable {
    /// The way in, as a refusal names it ("MQTT").
    public let name: String
    public let allows: Set<Capability>

    public init(name: String, allows: Set<Capability>) {
        self.name = name
        self.allows = allows
    }

    /// The control socket's peers: root and the users and groups
    /// `[control]` lets connect (the kernel's peer credentials decide who
    /// that is). They may do everything.
    public static let controlSocket = Grant(name: "the control socket", allows: Set(Capability.allCases))

    /// Whoever can publish to the frame's command topics at its broker: they
    /// may look, drive and tune, never reach past the frame.
    public static let mqtt = Grant(name: "MQTT", allows: [.look, .drive, .tune])

    /// The frame's page (`carouseld-web`): its owner may look, drive, tune
    /// and configure, never reach past the frame (paths, devices, brokers,
    /// credentials are shown on the page, not edited there). Its guests get
    /// less, by the page's own rule (`WebRole`).
    public static let web = Grant(name: "the web page", allows: [.look, .drive, .tune, .configure])

    public func allows(_ capability: Capability) -> Bool { allows.contains(capability) }

    /// The one-line refusal of `what` (the request as the peer wrote it,
    /// without values), which needs `needed`; nil when the grant allows it.
    public func refusal(of what: String, needing needed: Capability) -> String? {
        guard !allows(needed) else { return nil }
        let allowed = Capability.allCases.filter(allows).map(\.rawValue).joined(separator: ", ")
        return "\(what) is not granted to \(name): it needs \(needed.rawValue) (\(needed.meaning));"
            + " \(name) may: \(allowed.isEmpty ? "nothing" : allowed)"
    }
}
