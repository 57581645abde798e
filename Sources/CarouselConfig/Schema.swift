import CarouselCore
import CarouselPlatform

/// What values a key takes: the one statement of its range, from which its
/// validation, its `accepts` text and the tests that walk its edges all come.
public enum ValueDomain: Sendable, Equatable {
    case boolean
    /// A number in `range`; `unit` names it in messages.
    case number(ClosedRange<Double>, unit: String)
    case integer(ClosedRange<Int>)
    /// `auto` (or empty), or a whole number in `range`.
    case autoOrInteger(ClosedRange<Int>)
    /// One of these words (case-insensitive).
    case choice([String])
    case color
    /// Free text checked by the key's own rule (paths, names, lists).
    case text

    /// Values at and just past the edges, for tests that must try them all.
    public var edgeValues: [String] {
        switch self {
        case .boolean:
            return ["true", "false", "on", "0", "maybe"]
        case let .number(range, _):
            let lo = range.lowerBound, hi = range.upperBound
            let step = max((hi - lo) / 1e6, 1e-9)
            return [lo, hi, (lo + hi) / 2, lo - step, hi + step, lo.nextDown, hi.nextUp].map { Schema.format($0) }
        case let .integer(range):
            let lo = range.lowerBound, hi = range.upperBound
            return [lo, hi, lo + (hi - lo) / 2, lo - 1, hi + 1].map(String.init) + ["\(lo).5"]
        case let .autoOrInteger(range):
            return ValueDomain.integer(range).edgeValues + ["auto", "AUTO", "", "automatic"]
        case let .choice(words):
            return words + words.map { $0.uppercased() } + ["nonsense"]
        case .color:
            return ["#000000", "#FFFFFF", "#FFFFFF00", "#FFFFFFFF", "#FFF", "#GGGGGG"]
        case .text:
            return []
        }
    }
}

/// One key of the configuration: its section, name and how its value is
/// checked and stored.
public struct KeySpec: Sendable {
    public let section: String
    public let name: String
    /// What values it takes.
    public let domain: ValueDomain
    /// What the key accepts, for error messages and `--help`.
    public let accepts: String
    let apply: @Sendable (inout Configuration, String) throws(ValueError) -> Void
}

/// The schema of `carouseld.ini`: every section and key of SPEC.md section 8.
public enum Schema {
    public static let sectionNames = ["display", "input", "carousel", "autoplay", "zoom", "images", "indicator", "control", "log",
                                      "power", "overlay", "mqtt", "sync"]

    public static let keys: [KeySpec] = display + input + carousel + autoplay + zoom + images + indicator + control + log + power
        + overlay + mqtt + sync

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

    // MARK: - Value parsers

    static func bool(_ v: String) throws(ValueError) -> Bool {
        switch v.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: throw ValueError("expected true or false")
        }
    }

    static func number(_ v: String, _ range: ClosedRange<Double>, unit: String = "") throws(ValueError) -> Double {
        guard let d = Double(v), d.isFinite else { throw ValueError("expected a number\(unit.isEmpty ? "" : " (\(unit))")") }
        guard range.contains(d) else {
            throw ValueError("out of range: allowed \(format(range.lowerBound)) to \(format(range.upperBound))\(unit.isEmpty ? "" : " \(unit)")")
        }
        return d
    }

    static func integer(_ v: String, _ range: ClosedRange<Int>) throws(ValueError) -> Int {
        guard let i = Int(v) else { throw ValueError("expected a whole number") }
        guard range.contains(i) else { throw ValueError("out of range: allowed \(range.lowerBound) to \(range.upperBound)") }
        return i
    }

    static func choice<E: RawRepresentable & CaseIterable>(_ v: String, _: E.Type) throws(ValueError) -> E where E.RawValue == String {
        guard let e = E(rawValue: v.lowercased()) else {
            throw ValueError("expected one of: \(E.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return e
    }

    static func logPriority(_ v: String) throws(ValueError) -> LogPriority {
        guard let p = LogPriority(name: v.lowercased()) else {
            throw ValueError("expected one of: \(LogPriority.allCases.map(\.description).joined(separator: ", "))")
        }
        return p
    }

    static func color(_ v: String) throws(ValueError) -> PixelColor {
        guard let c = PixelColor(hex: v) else { throw ValueError("expected a colour #RRGGBB or #RRGGBBAA") }
        return c
    }

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
    public static func format(_ d: Double) -> String {
        d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d)
    }

    /// `auto` (or empty) means "choose automatically".
    static func autoOrValue(_ v: String) -> String? {
        v.isEmpty || v.lowercased() == "auto" ? nil : v
    }

    /// A key checked by its own rule (`accepts` says what it takes).
    static func key(_ section: String, _ name: String, _ accepts: String,
                            _ apply: @escaping @Sendable (inout Configuration, String) throws(ValueError) -> Void) -> KeySpec {
        KeySpec(section: section, name: name, domain: .text, accepts: accepts, apply: apply)
    }

    static func flag(_ section: String, _ name: String,
                             _ store: @escaping @Sendable (inout Configuration, Bool) -> Void) -> KeySpec {
        KeySpec(section: section, name: name, domain: .boolean, accepts: "true or false") { c, v throws(ValueError) in
            store(&c, try bool(v))
        }
    }

    /// A number in `range`; `note` follows the range in `accepts`.
    static func number(_ section: String, _ name: String, _ range: ClosedRange<Double>, unit: String = "",
                               note: String = "",
                               _ store: @escaping @Sendable (inout Configuration, Double) -> Void) -> KeySpec {
        let accepts = (unit.isEmpty ? "" : unit + ", ") + "\(format(range.lowerBound)) to \(format(range.upperBound))" + note
        return KeySpec(section: section, name: name, domain: .number(range, unit: unit), accepts: accepts) { c, v throws(ValueError) in
            store(&c, try number(v, range, unit: unit))
        }
    }

    static func integer(_ section: String, _ name: String, _ range: ClosedRange<Int>,
                                _ store: @escaping @Sendable (inout Configuration, Int) -> Void) -> KeySpec {
        KeySpec(section: section, name: name, domain: .integer(range),
                accepts: "\(range.lowerBound) to \(range.upperBound)") { c, v throws(ValueError) in
            store(&c, try integer(v, range))
        }
    }

    static func choice<E: RawRepresentable & CaseIterable & Sendable>(
        _ section: String, _ name: String, _ type: E.Type,
        _ store: @escaping @Sendable (inout Configuration, E) -> Void
    ) -> KeySpec where E.RawValue == String {
        let words = E.allCases.map(\.rawValue)
        let accepts = words.count == 2 ? "\(words[0]) or \(words[1])"
            : words.dropLast().joined(separator: ", ") + " or " + words.last!
        return KeySpec(section: section, name: name, domain: .choice(words), accepts: accepts) { c, v throws(ValueError) in
            store(&c, try choice(v, type))
        }
    }

    private static func colorKey(_ section: String, _ name: String,
                                 _ store: @escaping @Sendable (inout Configuration, PixelColor) -> Void) -> KeySpec {
        KeySpec(section: section, name: name, domain: .color, accepts: "#RRGGBB or #RRGGBBAA") { c, v throws(ValueError) in
            store(&c, try color(v))
        }
    }

    // MARK: - Sections

    static let display: [KeySpec] = [
        choice("display", "backend", DisplayBackendKind.self) { $0.display.backend = $1 },
        key("display", "device", "auto or a DRM device path such as /dev/dri/card0") { c, v throws(ValueError) in
            let d = autoOrValue(v)
            if let d, !d.hasPrefix("/") { throw ValueError("expected auto or an absolute path such as /dev/dri/card0") }
            c.display.device = d
        },
        key("display", "connector", "auto or a connector name such as HDMI-A-1") { c, v throws(ValueError) in
            c.display.connector = autoOrValue(v)
        },
        key("display", "mode", "auto, WIDTHxHEIGHT or WIDTHxHEIGHT@HZ") { c, v throws(ValueError) in
            guard let m = autoOrValue(v) else { c.display.mode = nil; return }
            guard let mode = ModeRequest(m) else { throw ValueError("expected auto, WIDTHxHEIGHT or WIDTHxHEIGHT@HZ (e.g. 1920x1080@60)") }
            c.display.mode = mode
        },
        KeySpec(section: "display", name: "rotation", domain: .choice(["0", "90", "180", "270"]),
                accepts: "0, 90, 180 or 270") { c, v throws(ValueError) in
            guard let r = Int(v), [0, 90, 180, 270].contains(r) else { throw ValueError("expected 0, 90, 180 or 270") }
            c.display.rotation = r
        },
        choice("display", "api", DisplayAPI.self) { $0.display.api = $1 },
        colorKey("display", "background") { $0.display.background = $1 },
        flag("display", "zero_copy") { $0.display.zeroCopy = $1 },
    ]

    static let input: [KeySpec] = [
        key("input", "seat", "a udev seat name") { c, v throws(ValueError) in
            guard !v.isEmpty else { throw ValueError("expected a seat name such as seat0") }
            c.input.seat = v
        },
        number("input", "touch_slop", 1...200, unit: "pixels") { $0.carousel.touchSlop = $1 },
        key("input", "calibration", "six numbers or empty") { c, v throws(ValueError) in
            if v.isEmpty { c.input.calibration = nil; return }
            let parts = v.split(whereSeparator: { $0 == " " || $0 == "," }).map { Double($0) }
            guard parts.count == 6, parts.allSatisfy({ $0?.isFinite == true }) else {
                throw ValueError("expected six numbers (libinput calibration matrix), e.g. 1 0 0 0 1 0")
            }
            c.input.calibration = parts.map { $0! }
        },
        flag("input", "pointer") { $0.input.pointer = $1 },
        flag("input", "keyboard") { $0.input.keyboard = $1 },
    ]

    static let carousel: [KeySpec] = [
        flag("carousel", "wrap") { $0.carousel.wrap = $1 },
        flag("carousel", "vertical") { $0.carousel.vertical = $1 },
        flag("carousel", "paging") { $0.carousel.paging = $1 },
        integer("carousel", "items_per_page", 1...100) { $0.carousel.itemsPerPage = $1 },
        flag("carousel", "truncate_final_page") { $0.carousel.truncateFinalPage = $1 },
        choice("carousel", "alignment", Alignment.self) { $0.carousel.alignment = $1 },
        // Pixels no larger than the screen can be (Viewport.maximumSide), which
        // is what the scaler and KMS take.
        KeySpec(section: "carousel", name: "item_size", domain: .number(0.05...ItemSize.maximumPixels, unit: ""),
                accepts: "a fraction of the screen (0.05 to 1.0) or pixels (> 1, at most \(format(ItemSize.maximumPixels)))") {
            c, v throws(ValueError) in
            c.carousel.itemSize = ItemSize(configValue: try number(v, 0.05...ItemSize.maximumPixels))!
        },
        number("carousel", "spacing", 0...10_000, unit: "pixels") { $0.carousel.spacing = $1 },
        flag("carousel", "bounces") { $0.carousel.bounces = $1 },
        flag("carousel", "scroll_enabled") { $0.carousel.scrollEnabled = $1 },
        number("carousel", "deceleration_rate", 0.9...0.9999, note: " per millisecond") { $0.carousel.decelerationRate = $1 },
        number("carousel", "autoscroll", -100...100, unit: "items per second", note: " (0 = off)") { $0.carousel.autoscroll = $1 },
        integer("carousel", "start_index", 0...10_000_000) { $0.carousel.startIndex = $1 },
        number("carousel", "idle_return", 0...86_400, unit: "seconds", note: " (0 = never)") { $0.carousel.idleReturn = $1 },
    ]

    static let autoplay: [KeySpec] = [
        flag("autoplay", "enabled") { $0.autoplay.enabled = $1 },
        number("autoplay", "interval", 0.1...86_400, unit: "seconds") { $0.autoplay.interval = $1 },
        number("autoplay", "transition", 0...60, unit: "seconds") { $0.autoplay.transition = $1 },
        KeySpec(section: "autoplay", name: "start_delay", domain: .number(0...86_400, unit: "seconds"),
                accepts: "seconds, 0 to 86400, or empty for the interval") { c, v throws(ValueError) in
            c.autoplay.startDelay = v.isEmpty ? nil : try number(v, 0...86_400, unit: "seconds")
        },
        number("autoplay", "resume_delay", 0...86_400, unit: "seconds") { $0.autoplay.resumeDelay = $1 },
        choice("autoplay", "direction", AutoplayDirection.self) { $0.autoplay.direction = $1 },
        choice("autoplay", "at_end", AutoplayAtEnd.self) { $0.autoplay.atEnd = $1 },
        choice("autoplay", "effect", TransitionEffect.self) { $0.autoplay.effect = $1 },
    ]

    static let zoom: [KeySpec] = [
        flag("zoom", "enabled") { $0.zoom.enabled = $1 },
        number("zoom", "max_scale", 1...16, unit: "times the fitted picture") { $0.zoom.maxScale = $1 },
        flag("zoom", "double_tap") { $0.zoom.doubleTap = $1 },
    ]

    static let images: [KeySpec] = [
        key("images", "path", "a folder") { c, v throws(ValueError) in
            guard !v.isEmpty else { throw ValueError("expected a folder path") }
            c.images.path = v
        },
        key("images", "files", "comma-separated file paths, or empty") { c, v throws(ValueError) in
            c.images.files = v.split(separator: ",").map { String($0.trimmingWhitespace()) }.filter { !$0.isEmpty }
        },
        choice("images", "order", ImageOrder.self) { $0.images.order = $1 },
        choice("images", "fit", FitMode.self) { $0.images.fit = $1 },
        number("images", "blur_radius", 0...500, unit: "pixels", note: " (fit = blur)") { $0.images.blurRadius = $1 },
        number("images", "dim", 0...1, note: " (fit = blur: 0 keeps the fill's brightness, 1 is black)") { $0.images.dim = $1 },
        integer("images", "max_pixels", 1_000_000...1_000_000_000) { $0.images.maxPixels = $1 },
        KeySpec(section: "images", name: "cache_mb", domain: .autoOrInteger(8...4096),
                accepts: "auto or 8 to 4096 (MiB)") { c, v throws(ValueError) in
            c.images.cacheMB = try autoOrValue(v).map { v throws(ValueError) in try integer(v, 8...4096) }
        },
        flag("images", "resume") { $0.images.resume = $1 },
        flag("images", "recursive") { $0.images.recursive = $1 },
    ]

    static let indicator: [KeySpec] = [
        flag("indicator", "enabled") { $0.indicator.enabled = $1 },
        choice("indicator", "position", IndicatorPosition.self) { $0.indicator.position = $1 },
        colorKey("indicator", "color") { $0.indicator.color = $1 },
        colorKey("indicator", "current_color") { $0.indicator.currentColor = $1 },
        number("indicator", "size", 1...200, unit: "pixels") { $0.indicator.size = $1 },
        number("indicator", "spacing", 0...500, unit: "pixels") { $0.indicator.spacing = $1 },
        number("indicator", "margin", 0...2000, unit: "pixels") { $0.indicator.margin = $1 },
        flag("indicator", "hides_for_single_page") { $0.indicator.hidesForSinglePage = $1 },
    ]

    static let control: [KeySpec] = [
        key("control", "socket", "an absolute path") { c, v throws(ValueError) in
            guard v.hasPrefix("/"), v.utf8.count < 108 else { throw ValueError("expected an absolute path shorter than 108 bytes") }
            c.control.socket = v
        },
        key("control", "mode", "octal permissions such as 0660") { c, v throws(ValueError) in
            guard let m = UInt32(v, radix: 8), m <= 0o777 else { throw ValueError("expected octal permissions such as 0660") }
            c.control.mode = m
        },
        key("control", "group", "a group name or empty") { c, v throws(ValueError) in c.control.group = v.isEmpty ? nil : v },
        key("control", "allow_uids", "comma-separated uids or empty") { c, v throws(ValueError) in c.control.allowUIDs = try idList(v) },
        key("control", "allow_gids", "comma-separated gids or empty") { c, v throws(ValueError) in c.control.allowGIDs = try idList(v) },
        integer("control", "max_clients", 1...1024) { $0.control.maxClients = $1 },
    ]

    static let power: [KeySpec] = [
        // A week at most: longer is a typo (seconds for minutes) more likely than a wish.
        number("power", "idle_off", 0...10_080, unit: "minutes", note: " (0 = never)") { $0.power.idleOff = $1 },
        choice("power", "wake", WakePicture.self) { $0.power.wake = $1 },
        key("power", "backlight", "auto, none or a name under /sys/class/backlight") { c, v throws(ValueError) in
            c.power.backlight = try BacklightChoice(v)
        },
        KeySpec(section: "power", name: "brightness", domain: .autoOrInteger(1...100),
                accepts: "auto or 1 to 100 (percent; auto: the board's own level)") { c, v throws(ValueError) in
            c.power.brightness = try autoOrValue(v).map { v throws(ValueError) in try integer(v, 1...100) }
        },
        number("power", "dim_after", 0...10_080, unit: "minutes", note: " (0 = never)") { $0.power.dimAfter = $1 },
        integer("power", "dim_level", 1...100) { $0.power.dimLevel = $1 },
        key("power", "schedule", "on-times, e.g. mon-fri 07:00-22:00, sat,sun 09:00-23:00; empty: always") { c, v throws(ValueError) in
            do throws(PowerSchedule.ParseError) {
                c.power.schedule = try PowerSchedule.parse(v)
            } catch {
                throw ValueError(error.message)
            }
        },
    ]

    /// A topic (or topic prefix) we publish and subscribe under: no MQTT
    /// wildcards, no empty level at either end, not a broker's `$` topic.
    static func topicName(_ v: String, _ what: String) throws(ValueError) -> String {
        guard !v.contains("+"), !v.contains("#") else { throw ValueError("\(what) cannot contain the MQTT wildcards + or #") }
        guard !v.hasPrefix("/"), !v.hasSuffix("/"), !v.contains("//") else {
            throw ValueError("\(what) cannot start or end with '/' or have an empty level ('//')")
        }
        guard !v.hasPrefix("$") else { throw ValueError("\(what) cannot start with '$' (the broker's own topics)") }
        guard !v.contains(where: { $0 == "\0" || $0.isNewline }) else { throw ValueError("\(what) cannot contain control characters") }
        return v
    }

    static let mqtt: [KeySpec] = [
        key("mqtt", "broker", "mqtt://HOST:PORT or mqtts://HOST:PORT, or empty (no MQTT)") { c, v throws(ValueError) in
            if v.isEmpty { c.mqtt.broker = nil; return }
            c.mqtt.broker = try MQTTBroker.parse(v).get()
        },
        key("mqtt", "username", "a user name or empty") { c, v throws(ValueError) in c.mqtt.username = v.isEmpty ? nil : v },
        key("mqtt", "password_file", "an absolute path or empty") { c, v throws(ValueError) in
            guard !v.isEmpty else { c.mqtt.passwordFile = nil; return }
            guard v.hasPrefix("/") else { throw ValueError("expected an absolute path to a file holding the password") }
            c.mqtt.passwordFile = v
        },
        key("mqtt", "ca_file", "an absolute path or empty (the system's CA store)") { c, v throws(ValueError) in
            guard !v.isEmpty else { c.mqtt.caFile = nil; return }
            guard v.hasPrefix("/") else { throw ValueError("expected an absolute path to a PEM file of CA certificates") }
            c.mqtt.caFile = v
        },
        key("mqtt", "client_id", "a client id or empty (the host name)") { c, v throws(ValueError) in
            guard !v.isEmpty else { c.mqtt.clientID = nil; return }
            guard v.utf8.count <= 64, !v.contains(where: { "+#/ \t".contains($0) || $0.isNewline }) else {
                throw ValueError("expected at most 64 bytes without spaces, '/', '+' or '#' (it is a topic level too)")
            }
            c.mqtt.clientID = v
        },
        key("mqtt", "topic", "a topic such as carouseld/kitchen, or empty (carouseld/CLIENT_ID)") { c, v throws(ValueError) in
            c.mqtt.topic = v.isEmpty ? nil : try topicName(v, "topic")
        },
        key("mqtt", "discovery_prefix", "a topic prefix such as homeassistant, or empty (no discovery)") { c, v throws(ValueError) in
            c.mqtt.discoveryPrefix = v.isEmpty ? "" : try topicName(v, "discovery_prefix")
        },
        integer("mqtt", "keepalive", 5...65535) { $0.mqtt.keepalive = $1 },
    ]

    static let overlay: [KeySpec] = [
        choice("overlay", "caption", CaptionKind.self) { $0.overlay.caption = $1 },
        choice("overlay", "position", OverlayPosition.self) { $0.overlay.position = $1 },
        key("overlay", "clock", "none or a format such as HH:MM or h:MM am (HH, H, hh, h, MM, AM, am)") { c, v throws(ValueError) in
            if v.isEmpty || v.lowercased() == "none" { c.overlay.clock = nil; return }
            guard let format = ClockFormat(v) else {
                throw ValueError("expected none or a clock format with one hour field (HH, H, hh or h) and MM (no seconds: it repaints once a minute), e.g. HH:MM or h:MM am")
            }
            c.overlay.clock = format
        },
        choice("overlay", "clock_position", OverlayPosition.self) { $0.overlay.clockPosition = $1 },
        key("overlay", "font", "a fontconfig pattern such as DejaVu Sans or Noto Sans:bold") { c, v throws(ValueError) in
            guard !v.isEmpty, v.utf8.count <= 200, !v.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
                throw ValueError("expected a fontconfig pattern such as DejaVu Sans (fc-list : family lists the fonts)")
            }
            c.overlay.text.font = v
        },
        KeySpec(section: "overlay", name: "size", domain: .autoOrInteger(8...400),
                accepts: "auto or 8 to 400 (pixels; auto: a 25th of the screen's shorter side)") { c, v throws(ValueError) in
            c.overlay.text.size = try autoOrValue(v).map { v throws(ValueError) in try integer(v, 8...400) }
        },
        colorKey("overlay", "color") { $0.overlay.text.color = $1 },
        choice("overlay", "backdrop", TextBackdrop.self) { $0.overlay.text.backdrop = $1 },
    ]

    static let log: [KeySpec] = [
        KeySpec(section: "log", name: "level", domain: .choice(LogPriority.allCases.map(\.description)),
                accepts: "error, warning, info or debug") { c, v throws(ValueError) in c.logLevel = try logPriority(v) },
    ]
}
