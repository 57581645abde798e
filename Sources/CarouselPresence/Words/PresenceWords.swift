import CarouselCore
import CarouselPlatform
import CarouselWords

/// The presence sensor's settings, keys of `[power]` (the display's power is what presence decides).
public struct PresenceSettings: CapabilitySettings {
    /// A presence sensor (`[power] presence`); nil: none.
    public var source: PresenceSource?
    /// The GPIO line reads 0 when someone is there (`presence_active_low`).
    public var activeLow = false
    /// Seconds a GPIO line must hold still before its level counts (`presence_debounce`).
    public var debounce = 0.05
    /// Whether presence wakes the display outside the schedule's on-times.
    public var atNight = PresenceAtNight.sleep

    public init() {}
}

/// What the presence sensor says to the world: its keys in `[power]`, the
/// `presence` status field, its events, Home Assistant's occupancy sensor.
public enum PresenceWords {
    public static let words = CapabilityWords(
        name: "presence",
        keys: keys.map(\.inBag),
        status: [StatusWords("presence", help: """
            With `[power] presence` set: `source`, `present` (whether someone is there) and `since_ms` (when the \
            sensor last changed its word, on `uptime_ms`'s clock); null without a sensor.
            """)],
        events: [
            EventWords(didDetectPresence, help: "The sensor saw someone come (`t`)."),
            EventWords(didLosePresence, help: "The sensor saw nobody any more (`t`)."),
        ],
        entities: [
            EntityWords(component: "binary_sensor", object: "presence", name: "Presence",
                        fields: ["state_topic": .stateTopic, "device_class": .value(.string("occupancy")),
                                 "payload_on": .value(.string("ON")), "payload_off": .value(.string("OFF")),
                                 "value_template": .value(.string(
                                     "{{ 'ON' if value_json.presence and value_json.presence.present else 'OFF' }}"))],
                        shown: { $0[PresenceSettings.self].source != nil }),
        ])

    /// The events' names, as subscribers and MQTT's event topic see them.
    public static let didDetectPresence = "didDetectPresence"
    public static let didLosePresence = "didLosePresence"

    /// The keys, at the end of `[power]`: which sensor (a device on the
    /// board: `administer`), how its line reads (`configure`), how presence
    /// counts (`tune`).
    static let keys: [KeyDeclaration<PresenceSettings>] = [
        .text("power", "presence", "gpio:CHIP:LINE, key:NAME or empty", default: "", needs: .administer, help: """
            A presence sensor (a PIR) that wakes the display and holds it on while someone is there; `idle_off` counts
            from when presence ends. `gpio:CHIP:LINE` reads a GPIO line through libgpiod (install libgpiod2): the chip
            as `gpiochip0`, `/dev/gpiochip0` or its label, the line as its number on the chip or its name, e.g.
            `gpio:gpiochip0:17`; high means someone is there (see `presence_active_low`). `key:NAME` takes a key of an
            input device, down while someone is there, e.g. `key:KEY_F13` for a PIR wired as a `gpio-key` (names as in
            linux/input-event-codes.h); that key then commands nothing. A wake by presence is no touch: the picture
            stays. A sensor that cannot be opened is one warning line and the carousel runs on. Empty: none.
            """) { s, v throws(ValueError) in s.source = try PresenceSource.parse(v) },
        .flag("power", "presence_active_low", default: "false", needs: .configure, help: """
            The GPIO line of `presence = gpio:...` reads low while someone is there (a sensor with an open-collector
            output and a pull-up). No effect on `key:`.
            """) { $0.activeLow = $1 },
        .number("power", "presence_debounce", 0...10, unit: "seconds", default: "0.05", needs: .tune, help: """
            Seconds the GPIO line of `presence = gpio:...` must hold its level before it counts: a bouncing contact or
            a noisy line changes presence once. 0: every edge counts. No effect on `key:` (the kernel's gpio-keys
            debounces).
            """) { $0.debounce = $1 },
        .choice("power", "presence_at_night", PresenceAtNight.self, default: "sleep", needs: .tune, help: """
            Outside the on-times of `schedule`: `sleep` (presence neither wakes nor holds the display; the schedule
            wins, a touch still wakes it) or `wake` (presence wakes it and holds it on, and it goes off `idle_off`
            minutes after presence ends, 5 when `idle_off` is 0).
            """) { $0.atNight = $1 },
    ]
}

/// `[power] presence_at_night`: outside the schedule's on-times presence
/// leaves the display dark (`sleep`) or wakes it as by day (`wake`).
public enum PresenceAtNight: String, Sendable, CaseIterable { case sleep, wake }

/// Where presence comes from (`[power] presence`): a GPIO line through the
/// kernel's character device (`gpio:CHIP:LINE`), or a key of an input
/// device (`key:NAME`; a PIR wired as a `gpio-key`), down while someone is there.
public enum PresenceSource: Equatable, Sendable, CustomStringConvertible {
    /// `chip`: gpiochip0, /dev/gpiochip0 or a chip's label (libgpiod's
    /// lookup); `line`: an offset on it or a line's name.
    case gpio(chip: String, line: GPIOLineName)
    /// A Linux key code and the name it was given by.
    case key(code: UInt32, name: String)

    public enum GPIOLineName: Equatable, Sendable, CustomStringConvertible {
        case offset(UInt32)
        case named(String)
        public var description: String {
            switch self {
            case let .offset(n): String(n)
            case let .named(name): name
            }
        }
    }

    /// Parses the key's value; empty: none (`nil`).
    public static func parse(_ text: String) throws(ValueError) -> PresenceSource? {
        let text = String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        if text.isEmpty { return nil }
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let kind = parts[0].lowercased()
        let rest = parts.count > 1 ? parts[1] : ""
        switch kind {
        case "gpio":
            // The line follows the last colon: a chip's label may hold none, a path none either.
            guard let colon = rest.lastIndex(of: ":") else {
                throw ValueError("expected gpio:CHIP:LINE, e.g. gpio:gpiochip0:17 (the chip, then the line's number or name)")
            }
            let chip = String(rest[..<colon]), line = String(rest[rest.index(after: colon)...])
            guard !chip.isEmpty, !line.isEmpty else {
                throw ValueError("expected gpio:CHIP:LINE, e.g. gpio:gpiochip0:17 (the chip, then the line's number or name)")
            }
            guard !(chip + line).unicodeScalars.contains(where: { $0.value < 0x20 }), chip.utf8.count <= 255,
                  line.utf8.count <= 255 else { throw ValueError("the chip or line name has control characters or is too long") }
            if chip.contains("/"), !chip.hasPrefix("/dev/") {
                throw ValueError("a chip given by path is under /dev (e.g. /dev/gpiochip0)")
            }
            return .gpio(chip: chip, line: UInt32(line).map { .offset($0) } ?? .named(line))
        case "key":
            let name = rest.uppercased()
            if let code = LinuxKeyNames.codes[name] { return .key(code: code, name: name) }
            throw ValueError("'\(rest)' is not a Linux key name (e.g. key:KEY_F13 or key:BTN_0, as in linux/input-event-codes.h)")
        default:
            throw ValueError("expected gpio:CHIP:LINE (e.g. gpio:gpiochip0:17) or key:NAME (e.g. key:KEY_F13)")
        }
    }

    public var description: String {
        switch self {
        case let .gpio(chip, line): "gpio:\(chip):\(line)"
        case let .key(_, name): "key:\(name)"
        }
    }
}

