import CarouselCapabilities
import CarouselCore
import CarouselPlatform
import CarouselWords

/// One request on the control socket: a line of text, words separated by
/// spaces or tabs. The daemon maps these onto its model; this room only
/// knows their grammar.
public enum ControlRequest: Equatable, Sendable {
    case next
    case prev
    /// `goto <index> [<ms>]`: the item index counts from 0; the optional
    /// duration is the animation's length in milliseconds (0 jumps).
    case goto(index: Int, milliseconds: Int?)
    /// `pause`: autoplay and the clip on screen hold still.
    case pause
    /// `play`: lifts a `pause` (the clip plays on; autoplay as it was before).
    case play
    /// `resume`: autoplay on, even where `[autoplay] enabled = false` (and a clip plays on).
    case resume
    case status
    case reload
    case list
    /// `set <key> <value...>`: the value is the rest of the line, so it may
    /// contain spaces; the daemon validates key and value with its config schema.
    case set(key: String, value: String)
    /// `keep KEY VALUE`: `set`, and the value written into the frame's
    /// settings file (`[control] settings`), so that it outlives a restart.
    case keep(key: String, value: String)
    /// `forget KEY`: the key taken out of the settings file, and the value
    /// carouseld.ini (or its default) gives back.
    case forget(key: String)
    /// `hide [NAME]`: the picture (the one on screen without a name) leaves
    /// this frame's album, and stays out after a restart, until `unhide`.
    case hide(name: String?)
    /// `unhide NAME`: a hidden picture comes back.
    case unhide(name: String)
    /// `screenshot <path.png>`: the daemon writes the PNG at an absolute
    /// path (its working directory means nothing to the client that asked).
    /// `screenshot` alone (path nil): into the file the client sent with the
    /// line as a descriptor (SCM_RIGHTS), written with the client's own
    /// rights where the client chose; `carouselctl screenshot` does this.
    case screenshot(path: String?)
    /// `screenshot raw`: the picture on screen as pixels, not PNG, into the
    /// file sent with the line: `height` rows of `stride` bytes, each pixel
    /// XRGB8888 (bytes B, G, R, X); the reply says width, height and stride.
    /// For a client that encodes the picture itself (the web page), so that
    /// the daemon, which draws the frame, spends no time compressing it.
    case screenshotPixels
    case subscribe
    /// `subscribe changes`: the events, but not the per-frame ones
    /// (`didScroll`, `didZoom`), which cost the daemon a line every frame of
    /// a motion (the web page's live view).
    case subscribeChanges
    case version
    case help
    /// `display on|off|auto`: the display's power; `auto` gives it back to
    /// the idle rule (`[power] idle_off`).
    case display(DisplayPowerSetting)
    /// `brightness N`: the backlight's lit level, percent of its range.
    case brightness(Int)
    /// `zoom SCALE` or `zoom reset` (`scale` nil): the current picture
    /// zoomed about its centre (the daemon clamps to `[zoom] max_scale`).
    case zoom(scale: Double?)
    /// A request a capability declared (`RequestWords`, read by its
    /// words), which the capability's service serves: `overlay text TEXT`.
    case declared(DeclaredRequest)

    /// The requests the capabilities declared (`Capabilities.all`).
    public static let declaredRequests: [RequestWords] = Capabilities.all.flatMap(\.requests)

    /// Every command name, in the order `help` lists them: the capabilities'
    /// after the house's words that drive the frame.
    public static let commandNames = [
        "next", "prev", "goto", "pause", "play", "resume", "status", "reload", "list",
        "set", "keep", "forget", "hide", "unhide", "screenshot", "display", "brightness", "zoom",
    ] + declaredRequests.map(\.name) + ["subscribe", "version", "help"]

    /// One line of usage per command, for `help` and for error messages.
    public static let usage: [String: String] = houseUsage.merging(declaredRequests.map { ($0.name, $0.usage) }) { house, _ in house }

    private static let houseUsage: [String: String] = [
        "next": "next", "prev": "prev", "goto": "goto <index> [<ms>]", "pause": "pause",
        "play": "play", "resume": "resume", "status": "status", "reload": "reload", "list": "list",
        "set": "set <key> <value>", "keep": "keep <key> <value>", "forget": "forget <key>", "hide": "hide [<name>]", "unhide": "unhide <name>", "screenshot": "screenshot [<path.png> | raw]",
        "subscribe": "subscribe [changes]", "version": "version", "help": "help", "display": "display on|off|auto",
        "brightness": "brightness <1-100>", "zoom": "zoom <scale>|reset",
    ]

    /// The largest scale `zoom` accepts (as `[zoom] max_scale` does).
    public static let maximumZoom = 16.0

    /// The longest goto animation accepted: a minute is already absurd for a
    /// slide; anything longer is much more likely a typo (seconds vs ms).
    public static let maximumGotoMilliseconds = 60_000

    /// The carousel command this request asks for, if it is one: the one
    /// place the socket's words meet the model's vocabulary.
    public var command: CarouselCommand? {
        switch self {
        case .next: .next
        case .prev: .previous
        case let .goto(index, ms): .goto(index: index, duration: ms.map { Double($0) / 1000 })
        case .pause: .pause
        case .play: .play
        case .resume: .resume
        case let .zoom(scale): .zoom(scale: scale ?? 1)
        case .status, .reload, .list, .set, .keep, .forget, .hide, .unhide, .screenshot, .screenshotPixels, .subscribe, .subscribeChanges, .version, .help, .display, .brightness,
             .declared: nil
        }
    }

    /// What the request touches, which a way in must grant (`Grant`): the
    /// one place each word is given its capability. `set` needs what its
    /// key needs, which `keyCapability` says (the configuration's schema:
    /// `Schema.capability`); a key it does not know needs `tune`, so that the
    /// schema's own "unknown key" answer is the reply.
    public func capability(keyCapability: (String) -> Capability?) -> Capability {
        switch self {
        case .status, .list, .version, .help, .subscribe, .subscribeChanges, .screenshot(path: nil), .screenshotPixels: .look
        case .next, .prev, .goto, .pause, .play, .resume, .zoom, .display, .brightness: .drive
        case .hide, .unhide: .tune
        case let .declared(request): request.capability
        case let .set(key, _), let .keep(key, _), let .forget(key): keyCapability(key) ?? .tune
        case .reload: .configure
        // It writes a file wherever the peer says, with the daemon's rights.
        case .screenshot(path: .some): .administer
        }
    }

    /// The request as a refusal names it: its command, and `set`'s key, never
    /// a value (which may be a path or a secret).
    public var refusalName: String {
        switch self {
        case let .set(key, _): "set \(key)"
        case let .keep(key, _): "keep \(key)"
        case let .forget(key): "forget \(key)"
        case .hide: "hide"
        case .unhide: "unhide"
        case let .screenshot(path): path == nil ? "screenshot" : "screenshot PATH"
        case let .declared(request): request.name
        default: line.split(separator: " ").first.map(String.init) ?? line
        }
    }

    /// The request as the line a client sends (without the newline).
    public var line: String {
        switch self {
        case .next: "next"
        case .prev: "prev"
        case let .goto(index, ms): ms.map { "goto \(index) \($0)" } ?? "goto \(index)"
        case .pause: "pause"
        case .play: "play"
        case .resume: "resume"
        case .status: "status"
        case .reload: "reload"
        case .list: "list"
        case let .set(key, value): "set \(key) \(value)"
        case let .keep(key, value): "keep \(key) \(value)"
        case let .forget(key): "forget \(key)"
        case let .hide(name): name.map { "hide \($0)" } ?? "hide"
        case let .unhide(name): "unhide \(name)"
        case let .screenshot(path): path.map { "screenshot \($0)" } ?? "screenshot"
        case .screenshotPixels: "screenshot raw"
        case .subscribe: "subscribe"
        case .subscribeChanges: "subscribe changes"
        case .version: "version"
        case .help: "help"
        case let .display(setting): "display \(setting.rawValue)"
        case let .brightness(percent): "brightness \(percent)"
        case let .zoom(scale): scale.map { "zoom \(JSONValue.number($0))" } ?? "zoom reset"
        case let .declared(request): request.line
        }
    }

    /// Parses one request line (without its newline; a trailing CR from a
    /// telnet-style client is ignored).
    public static func parse(line: String) -> Result<ControlRequest, ControlError> {
        let words = split(line)
        guard let name = words.first else {
            return .failure(ControlError("empty request (try: \(commandList))"))
        }
        let arguments = words.dropFirst()

        func noArguments(_ request: ControlRequest) -> Result<ControlRequest, ControlError> {
            guard let extra = arguments.first else { return .success(request) }
            return .failure(ControlError("\(name.text) takes no arguments, got '\(extra.text)'"))
        }

        switch name.text {
        case "next": return noArguments(.next)
        case "prev": return noArguments(.prev)
        case "pause": return noArguments(.pause)
        case "play": return noArguments(.play)
        case "resume": return noArguments(.resume)
        case "status": return noArguments(.status)
        case "reload": return noArguments(.reload)
        case "list": return noArguments(.list)
        case "subscribe":
            guard let which = arguments.first else { return .success(.subscribe) }
            guard which.text == "changes", arguments.count == 1 else {
                return .failure(ControlError("subscribe takes nothing, or changes (no per-frame events), got '\(arguments.map(\.text).joined(separator: " "))'"))
            }
            return .success(.subscribeChanges)
        case "version": return noArguments(.version)
        case "help": return noArguments(.help)
        case "goto": return parseGoto(Array(arguments))
        case "zoom":
            let text = arguments.map(\.text).joined(separator: " ")
            if text == "reset" { return .success(.zoom(scale: nil)) }
            guard arguments.count == 1, let scale = Double(text), scale.isFinite, (1...maximumZoom).contains(scale) else {
                return .failure(ControlError(
                    "zoom needs a scale from 1 to \(JSONValue.number(maximumZoom)) or reset (usage: zoom <scale>|reset),"
                        + " got \(text.isEmpty ? "nothing" : "'\(text)'")"))
            }
            return .success(.zoom(scale: scale))
        case "display":
            guard arguments.count == 1, let setting = DisplayPowerSetting(rawValue: arguments[arguments.startIndex].text) else {
                let got = arguments.isEmpty ? "nothing" : "'\(arguments.map(\.text).joined(separator: " "))'"
                return .failure(ControlError("display needs on, off or auto (usage: display on|off|auto), got \(got)"))
            }
            return .success(.display(setting))
        case "brightness":
            guard arguments.count == 1, let percent = Int(arguments[arguments.startIndex].text), (1...100).contains(percent) else {
                let got = arguments.isEmpty ? "nothing" : "'\(arguments.map(\.text).joined(separator: " "))'"
                return .failure(ControlError(
                    "brightness needs a level from 1 to 100, percent of the backlight's range (usage: brightness <1-100>;"
                        + " to switch it off: display off), got \(got)"))
            }
            return .success(.brightness(percent))
        case "set":
            guard arguments.count >= 2, let key = arguments.first else {
                return .failure(ControlError("set needs a key and a value (usage: set <key> <value>)"))
            }
            // The value keeps its inner spacing: it is everything after the key.
            let value = String(line[arguments[arguments.startIndex + 1].start...])
            return .success(.set(key: key.text, value: trimmed(value)))
        case "keep":
            guard arguments.count >= 2, let key = arguments.first else {
                return .failure(ControlError("keep needs a key and a value (usage: keep <key> <value>)"))
            }
            let value = String(line[arguments[arguments.startIndex + 1].start...])
            return .success(.keep(key: key.text, value: trimmed(value)))
        case "hide":
            guard let first = arguments.first else { return .success(.hide(name: nil)) }
            return .success(.hide(name: trimmed(String(line[first.start...]))))
        case "unhide":
            guard let first = arguments.first else {
                return .failure(ControlError("unhide needs the picture's name (usage: unhide <name>)"))
            }
            return .success(.unhide(name: trimmed(String(line[first.start...]))))
        case "forget":
            guard arguments.count == 1, let key = arguments.first else {
                return .failure(ControlError("forget needs one key (usage: forget <key>)"))
            }
            return .success(.forget(key: key.text))
        case "screenshot":
            // No path: the file comes as a descriptor with the line (the daemon checks).
            guard let first = arguments.first else { return .success(.screenshot(path: nil)) }
            // A path is absolute: a bare `raw` can only be the word.
            if first.text == "raw" && arguments.count == 1 { return .success(.screenshotPixels) }
            let path = trimmed(String(line[first.start...]))
            guard path.hasPrefix("/") else {
                return .failure(ControlError(
                    "screenshot needs an absolute path, got '\(path)' (the daemon does not share your working directory)"))
            }
            guard path.lowercased().hasSuffix(".png") else {
                return .failure(ControlError("screenshot writes PNG: the path must end in .png, got '\(path)'"))
            }
            return .success(.screenshot(path: path))
        default:
            guard let words = declaredRequests.first(where: { $0.name == name.text }) else {
                return .failure(ControlError("unknown command '\(name.text)' (try: \(commandList))"))
            }
            // The rest of the line after the name, as the capability's words read it.
            let rest = arguments.first.map { String(line[$0.start...]) } ?? ""
            return words.parse(rest).map(ControlRequest.declared).mapError { ControlError($0.message) }
        }
    }

    private static var commandList: String { commandNames.joined(separator: ", ") }

    private static func parseGoto(_ arguments: [Word]) -> Result<ControlRequest, ControlError> {
        guard let first = arguments.first else {
            return .failure(ControlError("goto needs an item index (usage: goto <index> [<ms>])"))
        }
        guard let index = Int(first.text) else {
            return .failure(ControlError("goto needs an item index, got '\(first.text)'"))
        }
        guard index >= 0 else {
            return .failure(ControlError("goto needs an item index of 0 or more (the first item is 0), got '\(first.text)'"))
        }
        var milliseconds: Int?
        if arguments.count >= 2 {
            let text = arguments[1].text
            guard let ms = Int(text), ms >= 0 else {
                return .failure(ControlError("goto's duration must be a whole number of milliseconds, got '\(text)'"))
            }
            guard ms <= maximumGotoMilliseconds else {
                return .failure(ControlError(
                    "goto's duration is in milliseconds, at most \(maximumGotoMilliseconds), got '\(text)'"))
            }
            milliseconds = ms
        }
        if arguments.count > 2 {
            return .failure(ControlError("goto takes an index and an optional duration, got extra '\(arguments[2].text)'"))
        }
        return .success(.goto(index: index, milliseconds: milliseconds))
    }

    private struct Word {
        let text: String
        let start: String.Index
    }

    private static func isBlank(_ c: Character) -> Bool { c == " " || c == "\t" || c == "\r" }

    private static func split(_ line: String) -> [Word] {
        var words: [Word] = []
        var index = line.startIndex
        while index < line.endIndex {
            while index < line.endIndex, isBlank(line[index]) { index = line.index(after: index) }
            guard index < line.endIndex else { break }
            let start = index
            while index < line.endIndex, !isBlank(line[index]) { index = line.index(after: index) }
            words.append(Word(text: String(line[start..<index]), start: start))
        }
        return words
    }

    private static func trimmed(_ text: String) -> String {
        var s = Substring(text)
        while let last = s.last, isBlank(last) { s = s.dropLast() }
        return String(s)
    }
}

/// What `display` asks for.
public enum DisplayPowerSetting: String, Sendable {
    case on, off, auto
}

/// A request the protocol refuses, with the message sent back in the error reply.
public struct ControlError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
