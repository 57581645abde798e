import ArgumentParser
import CarouselControl
import CarouselPlatform
import CarouselWords
#if canImport(Glibc)
import Glibc
#endif

/// The control client: one subcommand per control-socket command.
///
/// Exit status: 0 the daemon said ok, 1 it replied with an error, 2 the
/// command line was wrong, 3 the daemon could not be reached (or went away).
@main
struct Carouselctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "carouselctl",
        abstract: "Control a running carouseld through its control socket.",
        discussion: """
            Exit status: 0 ok, 1 carouseld replied with an error, 2 usage error, \
            3 carouseld could not be reached.
            """,
        version: "0.1.0",
        subcommands: [
            Next.self, Prev.self, Goto.self, Pause.self, Play.self, Resume.self, Status.self, Reload.self, List.self,
            Set.self, Keep.self, Forget.self, Hide.self, Unhide.self, Screenshot.self, Version.self, Watch.self, Display.self, Brightness.self, Zoom.self,
        ]
    )

    /// The root's help: the house's subcommands (above), and the requests the
    /// frame's capabilities declare, each with its usage and what it does.
    static var helpMessageWithDeclared: String {
        var text = helpMessage()
        text += "\nREQUESTS OF THE FRAME'S CAPABILITIES:\n"
        for declared in ControlRequest.declaredRequests {
            text += "  \(declared.usage)\n" + wrapped(declared.help, indent: 8) + "\n"
        }
        return text
    }

    /// `text` as a terminal shows help: `code` marks dropped, lines of at
    /// most 80 columns, each indented by `indent` spaces.
    static func wrapped(_ text: String, indent: Int) -> String {
        let words = text.filter { $0 != "`" }.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return ValueText.wrapped(words, width: 80, lead: String(repeating: " ", count: indent)).joined(separator: "\n")
    }

    static func main() {
        do {
            let arguments = Array(CommandLine.arguments.dropFirst())
            if let name = arguments.first, let declared = Declared.words(name) {
                try Declared.run(declared, Array(arguments.dropFirst()))
                return
            }
            // `carouselctl help overlay`, as ArgumentParser's `help SUBCOMMAND` reads.
            if arguments.count == 2, arguments[0] == "help", let declared = Declared.words(arguments[1]) {
                try Declared.run(declared, ["--help"])
                return
            }
            if arguments.isEmpty || arguments == ["--help"] || arguments == ["-h"] || arguments == ["help"] {
                print(helpMessageWithDeclared)
                return
            }
            var command = try parseAsRoot()
            try command.run()
        } catch let failure as Failure {
            if let message = failure.message { printFailure(message) }
            Glibc.exit(failure.status.rawValue)
        } catch {
            // ArgumentParser's own status for a bad command line is EX_USAGE (64);
            // ours is 2, like most Unix tools.
            if exitCode(for: error) == .validationFailure {
                printFailure(fullMessage(for: error))
                Glibc.exit(ExitStatus.usage.rawValue)
            }
            exit(withError: error)
        }
    }
}

enum ExitStatus: Int32 {
    case ok = 0, errorReply = 1, usage = 2, unreachable = 3
}

/// Ends the program with `status`, after printing `message` to stderr.
struct Failure: Error {
    let status: ExitStatus
    let message: String?
}

func printFailure(_ message: String) {
    var line = message.hasPrefix("carouselctl") || message.hasPrefix("Error:") || message.hasPrefix("Usage:")
        ? message : "carouselctl: \(message)"
    if !line.hasSuffix("\n") { line += "\n" }
    write(line, to: STDERR_FILENO)
}

/// Writes straight to the descriptor (the platform's `writeAll`): no stdio
/// buffer to flush, so `carouselctl watch | grep` sees each event the moment
/// it arrives. Returns false when the descriptor takes no more (the reader
/// went away and SIGPIPE is ignored, as systemd does for services by default).
@discardableResult
func write(_ text: String, to fd: Int32) -> Bool { writeAll(fd, text) }

/// Options every subcommand takes.
struct Connection: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The control socket of carouseld.", valueName: "path"))
    var socket: String = ControlServer.defaultPath

    @Flag(name: .long, help: "Print carouseld's reply as its raw JSON line.")
    var json = false

    func validate() throws {
        // ControlClient would report these as "cannot connect" (status 3); they are typos (status 2).
        let length = socket.utf8.count
        if length == 0 { throw ValidationError("--socket needs a path") }
        let capacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)
        if length >= capacity {
            throw ValidationError("--socket path is \(length) bytes; a Unix socket path holds at most \(capacity - 1)")
        }
    }

    /// Sends `request`, prints the reply, and fails with the right status.
    func perform(_ request: ControlRequest) throws {
        try check(request)
        let line: String
        do {
            let client = try ControlClient(path: socket)
            line = try client.request(request)
        } catch {
            throw Failure(status: .unreachable, message: error.description)
        }
        guard let reply = ControlReply(line: line) else {
            throw Failure(status: .unreachable, message: "carouseld sent a reply that is not a control reply: \(line)")
        }
        if json { print(line) }
        switch reply {
        case let .ok(fields):
            if !json { for output in humanReadable(fields) { print(output) } }
        case let .error(message):
            throw Failure(status: .errorReply, message: json ? nil : message)
        }
    }
}

/// Refuses, as a usage error and before anything is sent, what the daemon
/// would refuse or misread.
func check(_ request: ControlRequest) throws {
    let line = request.line
    // The protocol is line-based: a line break inside an argument would end
    // the request there and send the rest as a second request
    // (`carouselctl set k "x<newline>next"` would also run `next`).
    if line.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" }) {
        throw Failure(status: .usage, message: "arguments must not contain line breaks (a request is one line)")
    }
    if line.utf8.count > ControlServer.maximumRequestBytes {
        throw Failure(status: .usage, message:
            "the request is \(line.utf8.count) bytes; carouseld takes at most \(ControlServer.maximumRequestBytes)")
    }
    // The same grammar the daemon applies: a bad argument is a usage error
    // here, with the daemon's own wording.
    if case let .failure(error) = ControlRequest.parse(line: line) {
        throw Failure(status: .usage, message: error.message)
    }
}

/// "key: value" lines with the values aligned. A nested object's fields
/// become dotted keys (`autoplay.running: yes`); a top-level list is one
/// element a line, numbered from 0 like the items; a nested list is one
/// line, comma-separated.
func humanReadable(_ fields: [String: JSONValue]) -> [String] {
    var rows: [(key: String, value: JSONValue)] = []
    func flatten(_ prefix: String, _ fields: [String: JSONValue]) {
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
            if case let .object(inner) = value, !inner.isEmpty {
                flatten(prefix + key + ".", inner)
            } else {
                rows.append((prefix + key, value))
            }
        }
    }
    flatten("", fields)
    let width = rows.map(\.key.count).max() ?? 0
    var lines: [String] = []
    for (key, value) in rows {
        let label = key + ":" + String(repeating: " ", count: width - key.count)
        if case let .array(elements) = value, !key.contains("."), !elements.isEmpty {
            lines.append(label)
            let indexWidth = String(elements.count - 1).count
            for (i, element) in elements.enumerated() {
                let number = String(i)
                lines.append("  " + String(repeating: " ", count: indexWidth - number.count) + number + "  " + scalarText(element))
            }
        } else {
            lines.append(label + " " + scalarText(value))
        }
    }
    return lines
}

func scalarText(_ value: JSONValue) -> String {
    switch value {
    case let .string(s): return s
    case let .int(i): return String(i)
    case let .double(d):
        // Offsets are in items: a thousandth of an item is below a pixel on any panel.
        guard d.isFinite else { return "-" }
        return JSONValue.number((d * 1000).rounded() / 1000)
    case let .bool(b): return b ? "yes" : "no"
    case .null: return "-"
    case let .array(elements): return elements.isEmpty ? "(none)" : elements.map(scalarText).joined(separator: ", ")
    case .object, .fields: return value.encoded
    }
}

/// An event as one line for people: its name, then key=value pairs.
func humanReadableEvent(_ line: String) -> String {
    guard case let .object(fields)? = JSONValue.parse(line) else { return line }
    let name = fields["event"]?.stringValue ?? "event"
    let rest = fields.filter { $0.key != "event" }.sorted { $0.key < $1.key }.map { "\($0.key)=\(scalarText($0.value))" }
    return ([name] + rest).joined(separator: " ")
}

// MARK: Subcommands

struct Next: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the next item.")
    @OptionGroup var connection: Connection
    func run() throws { try connection.perform(.next) }
}

struct Prev: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the previous item.")
    @OptionGroup var connection: Connection
    func run() throws { try connection.perform(.prev) }
}

struct Goto: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Go to an item by its index (the first is 0).",
        discussion: "The duration may follow the index as on the socket (goto 3 0) or be given as --ms 0.")
    @Argument(help: "The item's index, from 0.") var index: Int
    @Argument(help: ArgumentHelp("The animation's length in milliseconds (0 jumps); the default is [autoplay] transition.",
                                 valueName: "ms"))
    var duration: Int?
    @Option(help: ArgumentHelp("The same as the duration argument.", valueName: "ms")) var ms: Int?
    @OptionGroup var connection: Connection
    func validate() throws {
        if duration != nil && ms != nil { throw ValidationError("give the duration once: as an argument or as --ms, not both") }
    }
    func run() throws { try connection.perform(.goto(index: index, milliseconds: duration ?? ms)) }
}

struct Pause: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Pause autoplay and the clip on screen.")
    @OptionGroup var connection: Connection
    func run() throws { try connection.perform(.pause) }
}

struct Play: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Lift a pause: the clip on screen plays on, autoplay is as it was before the pause.")
    @OptionGroup var connection: Connection
    func run() throws { try connection.perform(.play) }
}

struct Resume: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Resume autoplay.")
    @OptionGroup var connection: Connection
    func run() throws { try connection.perform(.resume) }
}

struct Display: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Switch the display off or on, or give it back to the idle rule (auto).",
        discussion: """
            Off, the panel gets no signal (DPMS) and autoplay is paused; a touch \
            or a key wakes it too, and that touch only wakes it (it neither pages \
            nor selects). On again, it shows the picture it showed. on and off hold \
            until auto gives the display back to [power] idle_off.
            """)
    @Argument(help: ArgumentHelp("on, off or auto.", valueName: "on|off|auto")) var setting: String
    @OptionGroup var connection: Connection
    func validate() throws {
        if DisplayPowerSetting(rawValue: setting) == nil { throw ValidationError("display takes on, off or auto, got '\(setting)'") }
    }
    func run() throws { try connection.perform(.display(DisplayPowerSetting(rawValue: setting)!)) }
}

struct Brightness: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Set the backlight's lit level, in percent of its range.",
        discussion: """
            Where the panel has a backlight (/sys/class/backlight). The level is \
            kept in the state directory: with [power] brightness = auto the \
            display comes back to it after a restart. Dimming ([power] dim_after) \
            and display off leave it alone; to switch the panel off use display off.
            """)
    @Argument(help: ArgumentHelp("1 to 100.", valueName: "percent")) var percent: Int
    @OptionGroup var connection: Connection
    func validate() throws {
        if !(1...100).contains(percent) { throw ValidationError("brightness takes 1 to 100 (percent), got \(percent)") }
    }
    func run() throws { try connection.perform(.brightness(percent)) }
}

struct Zoom: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Zoom the picture on screen about its centre, or back to 1 (reset).",
        discussion: """
            The scale is clamped to [zoom] max_scale; the reply's status carries \
            zoom (the scale now) and zoom_target (where the animation ends). \
            Autoplay waits while a picture is zoomed.
            """)
    @Argument(help: ArgumentHelp("A scale from 1 to 16, or reset.", valueName: "scale|reset")) var scale: String
    @OptionGroup var connection: Connection
    func validate() throws {
        if scale != "reset", Double(scale).map({ (1...ControlRequest.maximumZoom).contains($0) }) != true {
            throw ValidationError("zoom takes a scale from 1 to 16 or reset, got '\(scale)'")
        }
    }
    func run() throws { try connection.perform(.zoom(scale: scale == "reset" ? nil : Double(scale)!)) }
}

/// A request a capability declared (`overlay text TEXT`): its words after
/// the name are joined by spaces into the request line, which the
/// capability's words read (`RequestWords`), as the daemon will. It has no
/// subcommand type of its own: `main` routes its name here.
struct Declared: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "REQUEST")
    @Argument(help: ArgumentHelp("The request's words.", valueName: "words")) var words: [String] = []
    @OptionGroup var connection: Connection

    /// The requests the capabilities declared, by name.
    static func words(_ name: String) -> RequestWords? { ControlRequest.declaredRequests.first { $0.name == name } }

    /// Runs `arguments` (the name first) as the declared request it names.
    static func run(_ declared: RequestWords, _ arguments: [String]) throws {
        if arguments.contains(where: { $0 == "--help" || $0 == "-h" }) {
            print("USAGE: carouselctl \(declared.usage) [--socket <path>] [--json]\n\n"
                  + Carouselctl.wrapped(declared.help, indent: 0))
            return
        }
        let command = try Declared.parse(arguments)
        switch ControlRequest.parse(line: ([declared.name] + command.words).joined(separator: " ")) {
        case let .success(request): try command.connection.perform(request)
        // A usage error, as ArgumentParser's are (status 2), with the words' own message.
        case let .failure(error): throw Failure(status: .usage, message: error.message)
        }
    }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the current item, autoplay state and display.")
    @OptionGroup var connection: Connection
    func run() throws { try connection.perform(.status) }
}

struct Reload: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Re-read the config file and the album (a bad config is refused; the old one keeps running).")
    @OptionGroup var connection: Connection
    func run() throws { try connection.perform(.reload) }
}

struct List: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the album's items.")
    @OptionGroup var connection: Connection
    func run() throws { try connection.perform(.list) }
}

struct Set: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Change a setting of the running daemon.")
    @Argument(help: "The setting, as in the config file (section.key).") var key: String
    @Argument(parsing: .remaining, help: "Its new value.") var value: [String]
    @OptionGroup var connection: Connection
    func validate() throws {
        if value.isEmpty { throw ValidationError("set needs a value after the key") }
    }
    func run() throws { try connection.perform(.set(key: key, value: value.joined(separator: " "))) }
}

struct Keep: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change a setting and keep it across restarts (in the frame's settings file, [control] settings).")
    @Argument(help: "The setting, as in the config file (section.key).") var key: String
    @Argument(parsing: .remaining, help: "Its new value.") var value: [String]
    @OptionGroup var connection: Connection
    func validate() throws {
        if value.isEmpty { throw ValidationError("keep needs a value after the key") }
    }
    func run() throws { try connection.perform(.keep(key: key, value: value.joined(separator: " "))) }
}

struct Forget: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Take a kept setting out of the settings file: carouseld.ini's value (or the default) runs again.")
    @Argument(help: "The setting, as in the config file (section.key).") var key: String
    @OptionGroup var connection: Connection
    func run() throws { try connection.perform(.forget(key: key)) }
}

struct Hide: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Leave a picture out of this frame's album (the one on screen without a name), until unhide.")
    @Argument(help: "The picture's name or path; none: the one on screen.") var name: String?
    @OptionGroup var connection: Connection
    func run() throws { try connection.perform(.hide(name: name)) }
}

struct Unhide: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Bring a hidden picture back into the album.")
    @Argument(help: "The picture's name or path (list shows the hidden ones).") var name: String
    @OptionGroup var connection: Connection
    func run() throws { try connection.perform(.unhide(name: name)) }
}

struct Screenshot: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Save what is on screen as a PNG file.",
        discussion: """
            carouselctl creates the file itself, with your rights, and sends it to \
            carouseld open (the daemon writes no path it is given); the file \
            appears complete or not at all.
            """)
    @Argument(help: "Where to write the PNG; a relative path is taken from the current directory.") var path: String
    @OptionGroup var connection: Connection

    func validate() throws {
        if !path.lowercased().hasSuffix(".png") {
            throw ValidationError("screenshot writes PNG: the path must end in .png, got '\(path)'")
        }
        // Legal in a file name, but far more likely a pasting accident.
        if path.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" }) {
            throw ValidationError("the screenshot path contains a line break")
        }
    }

    func run() throws {
        do {
            try save()
        } catch let failure as Failure where connection.json && failure.status == .errorReply {
            // --json promises a reply line on stdout, ours when carouseld's names no file.
            if let message = failure.message { print(ControlReply.error(message).line) }
            throw Failure(status: failure.status, message: nil)
        }
    }

    private func save() throws {
        let file = try ScreenshotFile(path)
        defer { file.discard() }
        let line: String
        do {
            let client = try ControlClient(path: connection.socket)
            line = try client.request(.screenshot(path: nil), passing: file.descriptor)
        } catch {
            throw Failure(status: .unreachable, message: error.description)
        }
        guard let reply = ControlReply(line: line) else {
            throw Failure(status: .unreachable, message: "carouseld sent a reply that is not a control reply: \(line)")
        }
        switch reply {
        case var .ok(fields):
            try file.keep()
            fields["path"] = .string(file.path)
            if connection.json {
                print(ControlReply.ok(fields).line)
            } else {
                for output in humanReadable(fields) { print(output) }
            }
        case let .error(message):
            throw Failure(status: .errorReply, message: "cannot write \(file.path): \(message)")
        }
    }
}

/// The PNG a screenshot goes to, made by carouselctl: a fresh hidden file
/// beside the destination (O_EXCL, an unpredictable name), renamed onto it
/// once carouseld has written it, removed otherwise.
final class ScreenshotFile {
    let path: String
    let descriptor: Int32
    private var temporary: String?

    init(_ given: String) throws {
        path = try Self.absolute(given)
        let slash = path.lastIndex(of: "/")!
        let directory = slash == path.startIndex ? "/" : String(path[..<slash])
        var template = Array((directory + "/." + path[path.index(after: slash)...] + ".XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw Failure(status: .errorReply, message: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        descriptor = fd
        temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // mkstemp makes 0600; the file gets the mode any new file of yours gets.
        let mask = umask(0)
        umask(mask)
        fchmod(fd, 0o666 & ~mask)
    }

    /// Puts the finished file in place.
    func keep() throws {
        guard let temporary else { return }
        guard rename(temporary, path) == 0 else {
            throw Failure(status: .errorReply, message: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        self.temporary = nil
    }

    /// Removes the file unless it was kept, and closes it.
    func discard() {
        if let temporary { unlink(temporary) }
        temporary = nil
        close(descriptor)
    }

    /// `given` from the current directory: the absolute path printed and renamed onto.
    static func absolute(_ given: String) throws -> String {
        if given.hasPrefix("/") { return given }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else {
            throw Failure(status: .usage, message: "cannot resolve '\(given)': the current directory is unknown; give an absolute path")
        }
        let cwd = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return (cwd.hasSuffix("/") ? cwd : cwd + "/") + given
    }
}

struct Version: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the running daemon's version.")
    @OptionGroup var connection: Connection
    func run() throws { try connection.perform(.version) }
}

struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print carouseld's events as they happen, until interrupted.")
    @OptionGroup var connection: Connection
    func run() throws {
        // Only a signal ends a watch: make sure one can, even when whoever
        // started us left them blocked (Foundation's Process passes on the
        // spawning thread's mask, which in a test runner blocks nearly all).
        var endings = sigset_t()
        sigemptyset(&endings)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGPIPE] { sigaddset(&endings, signal) }
        sigprocmask(SIG_UNBLOCK, &endings, nil)
        let client: ControlClient
        let line: String
        do {
            // No timeout: events may be minutes apart.
            client = try ControlClient(path: connection.socket, timeoutSeconds: 0)
            line = try client.request(.subscribe)
        } catch {
            throw Failure(status: .unreachable, message: error.description)
        }
        switch ControlReply(line: line) {
        case let .error(message)?:
            if connection.json { print(line) }
            throw Failure(status: .errorReply, message: connection.json ? nil : message)
        case nil:
            throw Failure(status: .unreachable, message: "carouseld sent a reply that is not a control reply: \(line)")
        case .ok?:
            break
        }
        while true {
            let event: String?
            do { event = try client.readLine() } catch { throw Failure(status: .unreachable, message: error.description) }
            guard let event else {
                throw Failure(status: .unreachable, message: "carouseld closed the connection (did it stop?)")
            }
            // Whoever read our output is gone: stop rather than hold a subscriber slot for ever.
            guard write((connection.json ? event : humanReadableEvent(event)) + "\n", to: STDOUT_FILENO) else {
                throw Failure(status: .ok, message: nil)
            }
        }
    }
}
