import CarouselCore
import CarouselPlatform
import CarouselWords

/// Pushed text's settings, keys of `[overlay]` (beside the captions and the clock).
public struct PushedTextSettings: CapabilitySettings {
    /// The file whose text is shown on the screen (`text_file`, an absolute
    /// path, followed as it changes); nil: none.
    public var textFile: String?
    /// Where pushed text sits on the screen (it stays put); in the clock's
    /// corner it goes beneath the clock (above it at the bottom).
    public var textPosition = OverlayPosition.topLeft

    public init() {}
}

/// What pushed text says to the world: its keys in `[overlay]`, the
/// `overlay` request, the `overlay` status field, Home Assistant's text entity.
public enum PushedTextWords {
    public static let words = CapabilityWords(
        name: "pushed text",
        keys: keys.map(\.inBag),
        check: { config in
            let overlay = config.overlay, text = config[PushedTextSettings.self]
            guard text.textFile != nil, overlay.caption != .none, text.textPosition == overlay.position else { return nil }
            return "[overlay] text_position and position are both \(overlay.position.rawValue): the text would cover the captions; "
                + "put one of them elsewhere"
        },
        requests: [
            RequestWords(name: "overlay", usage: "overlay text <text>|clear", help: """
                Shows the text on the screen, at `[overlay] text_position`, over the text of `[overlay] text_file` \
                (if any) until `overlay clear`, which takes it away (the file's text shows again). A backslash and n \
                (`\\n`) end a line; at most 4 lines show, each cut with an ellipsis where it is too wide. A text in \
                double quotes is read as a JSON string; an empty text clears. The text survives a reload, not a \
                restart.
                """, joinsLines: true, parse: parse),
        ],
        status: [StatusWords("overlay", help: """
            The text on the screen (`text`, null for none), where it comes from (`source`: `pushed` or `file`), and \
            `text_file`.
            """)],
        entities: [
            // What is set shows over `[overlay] text_file`'s; an empty text
            // clears it (the file's shows again). Sent as a JSON string, which
            // the request reads back as it was typed: bare, a text in quotes
            // would be read as JSON (`"a" and "b"` refused).
            EntityWords(component: "text", object: "text", name: "Text",
                        fields: ["command_topic": .commandTopic,
                                 "command_template": .value(.string("overlay text {{ value | to_json }}")),
                                 "state_topic": .stateTopic,
                                 "value_template": .value(.string("{{ (value_json.overlay.text or '')[:255] }}")),
                                 "max": .value(.int(255)), "mode": .value(.string("text")),
                                 "icon": .value(.string("mdi:message-text-outline"))],
                        after: "screenshot"),
        ])

    /// The most text `overlay text` takes (bytes): a few lines, not a page.
    public static let maximumText = 4096

    /// `overlay text TEXT`: text shown on the screen over `[overlay]
    /// text_file`'s until `overlay clear` (an empty text clears). Its line
    /// quotes the text as JSON, so that a line end or a quote inside
    /// survives the one line.
    public static func text(_ text: String) -> DeclaredRequest {
        DeclaredRequest(name: textName, argument: text, needs: .drive,
                        line: "overlay text \(JSONValue.string(text).encoded)")
    }

    /// What `overlay text` is called, whatever its text.
    public static let textName = "overlay text"

    /// `overlay clear`: the pushed text goes; the file's shows again.
    public static let clear = DeclaredRequest(name: "overlay clear", needs: .drive, line: "overlay clear")

    /// The words after `overlay`.
    static func parse(_ rest: String) -> Result<DeclaredRequest, ValueError> {
        let usage = "usage: overlay text <text>|clear"
        let action = rest.prefix { !isBlank($0) }
        let after = rest[action.endIndex...].drop(while: isBlank)
        switch action {
        case "clear":
            guard after.isEmpty else {
                return .failure(ValueError("overlay clear takes no arguments, got '\(after.prefix { !isBlank($0) })'"))
            }
            return .success(clear)
        case "text":
            // The text is the rest of the line, with its inner spacing.
            var text = String(after.reversed().drop(while: isBlank).reversed())
            if text.hasPrefix("\""), text.count >= 2, text.hasSuffix("\"") {
                guard case let .string(decoded)? = JSONValue.parse(text) else {
                    return .failure(ValueError(
                        "overlay text: a text in double quotes is read as a JSON string (escape \\\" and \\\\), got \(text)"))
                }
                text = decoded
            }
            guard text.utf8.count <= maximumText else {
                return .failure(ValueError("overlay text takes at most \(maximumText) bytes, got \(text.utf8.count)"))
            }
            return .success(Self.text(text))
        default:
            let words = rest.split(whereSeparator: isBlank).joined(separator: " ")
            return .failure(ValueError("overlay needs text or clear (\(usage)), got \(words.isEmpty ? "nothing" : "'\(words)'")"))
        }
    }

    private static func isBlank(_ c: Character) -> Bool { c == " " || c == "\t" || c == "\r" }

    /// The keys, in `[overlay]` after the clock's.
    static let keys: [KeyDeclaration<PushedTextSettings>] = [
        // A file the daemon reads, wherever it is: `administer`.
        .text("overlay", "text_file", "an absolute path or empty (none)", default: "",
              needs: .administer, after: "clock_position", help: """
            A file whose text is shown on the screen, as the clock is (it stays put while pictures slide under it): the
            weather, today's calendar, a message, written by any script. It is followed as it changes (inotify on its
            folder; write a temporary file beside it and `mv` it over the name, so that a half-written file never
            shows), costs no wake-up at rest and redraws only its own rectangle. Its first 4 lines are shown (blank
            lines at its start and end left out), each cut with an ellipsis where it is wider than its share of the
            screen (half of it in a corner, all of it centred). A file larger than 16 KiB, one that is not UTF-8 text
            or holds a NUL byte is one warning line and is not shown; a file that goes away takes its text with it.
            `overlay text "..."` (control socket, MQTT) shows over it until `overlay clear`. Empty: no file.
            """) { s, v throws(ValueError) in
            if v.isEmpty { s.textFile = nil; return }
            guard v.hasPrefix("/"), !v.hasSuffix("/"), v.utf8.count < 4096,
                  !v.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
                throw ValueError("expected an absolute path to a file, such as /dev/shm/carouseld-text")
            }
            s.textFile = v
        },
        .choice("overlay", "text_position", OverlayPosition.self, default: "top-left",
                needs: .tune, after: "text_file", help: """
            Where the text of `text_file` or `overlay text` sits on the screen, as `position`. In the clock's corner
            it goes beneath the clock (above it at the bottom). Not the captions' corner when `text_file` is set (an
            error: they would cover each other).
            """) { $0.textPosition = $1 },
    ]
}
