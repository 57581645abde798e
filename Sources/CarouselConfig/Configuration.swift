import CarouselCapabilities
import CarouselCore
import CarouselPlatform

public enum DisplayAPI: String, Sendable, CaseIterable { case auto, atomic, legacy }
/// `[display] backend`: the kernel's interface to the panel.
public enum DisplayBackendKind: String, Sendable, CaseIterable { case drm, fbdev }
/// `[images] order`. `random` is one fixed shuffle (the same after a restart);
/// `shuffle` a new order on every pass (`Shuffle` in the album room).
public enum ImageOrder: String, Sendable, CaseIterable { case name, mtime, random, shuffle }

/// The picture a display shows when it wakes (`[power] wake`): the one it
/// showed, or the next where autoplay would have moved on meanwhile.
public enum WakePicture: String, Sendable, CaseIterable { case resume, next }

/// A display mode request: `1920x1080` or `1920x1080@60`.
public struct ModeRequest: Equatable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public var refresh: Int?

    public init?(_ text: String) {
        guard let mode = ModeText.parse(text) else { return nil }
        (width, height, refresh) = (mode.width, mode.height, mode.refresh)
    }

    public var description: String { "\(width)x\(height)" + (refresh.map { "@\($0)" } ?? "") }
}

public struct DisplayConfig: Equatable, Sendable {
    /// DRM/KMS, or the framebuffer device (SPI panels, kernels without KMS).
    public var backend = DisplayBackendKind.drm
    /// `nil`: the first card with a connected connector (fbdev: /dev/fb0).
    public var device: String? = nil
    /// `nil`: the first connected connector.
    public var connector: String? = nil
    /// `nil`: the connector's preferred mode.
    public var mode: ModeRequest? = nil
    public var rotation = 0
    public var api = DisplayAPI.auto
    public var background = PixelColor(red: 0, green: 0, blue: 0)
    /// Whether slides may move the display's scan-out window over a buffer
    /// longer than the panel instead of copying each frame
    /// (`DisplayBackend.reserveWindowRoom`). `false` for drivers that accept
    /// a framebuffer offset but show the wrong window.
    public var zeroCopy = true
    public init() {}
}

public struct InputConfig: Equatable, Sendable {
    public var seat = "seat0"
    /// libinput's calibration matrix (six numbers), `nil` for none.
    public var calibration: [Double]? = nil
    public var pointer = true
    public var keyboard = true
    public init() {}
}

public struct ImagesConfig: Equatable, Sendable {
    public var path = "/var/lib/carouseld/images"
    /// An explicit list; overrides `path` when not empty.
    public var files: [String] = []
    public var order = ImageOrder.name
    public var fit = FitMode.contain
    /// `fit = blur`: the fill's blur (standard deviation, screen pixels) and darkening (0 to 1).
    public var blurRadius = 40.0
    public var dim = 0.4
    public var maxPixels = 64_000_000
    /// The decode budget in MiB; `nil` (`auto`): what the screen needs,
    /// the pictures the carousel can want at once at the item size.
    public var cacheMB: Int? = nil
    /// What one decode may hold, in MiB; `nil` (`auto`): half of the
    /// board's memory (`Configuration.decodeBytes`).
    public var decodeMB: Int? = nil
    /// Start on the picture that was on screen when the daemon stopped (kept
    /// in the state directory); false: always at `[carousel] start_index`.
    public var resume = true
    /// Pictures in subfolders of `path` too, listed by relative path and watched.
    public var recursive = false
    /// Two consecutive portraits share a page, side by side (landscape screens).
    public var pairPortraits = false
    public init() {}
}

public struct ControlConfig: Equatable, Sendable {
    public var socket = "/run/carouseld/control.sock"
    public var mode: UInt32 = 0o660
    public var group: String? = nil
    public var allowUIDs: [UInt32] = []
    public var allowGIDs: [UInt32] = []
    public var maxClients = 16
    /// The frame's settings file (`keep`, the web page's Settings), read
    /// after carouseld.ini and its drop-ins; nil: none.
    public var settings: String? = "/var/lib/carouseld/settings.ini"
    public init() {}
}

/// Everything `carouseld.ini` can say (SPEC.md section 8), with its defaults.
/// `[power]`: when the display switches itself off.
public struct PowerConfig: Equatable, Sendable {
    /// Minutes without a touch, a key or a command before the display goes
    /// off; 0: never.
    public var idleOff: Double = 0
    /// When the display is on (`[power] schedule`); nil: at all times.
    public var schedule: PowerSchedule?
    public var wake = WakePicture.resume
    /// The panel's backlight (`[power] backlight`).
    public var backlight = BacklightChoice.auto
    /// The lit level in percent of the backlight's range (`[power]
    /// brightness`); nil: the level the board has at start.
    public var brightness: Int?
    /// Minutes without a touch, a key or a command before the backlight
    /// dims to `dimLevel` percent; 0: never.
    public var dimAfter: Double = 0
    public var dimLevel = 20
    public init() {}
}

/// Which backlight the daemon drives (`[power] backlight`): the one the
/// board has (`auto`: firmware, then platform, then raw interfaces, as
/// systemd-backlight and the desktops rank them), none, or one by name.
public enum BacklightChoice: Equatable, Sendable, CustomStringConvertible {
    case auto, none
    case named(String)

    public init(_ text: String) throws(ValueError) {
        switch text.lowercased() {
        case "", "auto": self = .auto
        case "none": self = .none
        default:
            // A directory name under /sys/class/backlight: no path, no dot-dot.
            guard !text.contains("/"), text != ".", text != "..", text.utf8.count <= 255,
                  !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0 == " " }) else {
                throw ValueError("expected auto, none or a backlight's name as in /sys/class/backlight (no path)")
            }
            self = .named(text)
        }
    }

    public var description: String {
        switch self {
        case .auto: "auto"
        case .none: "none"
        case let .named(name): name
        }
    }
}

public struct Configuration: Equatable, Sendable {
    public var display = DisplayConfig()
    public var input = InputConfig()
    public var carousel = CarouselSettings()
    public var autoplay = AutoplaySettings()
    public var zoom = ZoomSettings()
    public var images = ImagesConfig()
    public var indicator = IndicatorStyle()
    public var control = ControlConfig()
    public var power = PowerConfig()
    /// `[overlay]`: captions on the pictures and a clock on the screen.
    public var overlay = OverlaySettings()
    public var mqtt = MQTTConfig()
    /// `[sync]`: what `carouseld sync` fetches into the album (the daemon itself ignores it).
    public var sync = SyncSettings()
    public var logLevel = LogPriority.info
    /// The capabilities' settings, each under its own type (`config[VideoSettings.self]`).
    public var capabilities = SettingsBag()

    public init() {}

    /// A capability's settings (its defaults where the INI says nothing of them).
    public subscript<S: CapabilitySettings>(_ type: S.Type) -> S {
        get { capabilities[type] }
        set { capabilities[type] = newValue }
    }

    /// Reads and validates INI text. Every key is checked; the first problem
    /// is thrown as `FILE:LINE: message`.
    public static func parse(_ text: String, file: String) throws(ConfigError) -> Configuration {
        try parse(layers: [ConfigurationLayer(text: text, file: file)]).configuration
    }

    /// Reads INI files one over the other (carouseld.ini, its drop-ins, the
    /// frame's settings file): a key a later file sets wins. Every key of
    /// every file is checked as it comes; the checks that take several keys
    /// run once all are in, and are reported at the last line of the last
    /// file that touched their section. Also says where each key's value
    /// came from.
    public static func parse(layers: [ConfigurationLayer]) throws(ConfigError) -> (configuration: Configuration, sources: ConfigurationSources) {
        var config = Configuration()
        var sources = ConfigurationSources()
        var overlayLine: (String, Int)?
        var syncLine: (String, Int)?
        // The last line of each section, where a capability's check that fails is reported.
        var sectionLines: [String: (String, Int)] = [:]
        for layer in layers {
            let file = layer.file
            let entries: [IniEntry]
            do {
                entries = try IniParser.parse(layer.text, file: file, sections: Schema.sectionNames)
            } catch where layer.lenient {
                sources.ignored.append("\(error) (the whole file is left out)")
                continue
            }
            for entry in entries {
              do throws(ConfigError) {
                guard let sectionKeys = Schema.sections[entry.section] else {
                    throw ConfigError(file: file, line: entry.line,
                                      message: "unknown section [\(excerpt(entry.section))] (known: \(Schema.sectionNames.map { "[\($0)]" }.joined(separator: ", ")))")
                }
                guard let spec = sectionKeys.first(where: { $0.name == entry.key }) else {
                    throw ConfigError(file: file, line: entry.line,
                                      message: "unknown key '\(excerpt(entry.key))' in [\(entry.section)] (known: \(sectionKeys.map(\.name).joined(separator: ", ")))")
                }
                if let allowed = layer.allows, let needed = Schema.capability(ofKey: "\(entry.section).\(entry.key)"),
                   !allowed.contains(needed) {
                    throw ConfigError(file: file, line: entry.line, message: "\(entry.section).\(entry.key) is not taken from "
                                      + "this file: it needs \(needed.rawValue) (\(needed.meaning)); set it in carouseld.ini")
                }
                do {
                    try spec.apply(&config, entry.value)
                } catch {
                    throw ConfigError(file: file, line: entry.line, message: "\(entry.key) = '\(excerpt(entry.value))': \(error.message)")
                }
                sources.entries["\(entry.section).\(entry.key)"] = ConfigurationSources.Source(value: entry.value, file: file, line: entry.line)
                if entry.section == "overlay" { overlayLine = (file, entry.line) }
                if entry.section == "sync" { syncLine = (file, entry.line) }
                sectionLines[entry.section] = (file, entry.line)
              } catch where layer.lenient {
                // A machine-written file (the settings) never stops the frame:
                // a key an upgrade renamed is left out, and said.
                sources.ignored.append("\(error) (left out)")
              }
            }
        }
        // Checked once all keys are in: the corners may be set in any order.
        if let (file, line) = overlayLine, let problem = config.overlay.conflict {
            throw ConfigError(file: file, line: line, message: problem)
        }
        // A capability's check, at the last line of the sections its keys are in.
        for words in Capabilities.all {
            guard let check = words.check, let problem = check(config) else { continue }
            let places = Set(words.keys.map(\.section)).compactMap { sectionLines[$0] }
            // The last of them in the last file (layers are in order).
            guard let place = places.max(by: { a, b in
                let ia = layers.lastIndex { $0.file == a.0 } ?? 0, ib = layers.lastIndex { $0.file == b.0 } ?? 0
                return ia != ib ? ia < ib : a.1 < b.1
            }) else { continue }
            throw ConfigError(file: place.0, line: place.1, message: problem)
        }
        if let (file, line) = syncLine, let problem = config.sync.incomplete {
            throw ConfigError(file: file, line: line, message: problem)
        }
        return (config, sources)
    }

    /// Sets one key by its name without section, as `carouseld simulate`'s
    /// `set KEY VALUE` does (`autoplay` is `[autoplay] enabled`), or by
    /// `section.key`. Model keys win over same-named keys of other sections.
    public mutating func set(_ key: String, _ value: String) throws(ValueError) {
        guard let spec = Schema.lookup(key) else {
            throw ValueError("unknown key '\(key)' (known: \(Schema.shortNames.joined(separator: ", ")))")
        }
        var changed = self
        try spec.apply(&changed, value)
        if let problem = changed.overlay.conflict { throw ValueError(problem) }
        for words in Capabilities.all {
            if let problem = words.check?(changed) { throw ValueError(problem) }
        }
        self = changed
    }
}

extension OverlaySettings {
    /// Why these settings cannot be drawn as written: the clock and the
    /// captions in the same corner would cover each other (pushed text's
    /// corner is checked by its own words, `PushedTextWords`).
    public var conflict: String? {
        if clock != nil, caption != .none, clockPosition == position {
            return "[overlay] clock_position and position are both \(position.rawValue): the clock would cover the captions; "
                + "put one of them elsewhere"
        }
        return nil
    }
}

extension Configuration {
    /// Where the pictures come from, for log lines: the folder, or the `[images] files` list.
    public var albumSource: String { images.files.isEmpty ? images.path : "the [images] files list" }
}

/// What a capability's check reads: the configuration's overlay corners and
/// the capabilities' settings.
extension Configuration: SettingsReading {}

/// One INI file read over the ones before it.
public struct ConfigurationLayer: Sendable {
    public var text: String
    public var file: String
    /// The capabilities a key this file sets may need; nil: any (the
    /// administrator's files). The frame's settings file, written from the
    /// page and `keep`, never holds a key that needs `administer`.
    public var allows: Set<Capability>?
    /// A line this file gets wrong is left out (and said in
    /// `ConfigurationSources.ignored`) instead of refusing the whole
    /// configuration: the settings file, which a program writes.
    public var lenient: Bool

    public init(text: String, file: String, allows: Set<Capability>? = nil, lenient: Bool = false) {
        self.text = text
        self.file = file
        self.allows = allows
        self.lenient = lenient
    }
}

/// Where each key's value came from: the file and line that set it last
/// (keys at their defaults are not listed).
public struct ConfigurationSources: Equatable, Sendable {
    public struct Source: Equatable, Sendable {
        public var value: String
        public var file: String
        public var line: Int
        public init(value: String, file: String, line: Int) {
            self.value = value
            self.file = file
            self.line = line
        }
    }
    /// By `section.key`.
    public var entries: [String: Source] = [:]
    /// The lines of a lenient file that were left out, as error lines.
    public var ignored: [String] = []
    public init() {}
}
