import CarouselConfig
import CarouselControl
import CarouselCore

/// A `carouseld simulate` script: set-up lines and a timeline.
///
/// ```
/// size 1280x800
/// set <key> <value>          # any model key (wrap, paging, interval, ...)
/// images <count>
/// at <ms> down <x> <y> [<id>]   # finger down, layout pixels; id 0 to 9 (default 0)
/// at <ms> move <x> <y> [<id>]
/// at <ms> up [<id>]
/// at <ms> cancel [<id>]
/// ```
///
/// Two fingers (ids 0 and 1) pinch where `[zoom]` is on:
///
/// ```
/// at 0 down 500 400
/// at 10 down 700 400 1
/// at 26 move 450 400
/// at 26 move 750 400 1
/// at 40 up 1
/// at 40 up
/// ```
///
/// ```
/// at <ms> command next|prev|goto <i>|pause|resume
/// at <ms> probe              # print the state at that instant
/// at <ms> frame <path.png>   # write the frame at that instant
/// until <ms>                 # run the clock to here, then exit
/// ```
public struct SimulationScript: Sendable {
    public enum Action: Equatable, Sendable {
        case touch(TouchInput)
        case command(CarouselCommand)
        case probe
        /// Write the frame at that instant as a PNG file.
        case frame(path: String)
    }

    public struct Step: Equatable, Sendable {
        public var time: Timestamp
        public var action: Action
        public var line: Int
    }

    public var viewport = Viewport(width: 1280, height: 800)
    public var itemCount = 5
    /// Whether an `images` line set `itemCount` (otherwise a configured folder may).
    public var itemCountGiven = false
    /// `set` lines in order: key, value.
    public var settings: [(key: String, value: String)] = []
    public var steps: [Step] = []
    public var until: Timestamp?

    /// Whether any step writes a frame.
    public var hasFrames: Bool { steps.contains { if case .frame = $0.action { true } else { false } } }

    /// When the run ends: `until`, else the last step.
    public var end: Timestamp { until ?? steps.last?.time ?? .zero }

    /// The finger of a touch line that names none.
    static let finger = 0
    /// The finger ids a script may name.
    static let fingers = 0...9

    public init() {}

    /// Parses `text`; `configuration` is the base the `set` lines are checked against.
    public static func parse(_ text: String, configuration: Configuration = Configuration()) throws(ScriptError) -> SimulationScript {
        var script = SimulationScript()
        var config = configuration
        var gotos: [(index: Int, line: Int)] = []
        var lastTime = Timestamp.zero
        var lineNumber = 0
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            lineNumber += 1
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
            guard let head = words.first else { continue }
            func fail(_ message: String) -> ScriptError { ScriptError(line: lineNumber, message: message) }
            switch head {
            case "size":
                guard words.count == 2, let mode = ModeRequest(words[1]), mode.refresh == nil else {
                    throw fail("expected 'size WIDTHxHEIGHT', e.g. size 1280x800")
                }
                script.viewport = Viewport(width: Double(mode.width), height: Double(mode.height))
            case "set":
                guard words.count >= 2 else { throw fail("expected 'set KEY VALUE'") }
                let value = words.dropFirst(2).joined(separator: " ")
                do {
                    try config.set(words[1], value)
                } catch {
                    throw fail("set \(words[1]): \(error.message)")
                }
                script.settings.append((words[1], value))
            case "images":
                guard words.count == 2, let n = Int(words[1]), (0...1_000_000).contains(n) else {
                    throw fail("expected 'images COUNT' with COUNT from 0 to 1000000")
                }
                script.itemCount = n
                script.itemCountGiven = true
            case "until":
                guard words.count == 2, let t = milliseconds(words[1]) else { throw fail("expected 'until MS' with MS a time in milliseconds >= 0") }
                guard script.until == nil else { throw fail("'until' is given twice") }
                guard t >= lastTime else { throw fail("until \(words[1]) is before the previous step at \(lastTime.milliseconds) ms") }
                script.until = t
            case "at":
                guard words.count >= 3, let t = milliseconds(words[1]) else {
                    throw fail("expected 'at MS ACTION ...' with MS a time in milliseconds >= 0")
                }
                guard t >= lastTime else {
                    throw fail("time \(words[1]) ms is before the previous step at \(lastTime.milliseconds) ms (steps must be in time order)")
                }
                if let until = script.until, t > until {
                    throw fail("time \(words[1]) ms is after 'until \(until.milliseconds)': it would never run")
                }
                lastTime = t
                let args = Array(words.dropFirst(3))
                let action: Action
                switch words[2] {
                case "down", "move":
                    // A finger is on (or just off) a screen of at most 16384 px: a
                    // coordinate of 1e57 would drag the model to an offset no
                    // item index can hold, and the model traps on it.
                    guard args.count == 2 || args.count == 3, let x = Double(args[0]), let y = Double(args[1]),
                          abs(x) <= maximumCoordinate, abs(y) <= maximumCoordinate else {
                        throw fail("expected '\(words[2]) X Y [ID]' in layout pixels, each within ±\(Int(maximumCoordinate)),"
                                   + " and a finger id from 0 to 9")
                    }
                    let id = try fingerID(args.count == 3 ? args[2] : nil, line: lineNumber)
                    let p = Point(x: x, y: y)
                    action = .touch(words[2] == "down" ? .down(id: id, at: p) : .move(id: id, to: p))
                case "up", "cancel":
                    guard args.count <= 1 else { throw fail("'\(words[2])' takes at most a finger id") }
                    let id = try fingerID(args.first, line: lineNumber)
                    action = .touch(words[2] == "up" ? .up(id: id) : .cancel(id: id))
                case "probe":
                    guard args.isEmpty else { throw fail("'probe' takes no arguments") }
                    action = .probe
                case "frame":
                    // The path is the rest of the line (it may hold spaces).
                    let path = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: true)
                    guard args.count >= 1, path.count == 4 else { throw fail("expected 'frame PATH.png'") }
                    action = .frame(path: String(path[3].trimmingCharacters(in: " \t\r")))
                case "command":
                    action = .command(try command(args, line: lineNumber, gotos: &gotos))
                default:
                    throw fail("unknown action '\(words[2])' (expected down, move, up, cancel, command, probe or frame)")
                }
                script.steps.append(Step(time: t, action: action, line: lineNumber))
            default:
                throw fail("unknown command '\(head)' (expected size, set, images, at or until)")
            }
        }
        for g in gotos where g.index >= script.itemCount {
            throw ScriptError(line: g.line, message: "goto \(g.index) is out of range: the script has \(script.itemCount) images (0...\(max(script.itemCount - 1, 0)))")
        }
        return script
    }

    /// A command in the control socket's own words (`next`, `prev`,
    /// `goto INDEX [MS]`, `pause`, `resume`, `zoom SCALE`, `zoom reset`): one
    /// grammar for the socket and scripts, mapped to the model's commands in
    /// one place.
    private static func command(_ args: [String], line: Int, gotos: inout [(index: Int, line: Int)]) throws(ScriptError) -> CarouselCommand {
        let usage = "expected 'command next|prev|goto INDEX [MS]|pause|resume|zoom SCALE|zoom reset'"
        switch ControlRequest.parse(line: args.joined(separator: " ")) {
        case .success(let request):
            guard let command = request.command else {
                throw ScriptError(line: line, message: "'\(request.line)' is not a carousel command; \(usage)")
            }
            if case let .goto(index, _) = command { gotos.append((index, line)) }
            return command
        case .failure(let error):
            throw ScriptError(line: line, message: "\(error.message); \(usage)")
        }
    }

    /// A touch line's finger: `word`, or 0 when it names none.
    private static func fingerID(_ word: String?, line: Int) throws(ScriptError) -> Int {
        guard let word else { return finger }
        guard let id = Int(word), fingers.contains(id) else {
            throw ScriptError(line: line, message: "finger id '\(word)' is not one of 0 to 9")
        }
        return id
    }

    /// The largest touch coordinate a script may give, in layout pixels.
    static let maximumCoordinate = 1_000_000.0

    private static func milliseconds(_ word: String) -> Timestamp? {
        guard let ms = Double(word), ms.isFinite, ms >= 0, ms < 1e12 else { return nil }
        return .milliseconds(ms)
    }

    /// The configuration the run uses: `base` with the script's `set` lines applied.
    public func configuration(base: Configuration) -> Configuration {
        var config = base
        // Already validated by `parse`.
        for (key, value) in settings { try? config.set(key, value) }
        return config
    }
}

/// A bad script line: `line N: what is wrong`.
public struct ScriptError: Error, Equatable, Sendable, CustomStringConvertible {
    public var line: Int
    public var message: String
    public init(line: Int, message: String) {
        self.line = line
        self.message = message
    }
    public var description: String { "line \(line): \(message)" }
}

extension Substring {
    func trimmingCharacters(in set: String) -> Substring {
        var s = self
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return s
    }
}
