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
    /// What the key accepts, for error messages and `--help`, and what the
    /// README and carouseld.ini(5) say it accepts.
    public let accepts: String
    /// The default as the INI writes it, "" for empty: a value the key takes
    /// that leaves the built-in default as it is (a test holds it to that).
    /// Computed defaults are written as what asks for them (`auto`, empty),
    /// and `help` says what they come to.
    public let defaultValue: String
    /// What the key does, for the shipped INI's comments, the README and
    /// carouseld.ini(5): plain sentences, `code` in backticks, nothing else
    /// (no links, no `|`). Line breaks and runs of spaces count as one space.
    /// Made from the source text when asked (documentation, `--help`), not
    /// for every key at every start.
    public var help: String { writtenHelp.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
    private let writtenHelp: String
    let apply: @Sendable (inout Configuration, String) throws(ValueError) -> Void

    init(section: String, name: String, domain: ValueDomain, accepts: String, default defaultValue: String, help: String,
         apply: @escaping @Sendable (inout Configuration, String) throws(ValueError) -> Void) {
        self.section = section
        self.name = name
        self.domain = domain
        self.accepts = accepts
        self.defaultValue = defaultValue
        self.writtenHelp = help
        self.apply = apply
    }
}

/// One section of the configuration and what it is about.
public struct SectionSpec: Sendable {
    public let name: String
    /// One or two sentences, written as `KeySpec.help` is.
    public let help: String
}

/// The schema of `carouseld.ini`: every section and key of SPEC.md section 8.
public enum Schema {
    /// Every section in the order the shipped INI and the manual list them.
    public static let sectionSpecs: [SectionSpec] = [
        SectionSpec(name: "display", help: "The screen: which device, connector and mode, and how the picture is turned."),
        SectionSpec(name: "input", help: "Touchscreens, mice and keyboards, read through libinput."),
        SectionSpec(name: "carousel", help: "How the carousel lays out its items and moves: paging, wrap, momentum."),
        SectionSpec(name: "autoplay", help: "Advancing on its own, and how an advance looks."),
        SectionSpec(name: "zoom", help: "Zooming into one picture with two fingers or a double tap."),
        SectionSpec(name: "images", help: "Which pictures, in what order, and how each fills the screen."),
        SectionSpec(name: "video", help: "Clips beside the pictures: played where they stand, without sound."),
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

    public static let keys: [KeySpec] = display + input + carousel + autoplay + zoom + images + video + indicator + control + log + power
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
    static func key(_ section: String, _ name: String, _ accepts: String, default defaultValue: String, help: String,
                    _ apply: @escaping @Sendable (inout Configuration, String) throws(ValueError) -> Void) -> KeySpec {
        KeySpec(section: section, name: name, domain: .text, accepts: accepts, default: defaultValue, help: help, apply: apply)
    }

    static func flag(_ section: String, _ name: String, default defaultValue: String, help: String,
                     _ store: @escaping @Sendable (inout Configuration, Bool) -> Void) -> KeySpec {
        KeySpec(section: section, name: name, domain: .boolean, accepts: "true or false",
                default: defaultValue, help: help) { c, v throws(ValueError) in
            store(&c, try bool(v))
        }
    }

    /// A number in `range`; `note` follows the range in `accepts`.
    static func number(_ section: String, _ name: String, _ range: ClosedRange<Double>, unit: String = "",
                       note: String = "", default defaultValue: String, help: String,
                       _ store: @escaping @Sendable (inout Configuration, Double) -> Void) -> KeySpec {
        let accepts = (unit.isEmpty ? "" : unit + ", ") + "\(format(range.lowerBound)) to \(format(range.upperBound))" + note
        return KeySpec(section: section, name: name, domain: .number(range, unit: unit), accepts: accepts,
                       default: defaultValue, help: help) { c, v throws(ValueError) in
            store(&c, try number(v, range, unit: unit))
        }
    }

    static func integer(_ section: String, _ name: String, _ range: ClosedRange<Int>, default defaultValue: String, help: String,
                        _ store: @escaping @Sendable (inout Configuration, Int) -> Void) -> KeySpec {
        KeySpec(section: section, name: name, domain: .integer(range),
                accepts: "\(range.lowerBound) to \(range.upperBound)", default: defaultValue, help: help) { c, v throws(ValueError) in
            store(&c, try integer(v, range))
        }
    }

    static func choice<E: RawRepresentable & CaseIterable & Sendable>(
        _ section: String, _ name: String, _ type: E.Type, default defaultValue: String, help: String,
        _ store: @escaping @Sendable (inout Configuration, E) -> Void
    ) -> KeySpec where E.RawValue == String {
        let words = E.allCases.map(\.rawValue)
        let accepts = words.count == 2 ? "\(words[0]) or \(words[1])"
            : words.dropLast().joined(separator: ", ") + " or " + words.last!
        return KeySpec(section: section, name: name, domain: .choice(words), accepts: accepts,
                       default: defaultValue, help: help) { c, v throws(ValueError) in
            store(&c, try choice(v, type))
        }
    }

    private static func colorKey(_ section: String, _ name: String, default defaultValue: String, help: String,
                                 _ store: @escaping @Sendable (inout Configuration, PixelColor) -> Void) -> KeySpec {
        KeySpec(section: section, name: name, domain: .color, accepts: "#RRGGBB or #RRGGBBAA",
                default: defaultValue, help: help) { c, v throws(ValueError) in
            store(&c, try color(v))
        }
    }

    // MARK: - Sections

    static let display: [KeySpec] = [
        choice("display", "backend", DisplayBackendKind.self, default: "drm", help: """
            `drm` (DRM/KMS), or `fbdev` (a framebuffer device: SPI panels with fbtft, kernels without KMS;
            `connector`, `api` and `zero_copy` do not apply).
            """) { $0.display.backend = $1 },
        key("display", "device", "auto or a DRM device path such as /dev/dri/card0", default: "auto", help: """
            The DRM device, `/dev/dri/cardN`, or `auto` (the first card with a connected display). With `backend =
            fbdev`: the framebuffer, `/dev/fbN`; `auto` is `/dev/fb0`.
            """) { c, v throws(ValueError) in
            let d = autoOrValue(v)
            if let d, !d.hasPrefix("/") { throw ValueError("expected auto or an absolute path such as /dev/dri/card0") }
            c.display.device = d
        },
        key("display", "connector", "auto or a connector name such as HDMI-A-1", default: "auto", help: """
            The connector's name (`HDMI-A-1`, `DSI-1`, ...) or `auto` (the first connected one).
            """) { c, v throws(ValueError) in
            c.display.connector = autoOrValue(v)
        },
        key("display", "mode", "auto, WIDTHxHEIGHT or WIDTHxHEIGHT@HZ", default: "auto", help: """
            `WIDTHxHEIGHT` or `WIDTHxHEIGHT@HZ` (such as `1920x1080@60`), or `auto` (the display's preferred mode).
            """) { c, v throws(ValueError) in
            guard let m = autoOrValue(v) else { c.display.mode = nil; return }
            guard let mode = ModeRequest(m) else { throw ValueError("expected auto, WIDTHxHEIGHT or WIDTHxHEIGHT@HZ (e.g. 1920x1080@60)") }
            c.display.mode = mode
        },
        KeySpec(section: "display", name: "rotation", domain: .choice(["0", "90", "180", "270"]),
                accepts: "0, 90, 180 or 270", default: "0", help: """
            Degrees the picture is turned, combined with the panel's own orientation.
            """) { c, v throws(ValueError) in
            guard let r = Int(v), [0, 90, 180, 270].contains(r) else { throw ValueError("expected 0, 90, 180 or 270") }
            c.display.rotation = r
        },
        choice("display", "api", DisplayAPI.self, default: "auto", help: """
            The kernel modesetting interface: `auto`, `atomic` or `legacy`.
            """) { $0.display.api = $1 },
        colorKey("display", "background", default: "#000000", help: """
            The letterbox and empty-screen colour.
            """) { $0.display.background = $1 },
        flag("display", "zero_copy", default: "true", help: """
            Slides move the display's scan-out window over pictures already in video memory instead of copying every
            frame; `false` if the driver shows the wrong part of the picture while sliding.
            """) { $0.display.zeroCopy = $1 },
    ]

    static let input: [KeySpec] = [
        key("input", "seat", "a udev seat name", default: "seat0", help: """
            The udev seat whose devices are used.
            """) { c, v throws(ValueError) in
            guard !v.isEmpty else { throw ValueError("expected a seat name such as seat0") }
            c.input.seat = v
        },
        number("input", "touch_slop", 1...200, unit: "pixels", default: "10", help: """
            How far a finger moves before a drag starts, in pixels of a 160 dpi screen: the slop scales so that a drag
            starts after the same distance under the finger on every panel. The density comes from the touchscreen's
            own size when libinput reports it in millimetres, else from the display's (EDID); a log line says which
            and what the slop became. A panel that reports neither keeps the configured pixels.
            """) { $0.carousel.touchSlop = $1 },
        key("input", "calibration", "six numbers or empty", default: "", help: """
            libinput's calibration matrix, six numbers (such as `1 0 0 0 1 0`); empty: none. `carouseld calibrate
            --config` writes it.
            """) { c, v throws(ValueError) in
            if v.isEmpty { c.input.calibration = nil; return }
            let parts = v.split(whereSeparator: { $0 == " " || $0 == "," }).map { Double($0) }
            guard parts.count == 6, parts.allSatisfy({ $0?.isFinite == true }) else {
                throw ValueError("expected six numbers (libinput calibration matrix), e.g. 1 0 0 0 1 0")
            }
            c.input.calibration = parts.map { $0! }
        },
        flag("input", "pointer", default: "true", help: "Mice and touchpads drag with a button held.") { $0.input.pointer = $1 },
        flag("input", "keyboard", default: "true", help: """
            Keys move the carousel: arrows, PageUp/PageDown, Home/End, Space (also IR remotes).
            """) { $0.input.keyboard = $1 },
    ]

    static let carousel: [KeySpec] = [
        flag("carousel", "wrap", default: "true", help: """
            Loop forever: the last picture is followed by the first.
            """) { $0.carousel.wrap = $1 },
        flag("carousel", "vertical", default: "false", help: """
            Scroll along the vertical axis instead of the horizontal one.
            """) { $0.carousel.vertical = $1 },
        flag("carousel", "paging", default: "true", help: "Stop on page boundaries.") { $0.carousel.paging = $1 },
        integer("carousel", "items_per_page", 1...100, default: "1", help: """
            The items one page moves by.
            """) { $0.carousel.itemsPerPage = $1 },
        flag("carousel", "truncate_final_page", default: "false", help: """
            With paging and no wrap, no blank space after the last item.
            """) { $0.carousel.truncateFinalPage = $1 },
        choice("carousel", "alignment", Alignment.self, default: "center", help: """
            Where an item rests: `center` (centred on the screen, neighbours peek in on both sides) or `edge` (at the
            leading edge).
            """) { $0.carousel.alignment = $1 },
        // Pixels no larger than the screen can be (Viewport.maximumSide), which
        // is what the scaler and KMS take.
        KeySpec(section: "carousel", name: "item_size", domain: .number(0.05...ItemSize.maximumPixels, unit: ""),
                accepts: "a fraction of the screen (0.05 to 1.0) or pixels (> 1, at most \(format(ItemSize.maximumPixels)))",
                default: "1.0", help: """
            At most 1: a fraction of the screen (below 1 the neighbours peek in); above 1: pixels, at most 16384.
            """) {
            c, v throws(ValueError) in
            c.carousel.itemSize = ItemSize(configValue: try number(v, 0.05...ItemSize.maximumPixels))!
        },
        number("carousel", "spacing", 0...10_000, unit: "pixels", default: "0", help: """
            The gap between items, pixels.
            """) { $0.carousel.spacing = $1 },
        flag("carousel", "bounces", default: "true", help: """
            Rubber-band past the ends when not wrapping.
            """) { $0.carousel.bounces = $1 },
        flag("carousel", "scroll_enabled", default: "true", help: """
            `false`: a touch can only tap; commands still scroll.
            """) { $0.carousel.scrollEnabled = $1 },
        number("carousel", "deceleration_rate", 0.9...0.9999, note: " per millisecond", default: "0.998", help: """
            Momentum decay per millisecond without paging (0.998 normal, 0.99 fast).
            """) { $0.carousel.decelerationRate = $1 },
        number("carousel", "autoscroll", -100...100, unit: "items per second", note: " (0 = off)", default: "0", help: """
            A constant drift in items per second; 0 = off (autoplay pauses while it is on).
            """) { $0.carousel.autoscroll = $1 },
        integer("carousel", "start_index", 0...10_000_000, default: "0", help: """
            The item shown at start.
            """) { $0.carousel.startIndex = $1 },
        number("carousel", "idle_return", 0...86_400, unit: "seconds", note: " (0 = never)", default: "0", help: """
            Seconds after the last touch, key or command when the carousel goes back to `start_index` (an info
            terminal's next visitor sees the first picture); 0 = never.
            """) { $0.carousel.idleReturn = $1 },
    ]

    static let autoplay: [KeySpec] = [
        flag("autoplay", "enabled", default: "true", help: """
            Advance to the next picture on its own, every `interval` seconds.
            """) { $0.autoplay.enabled = $1 },
        number("autoplay", "interval", 0.1...86_400, unit: "seconds", default: "3.0", help: """
            Seconds between advances, counted from rest.
            """) { $0.autoplay.interval = $1 },
        number("autoplay", "transition", 0...60, unit: "seconds", default: "0.5", help: """
            Seconds one automatic advance takes.
            """) { $0.autoplay.transition = $1 },
        KeySpec(section: "autoplay", name: "start_delay", domain: .number(0...86_400, unit: "seconds"),
                accepts: "seconds, 0 to 86400, or empty for the interval", default: "", help: """
            How long the first picture stays before the first advance, seconds; empty: the `interval`.
            """) { c, v throws(ValueError) in
            c.autoplay.startDelay = v.isEmpty ? nil : try number(v, 0...86_400, unit: "seconds")
        },
        number("autoplay", "resume_delay", 0...86_400, unit: "seconds", default: "2.0", help: """
            Seconds after an interaction (a touch or a command) ends, the carousel at rest, before autoplay resumes.
            """) { $0.autoplay.resumeDelay = $1 },
        choice("autoplay", "direction", AutoplayDirection.self, default: "forward", help: """
            `forward` or `backward`.
            """) { $0.autoplay.direction = $1 },
        choice("autoplay", "at_end", AutoplayAtEnd.self, default: "rewind", help: """
            Without wrap: `rewind` (animate back to the first) or `stop`.
            """) { $0.autoplay.atEnd = $1 },
        choice("autoplay", "effect", TransitionEffect.self, default: "slide", help: """
            How automatic advances and `next`/`prev`/`goto` (socket, keys) change the picture: `slide`, `crossfade`
            (the next picture fades in over `transition` seconds, nothing moves) or `cut` (at once). A finger always
            slides, and a finger on a crossfade stops it on the picture that shows most.
            """) { $0.autoplay.effect = $1 },
    ]

    static let zoom: [KeySpec] = [
        flag("zoom", "enabled", default: "true", help: """
            Two fingers pinch the picture (1:1, about their midpoint); one finger pans a zoomed picture and, pushed
            past its edge, pages on. Autoplay waits while a picture is zoomed and resumes `resume_delay` after it is
            back at 1.
            """) { $0.zoom.enabled = $1 },
        number("zoom", "max_scale", 1...16, unit: "times the fitted picture", default: "4.0", help: """
            The largest scale a picture rests at, 1 to 16 times the fitted picture; a pinch rubber-bands past it.
            """) { $0.zoom.maxScale = $1 },
        flag("zoom", "double_tap", default: "true", help: """
            A double tap zooms to 2.5x about the point and back (it toggles 1 and 2.5x). A single tap's select then
            waits 300 ms after the lift for a second tap (the double-tap window); `false`: select at the lift.
            """) { $0.zoom.doubleTap = $1 },
    ]

    static let images: [KeySpec] = [
        key("images", "path", "a folder", default: "/var/lib/carouseld/images", help: """
            The folder of pictures, watched for changes.
            """) { c, v throws(ValueError) in
            guard !v.isEmpty else { throw ValueError("expected a folder path") }
            c.images.path = v
        },
        key("images", "files", "comma-separated file paths, or empty", default: "", help: """
            Or an explicit comma-separated list of files, shown as given; it overrides `path`.
            """) { c, v throws(ValueError) in
            c.images.files = v.split(separator: ",").map { String($0.trimmingWhitespace()) }.filter { !$0.isEmpty }
        },
        choice("images", "order", ImageOrder.self, default: "name", help: """
            `name` (natural: img2 before img10), `mtime`, `random` (one fixed shuffle, the same after a restart) or
            `shuffle` (a new order on every pass: every picture once per pass, never the same picture twice across the
            seam; the picture on screen and its neighbours never move, so with 4 pictures or fewer the order stays;
            `start_index` and `idle_return` count in the shuffled order). A `files` list is shown as given.
            """) { $0.images.order = $1 },
        choice("images", "fit", FitMode.self, default: "contain", help: """
            `contain`, `cover`, `stretch`, `none` or `blur` (`contain` over a blurred, darkened `cover` of the same
            picture instead of bars; made once per picture when it is decoded).
            """) { $0.images.fit = $1 },
        number("images", "blur_radius", 0...500, unit: "pixels", note: " (fit = blur)", default: "40", help: """
            `fit = blur`: how soft the fill is, pixels at the screen's size (the Gaussian's standard deviation, as CSS
            `blur()` takes it).
            """) { $0.images.blurRadius = $1 },
        number("images", "dim", 0...1, note: " (fit = blur: 0 keeps the fill's brightness, 1 is black)", default: "0.4", help: """
            `fit = blur`: how much darker the fill is, 0 (as bright as the picture) to 1 (black).
            """) { $0.images.dim = $1 },
        integer("images", "max_pixels", 1_000_000...1_000_000_000, default: "64000000", help: """
            Larger images are refused before decoding.
            """) { $0.images.maxPixels = $1 },
        KeySpec(section: "images", name: "cache_mb", domain: .autoOrInteger(8...4096),
                accepts: "auto or 8 to 4096 (MiB)", default: "auto", help: """
            The decoded-image budget in MiB (pictures are kept at 3 bytes a pixel), or `auto`: room for exactly the
            pictures the carousel can need at once (on screen, where a motion comes to rest, the neighbours decoded
            ahead) at the item size, such as 4 full-screen pictures, and 1/64 of the board's memory for pictures paged
            past, kept so that the next pass shows them without decoding them again (16 MiB on a 1 GB board). A number
            is the whole budget, for pictures wanted and paged past (fewer decodes, more memory).
            """) { c, v throws(ValueError) in
            c.images.cacheMB = try autoOrValue(v).map { v throws(ValueError) in try integer(v, 8...4096) }
        },
        KeySpec(section: "images", name: "decode_mb", domain: .autoOrInteger(16...65536),
                accepts: "auto or 16 to 65536 (MiB)", default: "auto", help: """
            What one picture's decode may hold at its peak, in MiB: the file read into memory, what the codec keeps
            (all the coefficients of a progressive JPEG, every pixel of a lossless WebP, a HEIC or AVIF decoded whole by
            libheif) and the decoded pixels, counted from the file's header before anything is allocated. A picture
            that needs more is skipped with one line saying why and how to make it fit. `auto`: half of the board's
            memory as the kernel counts it (`MemTotal`: about 480 MiB on a 1 GB board, 230 MiB on a 512 MB one).
            """) { c, v throws(ValueError) in
            c.images.decodeMB = try autoOrValue(v).map { v throws(ValueError) in try integer(v, 16...65536) }
        },
        flag("images", "resume", default: "true", help: """
            Start on the picture that was on screen at the last stop or power cut, if it is still there; its name is
            kept in the state directory (`$STATE_DIRECTORY/position`, systemd's StateDirectory, else
            `/var/lib/carouseld/position`, the folder made if its parent exists). `false`: always `start_index`.
            """) { $0.images.resume = $1 },
        flag("images", "recursive", default: "false", help: """
            Pictures in subfolders too (not hidden ones), sorted by their path below `path` (`2024/summer/a.jpg`) and
            watched. Symbolic links to folders are followed, each folder once; at most 16 levels deep and 2000
            subfolders (one log line when a bound is hit).
            """) { $0.images.recursive = $1 },
        flag("images", "pair_portraits", default: "false", help: """
            On a screen whose pages are wider than tall: two portraits next to each other in the album's order
            (shuffle included) share one page, each fitted to its half with `[carousel] spacing` between them; a
            portrait without a portrait partner stays alone. Pairs start from the first of each run of portraits, so
            the same folder pairs alike on every frame and after a restart. Whether a picture is a portrait is read
            from its header (EXIF orientation applied) when it is listed. The dots count pages, `goto` takes a page,
            and a tap selects the picture under the finger.
            """) { $0.images.pairPortraits = $1 },
    ]

    static let video: [KeySpec] = [
        flag("video", "enabled", default: "true", help: """
            Clips in the album folder (mp4, m4v, mov, mkv, webm) are items of the carousel: the first frame stands for
            a clip in the strip and while swiping; when the carousel comes to rest on it, it plays at its own timing,
            without sound. false: clips are ignored like any other file.
            """) { $0.video.enabled = $1 },
        choice("video", "hardware", VideoHardware.self, default: "auto", help: """
            `auto`: FFmpeg's V4L2 memory-to-memory decoder where the board has one for the clip's codec (a Raspberry
            Pi 4's H.264), software otherwise; `off`: software only.
            """) { $0.video.hardware = $1 },
        flag("video", "loop", default: "false", help: """
            While autoplay is off, a clip starts again at its end (otherwise its last frame stays). With autoplay on,
            the carousel moves on at a clip's end.
            """) { $0.video.loop = $1 },
        number("video", "max_seconds", 1...86_400, unit: "seconds", default: "120", help: """
            Autoplay waits for a clip's end, at most this long; then it moves on.
            """) { $0.video.maxSeconds = $1 },
        integer("video", "max_pixels", 100_000...100_000_000, default: "8294400", help: """
            Clips whose frames have more pixels than this are skipped with one log line (the decoder's memory grows
            with the frame size; the default is 3840x2160).
            """) { $0.video.maxPixels = $1 },
    ]

    static let indicator: [KeySpec] = [
        flag("indicator", "enabled", default: "true", help: "Page dots.") { $0.indicator.enabled = $1 },
        choice("indicator", "position", IndicatorPosition.self, default: "bottom", help: """
            The screen edge the dots sit at.
            """) { $0.indicator.position = $1 },
        colorKey("indicator", "color", default: "#FFFFFF80", help: "The dots of the other pages.") { $0.indicator.color = $1 },
        colorKey("indicator", "current_color", default: "#FFFFFF", help: """
            The dot of the current page.
            """) { $0.indicator.currentColor = $1 },
        number("indicator", "size", 1...200, unit: "pixels", default: "10", help: """
            The dots' diameter, pixels.
            """) { $0.indicator.size = $1 },
        number("indicator", "spacing", 0...500, unit: "pixels", default: "12", help: """
            The gap between two dots, pixels.
            """) { $0.indicator.spacing = $1 },
        number("indicator", "margin", 0...2000, unit: "pixels", default: "24", help: """
            The dots' distance from the screen's edge, pixels.
            """) { $0.indicator.margin = $1 },
        flag("indicator", "hides_for_single_page", default: "true", help: """
            No dots when there is only one page.
            """) { $0.indicator.hidesForSinglePage = $1 },
    ]

    static let control: [KeySpec] = [
        key("control", "socket", "an absolute path", default: "/run/carouseld/control.sock", help: """
            The control socket `carouselctl` and other clients connect to.
            """) { c, v throws(ValueError) in
            guard v.hasPrefix("/"), v.utf8.count < 108 else { throw ValueError("expected an absolute path shorter than 108 bytes") }
            c.control.socket = v
        },
        key("control", "mode", "octal permissions such as 0660", default: "0660", help: """
            The socket's permissions.
            """) { c, v throws(ValueError) in
            guard let m = UInt32(v, radix: 8), m <= 0o777 else { throw ValueError("expected octal permissions such as 0660") }
            c.control.mode = m
        },
        key("control", "group", "a group name or empty", default: "", help: """
            The socket's owner group; empty: the daemon's.
            """) { c, v throws(ValueError) in c.control.group = v.isEmpty ? nil : v },
        key("control", "allow_uids", "comma-separated uids or empty", default: "", help: """
            Numeric user ids allowed to connect, separated by commas. With `allow_uids` and `allow_gids` both empty,
            anyone who can open the socket may; root is not special (list uid 0 to let it in).
            """) { c, v throws(ValueError) in c.control.allowUIDs = try idList(v) },
        key("control", "allow_gids", "comma-separated gids or empty", default: "", help: """
            Numeric group ids allowed to connect, separated by commas; a group counts as a client's primary or
            supplementary group.
            """) { c, v throws(ValueError) in c.control.allowGIDs = try idList(v) },
        integer("control", "max_clients", 1...1024, default: "16", help: """
            Connections at once; one user other than root may hold half of them.
            """) { $0.control.maxClients = $1 },
    ]

    static let power: [KeySpec] = [
        // A week at most: longer is a typo (seconds for minutes) more likely than a wish.
        number("power", "idle_off", 0...10_080, unit: "minutes", note: " (0 = never)", default: "0", help: """
            Minutes without a touch, a key or a command before the display goes off (KMS DPMS); a touch or a key wakes
            it; 0 = never. Reading requests (`status`, `list`, `screenshot`, `subscribe`) do not count as use.
            """) { $0.power.idleOff = $1 },
        choice("power", "wake", WakePicture.self, default: "resume", help: """
            The picture shown when the display wakes: `resume` (the one it showed) or `next` (the next one, when the
            display was off for at least autoplay's `interval` with autoplay running: what a frame left on would show
            by then).
            """) { $0.power.wake = $1 },
        key("power", "backlight", "auto, none or a name under /sys/class/backlight", default: "auto", help: """
            The panel's backlight under `/sys/class/backlight`: `auto` (the board's: a firmware interface first, then
            the panel's platform driver, then a raw one, as desktops choose), `none` (leave it alone), or a name such
            as `intel_backlight` or `backlight@0`. With one, `display off` also powers it down (`bl_power`) and waking
            lights it again. Boards without one (HDMI monitors) need nothing: `brightness`, `dim_after` and
            `dim_level` then do nothing. A backlight that cannot be written is one warning line and the display runs
            on without it (Troubleshooting in the README says which permissions it needs).
            """) { c, v throws(ValueError) in
            c.power.backlight = try BacklightChoice(v)
        },
        KeySpec(section: "power", name: "brightness", domain: .autoOrInteger(1...100),
                accepts: "auto or 1 to 100 (percent)", default: "auto", help: """
            The lit level, in percent of the backlight's range; `auto`: the level last set with `brightness N` (kept
            in the state directory), else the level the board had when carouseld started.
            """) { c, v throws(ValueError) in
            c.power.brightness = try autoOrValue(v).map { v throws(ValueError) in try integer(v, 1...100) }
        },
        number("power", "dim_after", 0...10_080, unit: "minutes", note: " (0 = never)", default: "0", help: """
            Minutes without a touch, a key or a command before the backlight dims to `dim_level`; the first touch
            lights it again (and acts as usual: the picture is still visible). 0 = never. Dims only while the rules
            decide (not after `display on`) and only below the lit level.
            """) { $0.power.dimAfter = $1 },
        integer("power", "dim_level", 1...100, default: "20", help: """
            The dimmed level, in percent of the backlight's range.
            """) { $0.power.dimLevel = $1 },
        key("power", "schedule", "on-times, e.g. mon-fri 07:00-22:00, sat,sun 09:00-23:00; empty: always", default: "", help: """
            When the display is on, in local time (the system's time zone): days (`mon` ... `sun`, ranges such as
            `mon-fri` or `fri-mon`, or `daily`) followed by one or more on-times `HH:MM-HH:MM`, such as `mon-fri
            07:00-22:00, sat,sun 09:00-23:00`. An on-time may end at `24:00` or cross midnight (`daily 18:00-02:00`).
            Outside the on-times the display is off (as `display off`); a touch or a key wakes it for `idle_off`
            minutes (5 when `idle_off` is 0). The daemon shows its first picture before it goes dark at night;
            daylight-saving changes and a clock set by NTP or by hand move the next switch with them. Empty: always
            on.
            """) { c, v throws(ValueError) in
            do throws(PowerSchedule.ParseError) {
                c.power.schedule = try PowerSchedule.parse(v)
            } catch {
                throw ValueError(error.message)
            }
        },
        key("power", "presence", "gpio:CHIP:LINE, key:NAME or empty", default: "", help: """
            A presence sensor (a PIR) that wakes the display and holds it on while someone is there; `idle_off` counts
            from when presence ends. `gpio:CHIP:LINE` reads a GPIO line through libgpiod (install libgpiod2): the chip
            as `gpiochip0`, `/dev/gpiochip0` or its label, the line as its number on the chip or its name, e.g.
            `gpio:gpiochip0:17`; high means someone is there (see `presence_active_low`). `key:NAME` takes a key of an
            input device, down while someone is there, e.g. `key:KEY_F13` for a PIR wired as a `gpio-key` (names as in
            linux/input-event-codes.h); that key then commands nothing. A wake by presence is no touch: the picture
            stays. A sensor that cannot be opened is one warning line and the carousel runs on. Empty: none.
            """) { c, v throws(ValueError) in c.power.presence = try PresenceSource.parse(v) },
        flag("power", "presence_active_low", default: "false", help: """
            The GPIO line of `presence = gpio:...` reads low while someone is there (a sensor with an open-collector
            output and a pull-up). No effect on `key:`.
            """) { $0.power.presenceActiveLow = $1 },
        number("power", "presence_debounce", 0...10, unit: "seconds", default: "0.05", help: """
            Seconds the GPIO line of `presence = gpio:...` must hold its level before it counts: a bouncing contact or
            a noisy line changes presence once. 0: every edge counts. No effect on `key:` (the kernel's gpio-keys
            debounces).
            """) { $0.power.presenceDebounce = $1 },
        choice("power", "presence_at_night", PresenceAtNight.self, default: "sleep", help: """
            Outside the on-times of `schedule`: `sleep` (presence neither wakes nor holds the display; the schedule
            wins, a touch still wakes it) or `wake` (presence wakes it and holds it on, and it goes off `idle_off`
            minutes after presence ends, 5 when `idle_off` is 0).
            """) { $0.power.presenceAtNight = $1 },
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
        key("mqtt", "broker", "mqtt://HOST:PORT or mqtts://HOST:PORT, or empty (no MQTT)", default: "", help: """
            The MQTT broker to join (Home Assistant, fleets), `mqtt://HOST:PORT` or `mqtts://HOST:PORT` (TLS); the
            port may be left out (1883, 8883 with TLS); IPv6 in brackets (`mqtt://[fd00::1]:1883`). Empty: no MQTT. A
            bad URL or port is refused at `check-config`, start and reload. The README's MQTT and Home Assistant
            section tells the rest.
            """) { c, v throws(ValueError) in
            if v.isEmpty { c.mqtt.broker = nil; return }
            c.mqtt.broker = try MQTTBroker.parse(v).get()
        },
        key("mqtt", "username", "a user name or empty", default: "", help: """
            The user name at the broker; empty: none.
            """) { c, v throws(ValueError) in c.mqtt.username = v.isEmpty ? nil : v },
        key("mqtt", "password_file", "an absolute path or empty", default: "", help: """
            The absolute path of a file whose first line is the password (the password never goes in the INI); it must
            be the service's user's and readable by it alone (`carouseld`, mode 0600): a file others may read is refused
            with the `chmod` that fixes it. Empty: no password. A missing, unreadable or empty file is one error at
            `check-config`, start and reload. A password going to an `mqtt://` broker on another machine is one warning.
            """) { c, v throws(ValueError) in
            guard !v.isEmpty else { c.mqtt.passwordFile = nil; return }
            guard v.hasPrefix("/") else { throw ValueError("expected an absolute path to a file holding the password") }
            c.mqtt.passwordFile = v
        },
        key("mqtt", "ca_file", "an absolute path or empty (the system's CA store)", default: "", help: """
            CA certificates (PEM) that sign the broker's certificate, for `mqtts://`; empty: the system's store,
            `/etc/ssl/certs`.
            """) { c, v throws(ValueError) in
            guard !v.isEmpty else { c.mqtt.caFile = nil; return }
            guard v.hasPrefix("/") else { throw ValueError("expected an absolute path to a PEM file of CA certificates") }
            c.mqtt.caFile = v
        },
        key("mqtt", "client_id", "a client id or empty (the host name)", default: "", help: """
            The client id at the broker, also the Home Assistant device's id; no spaces, `/`, `+` or `#`. Empty: the
            host name.
            """) { c, v throws(ValueError) in
            guard !v.isEmpty else { c.mqtt.clientID = nil; return }
            guard v.utf8.count <= 64, !v.contains(where: { "+#/ \t".contains($0) || $0.isNewline }) else {
                throw ValueError("expected at most 64 bytes without spaces, '/', '+' or '#' (it is a topic level too)")
            }
            c.mqtt.clientID = v
        },
        key("mqtt", "topic", "a topic such as carouseld/kitchen, or empty (carouseld/CLIENT_ID)", default: "", help: """
            The topic everything of this frame goes under (`.../state`, `.../command`, ...); no wildcards. Empty:
            `carouseld/CLIENT_ID`.
            """) { c, v throws(ValueError) in
            c.mqtt.topic = v.isEmpty ? nil : try topicName(v, "topic")
        },
        key("mqtt", "discovery_prefix", "a topic prefix such as homeassistant, or empty (no discovery)", default: "homeassistant", help: """
            Home Assistant's MQTT discovery prefix; empty: no discovery, and a reload that empties it removes the
            entities announced before.
            """) { c, v throws(ValueError) in
            c.mqtt.discoveryPrefix = v.isEmpty ? "" : try topicName(v, "discovery_prefix")
        },
        integer("mqtt", "keepalive", 5...65535, default: "60", help: """
            Seconds: a keep-alive is sent when nothing else was, and a broker silent for this long (or one that never
            answers a connection) is left and joined again.
            """) { $0.mqtt.keepalive = $1 },
    ]

    static let overlay: [KeySpec] = [
        choice("overlay", "caption", CaptionKind.self, default: "none", help: """
            A caption on each picture, drawn into the picture when it is decoded (so it slides with its picture and
            costs nothing per frame): `none`; `date`, the day it was taken (EXIF `DateTimeOriginal`) as `12 March
            2024` (no date in the file: no caption); `name`, the file name without its extension; `exif`, the
            picture's description (XMP `dc:description`, its `x-default` entry, else EXIF `ImageDescription`; read
            from JPEG, PNG and WebP, in the file's first 512 KiB); `sidecar`, the text of `NAME.txt` beside
            `NAME.jpg`: its first paragraph, at most 3 lines, from the first 4 KiB. A missing sidecar is no caption;
            one that is not UTF-8 is one warning line naming it, and no caption. A line wider than the picture is cut
            with an ellipsis.
            """) { $0.overlay.caption = $1 },
        choice("overlay", "position", OverlayPosition.self, default: "bottom-left", help: """
            Where the caption sits on its picture (its lines are aligned to that side).
            """) { $0.overlay.position = $1 },
        key("overlay", "clock", "none or a format such as HH:MM or h:MM am (HH, H, hh, h, MM, AM, am)", default: "none", help: """
            A clock that stays put on the screen while pictures slide under it: `none`, or a format of `HH` (00-23),
            `H` (0-23), `hh` (01-12), `h` (1-12), `MM` (minutes), `AM`/`am` (AM or PM), anything else as written:
            `HH:MM`, `h:MM am`. Local time (the system's time zone). It repaints its own rectangle once a minute, on
            the wall clock's minute, and a clock set by NTP or by hand moves it at once; at rest it is the loop's only
            wake-up.
            """) { c, v throws(ValueError) in
            if v.isEmpty || v.lowercased() == "none" { c.overlay.clock = nil; return }
            guard let format = ClockFormat(v) else {
                throw ValueError("expected none or a clock format with one hour field (HH, H, hh or h) and MM (no seconds: it repaints once a minute), e.g. HH:MM or h:MM am")
            }
            c.overlay.clock = format
        },
        choice("overlay", "clock_position", OverlayPosition.self, default: "top-right", help: """
            Where the clock sits on the screen, as `position`; not the caption's corner (an error: they would cover
            each other).
            """) { $0.overlay.clockPosition = $1 },
        key("overlay", "text_file", "an absolute path or empty (none)", default: "", help: """
            A file whose text is shown on the screen, as the clock is (it stays put while pictures slide under it): the
            weather, today's calendar, a message, written by any script. It is followed as it changes (inotify on its
            folder; write a temporary file beside it and `mv` it over the name, so that a half-written file never
            shows), costs no wake-up at rest and redraws only its own rectangle. Its first 4 lines are shown (blank
            lines at its start and end left out), each cut with an ellipsis where it is wider than its share of the
            screen (half of it in a corner, all of it centred). A file larger than 16 KiB, one that is not UTF-8 text
            or holds a NUL byte is one warning line and is not shown; a file that goes away takes its text with it.
            `overlay text "..."` (control socket, MQTT) shows over it until `overlay clear`. Empty: no file.
            """) { c, v throws(ValueError) in
            if v.isEmpty { c.overlay.textFile = nil; return }
            guard v.hasPrefix("/"), !v.hasSuffix("/"), v.utf8.count < 4096,
                  !v.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
                throw ValueError("expected an absolute path to a file, such as /dev/shm/carouseld-text")
            }
            c.overlay.textFile = v
        },
        choice("overlay", "text_position", OverlayPosition.self, default: "top-left", help: """
            Where the text of `text_file` or `overlay text` sits on the screen, as `position`. In the clock's corner
            it goes beneath the clock (above it at the bottom). Not the captions' corner when `text_file` is set (an
            error: they would cover each other).
            """) { $0.overlay.textPosition = $1 },
        key("overlay", "font", "a fontconfig pattern such as DejaVu Sans or Noto Sans:bold", default: "DejaVu Sans", help: """
            A fontconfig pattern (`Noto Sans:bold`); `fc-list : family` lists the installed families. Characters the
            font lacks (CJK in DejaVu Sans) come from the installed font fontconfig ranks next that has them
            (`fonts-wqy-zenhei`, `fonts-noto-cjk`). Right-to-left text (Arabic, Hebrew) is shaped by HarfBuzz and
            ordered by the Unicode bidirectional algorithm: a line is right to left when its first letter is; numbers
            keep their reading order inside it (a year in an Arabic caption, a clock `HH:MM` after an Arabic word),
            words of another script keep theirs, spaces and punctuation go with the text around them (explicit
            embedding controls are not followed). A family that is not installed is one warning line, and the carousel
            runs on without text.
            """) { c, v throws(ValueError) in
            guard !v.isEmpty, v.utf8.count <= 200, !v.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
                throw ValueError("expected a fontconfig pattern such as DejaVu Sans (fc-list : family lists the fonts)")
            }
            c.overlay.text.font = v
        },
        KeySpec(section: "overlay", name: "size", domain: .autoOrInteger(8...400),
                accepts: "auto or 8 to 400 (pixels; auto: a 25th of the screen's shorter side)", default: "auto", help: """
            The text's size in pixels; `auto`: a 25th of the screen's shorter side (43 pixels on 1920x1080).
            """) { c, v throws(ValueError) in
            c.overlay.text.size = try autoOrValue(v).map { v throws(ValueError) in try integer(v, 8...400) }
        },
        colorKey("overlay", "color", default: "#FFFFFF", help: "The text's colour.") { $0.overlay.text.color = $1 },
        choice("overlay", "backdrop", TextBackdrop.self, default: "shadow", help: """
            What keeps text readable on any picture: `shadow` (a soft dark shadow), `scrim` (a translucent dark box
            behind the text) or `none`.
            """) { $0.overlay.text.backdrop = $1 },
    ]

    static let log: [KeySpec] = [
        KeySpec(section: "log", name: "level", domain: .choice(LogPriority.allCases.map(\.description)),
                accepts: "error, warning, info or debug", default: "info", help: """
            The least urgent lines logged (to stderr, with syslog priority prefixes for journald).
            """) { c, v throws(ValueError) in c.logLevel = try logPriority(v) },
    ]
}
