// The words every capability declares with (`CapabilityWords`, `ValueError`,
// `ValueDomain`) belong to the configuration's vocabulary: whoever reads a
// configuration reads them.
@_exported import CarouselWords
import CarouselCapabilities
import CarouselCore
import CarouselPlatform

/// One key of the configuration, read into the whole configuration: the
/// house's keys, and the capabilities' read into their settings in it.
public typealias KeySpec = KeyDeclaration<Configuration>

/// The schema of `carouseld.ini`: every section and key of SPEC.md section 8.
public enum Schema {
    /// Every section in the order the shipped INI and the manual list them:
    /// the capabilities' own sections follow `[images]`.
    public static let sectionSpecs: [SectionSpec] = {
        var specs = houseSections
        let at = specs.firstIndex { $0.name == "images" }.map { $0 + 1 } ?? specs.endIndex
        specs.insert(contentsOf: Capabilities.all.flatMap(\.sections), at: at)
        return specs
    }()

    static let houseSections: [SectionSpec] = [
        SectionSpec(name: "display", help: "The screen: which device, connector and mode, and how the picture is turned."),
        SectionSpec(name: "input", help: "Touchscreens, mice and keyboards, read through libinput."),
        SectionSpec(name: "carousel", help: "How the carousel lays out its items and moves: paging, wrap, momentum."),
        SectionSpec(name: "autoplay", help: "Advancing on its own, and how an advance looks."),
        SectionSpec(name: "zoom", help: "Zooming into one picture with two fingers or a double tap."),
        SectionSpec(name: "images", help: "Which pictures, in what order, and how each fills the screen."),
        SectionSpec(name: "indicator", help: "The page dots."),
        SectionSpec(name: "control", help: "The control socket `carouselctl` talks to, and who may connect."),
        SectionSpec(name: "log", help: "What the daemon logs."),
        SectionSpec(name: "power", help: "When the display switches itself off and on, and the panel's backlight."),
        SectionSpec(name: "overlay", help: "Text over the pictures: a caption on each picture, a clock and pushed text on the screen."),
        SectionSpec(name: "mqtt", help: """
            The daemon as an MQTT client of a broker (Home Assistant, fleets): its state published, commands \
            taken. Off while `broker` is empty.
            """),
        SectionSpec(name: "sync", help: """
            What `carouseld sync` (the carouseld-sync service) fetches into the album. The daemon itself never \
            reads this section and stays off the network; `check-config` checks it like the rest.
            """),
    ]

    public static let sectionNames = sectionSpecs.map(\.name)

    /// Every key, section by section: the house's lists are in
    /// `SchemaKeys/`, one file a section; each capability's are in its room
    /// (`Capabilities.all`), in its own sections or placed in the house's.
    public static let keys: [KeySpec] = {
        let house = displayKeys + inputKeys + carouselKeys + autoplayKeys + zoomKeys + imagesKeys
            + indicatorKeys + controlKeys + logKeys + powerKeys + overlayKeys + mqttKeys + syncKeys
        var bySection = Dictionary(grouping: house, by: \.section)
        for key in Capabilities.all.flatMap(\.keys).map({ $0.reading(into: \Configuration.capabilities) }) {
            var list = bySection[key.section, default: []]
            let at = key.after.flatMap { after in list.firstIndex { $0.name == after }.map { $0 + 1 } } ?? list.endIndex
            list.insert(key, at: at)
            bySection[key.section] = list
        }
        return sectionSpecs.flatMap { bySection[$0.name] ?? [] }
    }()

    static let sections: [String: [KeySpec]] = Dictionary(grouping: keys, by: \.section)

    /// Keys of the model (the ones `simulate`'s `set` is about) come first, so
    /// that `spacing` is the carousel's and not the indicator's.
    static let modelSections = ["carousel", "autoplay", "input"]

    /// The names `set KEY VALUE` accepts without a section.
    public static let shortNames: [String] = {
        var names: [String] = []
        for spec in keys where modelSections.contains(spec.section) {
            let name = spec.section == "autoplay" && spec.name == "enabled" ? "autoplay" : spec.name
            if !names.contains(name) { names.append(name) }
        }
        return names
    }()

    /// The key named `name`: `section.key`, `autoplay` for `[autoplay] enabled`,
    /// or a key name, model sections first.
    public static func lookup(_ name: String) -> KeySpec? {
        if name == "autoplay" { return keys.first { $0.section == "autoplay" && $0.name == "enabled" } }
        let parts = name.split(separator: ".", maxSplits: 1)
        if parts.count == 2 {
            return keys.first { $0.section == parts[0] && $0.name == parts[1] }
        }
        for section in modelSections {
            if let spec = keys.first(where: { $0.section == section && $0.name == name }) { return spec }
        }
        return keys.first { $0.name == name }
    }

    // MARK: - Value parsers (ValueText's, in the words room, which capabilities' keys use too)
    //
    // The keys are written with KeyDeclaration's builders (`.flag`, `.number`,
    // `.choice`, ...), the same for the house's keys and a capability's.

    static func bool(_ v: String) throws(ValueError) -> Bool { try ValueText.bool(v) }

    static func number(_ v: String, _ range: ClosedRange<Double>, unit: String = "") throws(ValueError) -> Double {
        try ValueText.number(v, range, unit: unit)
    }

    static func integer(_ v: String, _ range: ClosedRange<Int>) throws(ValueError) -> Int { try ValueText.integer(v, range) }

    static func choice<E: RawRepresentable & CaseIterable>(_ v: String, _ type: E.Type) throws(ValueError) -> E
        where E.RawValue == String {
        try ValueText.choice(v, type)
    }

    static func logPriority(_ v: String) throws(ValueError) -> LogPriority {
        guard let p = LogPriority(name: v.lowercased()) else {
            throw ValueError("expected one of: \(LogPriority.allCases.map(\.description).joined(separator: ", "))")
        }
        return p
    }

    static func color(_ v: String) throws(ValueError) -> PixelColor { try ValueText.color(v) }

    static func idList(_ v: String) throws(ValueError) -> [UInt32] {
        if v.isEmpty { return [] }
        var ids: [UInt32] = []
        for part in v.split(separator: ",") {
            guard let id = UInt32(part.trimmingWhitespace()) else { throw ValueError("expected comma-separated numeric ids, got '\(part)'") }
            ids.append(id)
        }
        return ids
    }

    /// A bound as people write it: 86400, not 86400.0.
    public static func format(_ d: Double) -> String { ValueText.format(d) }

    /// `auto` (or empty) means "choose automatically".
    static func autoOrValue(_ v: String) -> String? { ValueText.autoOrValue(v) }
}
