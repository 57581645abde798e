import CarouselCore
import CarouselPlatform

/// One key of the configuration: its section, name and how its value is
/// checked and stored.
public struct KeySpec: Sendable {
    public let section: String
    public let name: String
    /// What the key accepts, for error messages and `--help`.
    public let accepts: String
    let apply: @Sendable (inout Configuration, String) throws(ValueError) -> Void
}

/// The schema of `carouseld.ini`: every section and key of SPEC.md section 8.
public enum Schema {
    public static let sectionNames = ["display", "input", "carousel", "autoplay", "images", "indicator", "control", "log"]

    public static let keys: [KeySpec] = display + input + carousel + autoplay + images + indicator + control + log

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

    static func format(_ d: Double) -> String {
        d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d)
    }

    /// `auto` (or empty) means "choose automatically".
    static func autoOrValue(_ v: String) -> String? {
        v.isEmpty || v.lowercased() == "auto" ? nil : v
    }

    private static func key(_ section: String, _ name: String, _ accepts: String,
                            _ apply: @escaping @Sendable (inout Configuration, String) throws(ValueError) -> Void) -> KeySpec {
        KeySpec(section: section, name: name, accepts: accepts, apply: apply)
    }

    // MARK: - Sections

    static let display: [KeySpec] = [
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
        key("display", "rotation", "0, 90, 180 or 270") { c, v throws(ValueError) in
            guard let r = Int(v), [0, 90, 180, 270].contains(r) else { throw ValueError("expected 0, 90, 180 or 270") }
            c.display.rotation = r
        },
        key("display", "api", "auto, atomic or legacy") { c, v throws(ValueError) in c.display.api = try choice(v, DisplayAPI.self) },
        key("display", "background", "#RRGGBB or #RRGGBBAA") { c, v throws(ValueError) in c.display.background = try color(v) },
    ]

    static let input: [KeySpec] = [
        key("input", "seat", "a udev seat name") { c, v throws(ValueError) in
            guard !v.isEmpty else { throw ValueError("expected a seat name such as seat0") }
            c.input.seat = v
        },
        key("input", "touch_slop", "pixels, 1 to 200") { c, v throws(ValueError) in
            c.carousel.touchSlop = try number(v, 1...200, unit: "pixels")
        },
        key("input", "calibration", "six numbers or empty") { c, v throws(ValueError) in
            if v.isEmpty { c.input.calibration = nil; return }
            let parts = v.split(whereSeparator: { $0 == " " || $0 == "," }).map { Double($0) }
            guard parts.count == 6, parts.allSatisfy({ $0?.isFinite == true }) else {
                throw ValueError("expected six numbers (libinput calibration matrix), e.g. 1 0 0 0 1 0")
            }
            c.input.calibration = parts.map { $0! }
        },
        key("input", "pointer", "true or false") { c, v throws(ValueError) in c.input.pointer = try bool(v) },
        key("input", "keyboard", "true or false") { c, v throws(ValueError) in c.input.keyboard = try bool(v) },
    ]

    static let carousel: [KeySpec] = [
        key("carousel", "wrap", "true or false") { c, v throws(ValueError) in c.carousel.wrap = try bool(v) },
        key("carousel", "vertical", "true or false") { c, v throws(ValueError) in c.carousel.vertical = try bool(v) },
        key("carousel", "paging", "true or false") { c, v throws(ValueError) in c.carousel.paging = try bool(v) },
        key("carousel", "items_per_page", "1 to 100") { c, v throws(ValueError) in c.carousel.itemsPerPage = try integer(v, 1...100) },
        key("carousel", "truncate_final_page", "true or false") { c, v throws(ValueError) in c.carousel.truncateFinalPage = try bool(v) },
        key("carousel", "alignment", "center or edge") { c, v throws(ValueError) in c.carousel.alignment = try choice(v, Alignment.self) },
        key("carousel", "item_size", "a fraction of the screen (0.05 to 1.0) or pixels (> 1, at most 16384)") { c, v throws(ValueError) in
            let d = try number(v, 0.05...ItemSize.maximumPixels)
            c.carousel.itemSize = ItemSize(configValue: d)!
        },
        key("carousel", "spacing", "pixels, 0 to 10000") { c, v throws(ValueError) in c.carousel.spacing = try number(v, 0...10_000, unit: "pixels") },
        key("carousel", "bounces", "true or false") { c, v throws(ValueError) in c.carousel.bounces = try bool(v) },
        key("carousel", "scroll_enabled", "true or false") { c, v throws(ValueError) in c.carousel.scrollEnabled = try bool(v) },
        key("carousel", "deceleration_rate", "0.9 to 0.9999 per millisecond") { c, v throws(ValueError) in
            c.carousel.decelerationRate = try number(v, 0.9...0.9999)
        },
        key("carousel", "autoscroll", "items per second, -100 to 100 (0 = off)") { c, v throws(ValueError) in
            c.carousel.autoscroll = try number(v, -100...100, unit: "items per second")
        },
        key("carousel", "start_index", "0 or more") { c, v throws(ValueError) in c.carousel.startIndex = try integer(v, 0...10_000_000) },
    ]

    static let autoplay: [KeySpec] = [
        key("autoplay", "enabled", "true or false") { c, v throws(ValueError) in c.autoplay.enabled = try bool(v) },
        key("autoplay", "interval", "seconds, 0.1 to 86400") { c, v throws(ValueError) in c.autoplay.interval = try number(v, 0.1...86_400, unit: "seconds") },
        key("autoplay", "transition", "seconds, 0 to 60") { c, v throws(ValueError) in c.autoplay.transition = try number(v, 0...60, unit: "seconds") },
        key("autoplay", "start_delay", "seconds, 0 to 86400, or empty for the interval") { c, v throws(ValueError) in
            c.autoplay.startDelay = v.isEmpty ? nil : try number(v, 0...86_400, unit: "seconds")
        },
        key("autoplay", "resume_delay", "seconds, 0 to 86400") { c, v throws(ValueError) in c.autoplay.resumeDelay = try number(v, 0...86_400, unit: "seconds") },
        key("autoplay", "direction", "forward or backward") { c, v throws(ValueError) in c.autoplay.direction = try choice(v, AutoplayDirection.self) },
        key("autoplay", "at_end", "rewind or stop") { c, v throws(ValueError) in c.autoplay.atEnd = try choice(v, AutoplayAtEnd.self) },
    ]

    static let images: [KeySpec] = [
        key("images", "path", "a folder") { c, v throws(ValueError) in
            guard !v.isEmpty else { throw ValueError("expected a folder path") }
            c.images.path = v
        },
        key("images", "files", "comma-separated file paths, or empty") { c, v throws(ValueError) in
            c.images.files = v.split(separator: ",").map { String($0.trimmingWhitespace()) }.filter { !$0.isEmpty }
        },
        key("images", "order", "name, mtime or random") { c, v throws(ValueError) in c.images.order = try choice(v, ImageOrder.self) },
        key("images", "fit", "contain, cover, stretch or none") { c, v throws(ValueError) in c.images.fit = try choice(v, FitMode.self) },
        key("images", "max_pixels", "1000000 to 1000000000") { c, v throws(ValueError) in c.images.maxPixels = try integer(v, 1_000_000...1_000_000_000) },
        key("images", "cache_mb", "8 to 4096") { c, v throws(ValueError) in c.images.cacheMB = try integer(v, 8...4096) },
    ]

    static let indicator: [KeySpec] = [
        key("indicator", "enabled", "true or false") { c, v throws(ValueError) in c.indicator.enabled = try bool(v) },
        key("indicator", "position", "bottom, top, left or right") { c, v throws(ValueError) in c.indicator.position = try choice(v, IndicatorPosition.self) },
        key("indicator", "color", "#RRGGBB or #RRGGBBAA") { c, v throws(ValueError) in c.indicator.color = try color(v) },
        key("indicator", "current_color", "#RRGGBB or #RRGGBBAA") { c, v throws(ValueError) in c.indicator.currentColor = try color(v) },
        key("indicator", "size", "pixels, 1 to 200") { c, v throws(ValueError) in c.indicator.size = try number(v, 1...200, unit: "pixels") },
        key("indicator", "spacing", "pixels, 0 to 500") { c, v throws(ValueError) in c.indicator.spacing = try number(v, 0...500, unit: "pixels") },
        key("indicator", "margin", "pixels, 0 to 2000") { c, v throws(ValueError) in c.indicator.margin = try number(v, 0...2000, unit: "pixels") },
        key("indicator", "hides_for_single_page", "true or false") { c, v throws(ValueError) in c.indicator.hidesForSinglePage = try bool(v) },
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
        key("control", "max_clients", "1 to 1024") { c, v throws(ValueError) in c.control.maxClients = try integer(v, 1...1024) },
    ]

    static let log: [KeySpec] = [
        key("log", "level", "error, warning, info or debug") { c, v throws(ValueError) in c.logLevel = try logPriority(v) },
    ]
}
