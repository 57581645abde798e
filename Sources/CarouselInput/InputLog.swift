import CarouselPlatform
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How much libinput says (`enum libinput_log_priority`).
public enum InputLogPriority: Int32, Sendable, Comparable, CaseIterable {
    case debug = 10  // LIBINPUT_LOG_PRIORITY_DEBUG
    case info = 20   // LIBINPUT_LOG_PRIORITY_INFO
    case error = 30  // LIBINPUT_LOG_PRIORITY_ERROR

    /// libinput's value, or the nearest level for values it may add later.
    public init(libinputPriority value: Int32) {
        if value >= InputLogPriority.error.rawValue { self = .error }
        else if value >= InputLogPriority.info.rawValue { self = .info }
        else { self = .debug }
    }

    /// The syslog priority of a line at this level (journald's prefix).
    public var syslogPriority: Int {
        switch self {
        case .error: 3
        case .info: 6
        case .debug: 7
        }
    }

    public static func < (a: InputLogPriority, b: InputLogPriority) -> Bool { a.rawValue < b.rawValue }
}

/// Receives libinput's messages and the input room's own: one line of
/// text (no trailing newline), with its level. Called synchronously on the
/// thread that called into the `InputContext` (init, `dispatch()`, ...).
public typealias InputLogHandler = (InputLogPriority, String) -> Void

public enum InputLog {
    /// Writes each line to stderr with its syslog priority prefix
    /// (`<3>libinput: event5 - ...`), so that journald files it right.
    public static func standardError(_ priority: InputLogPriority, _ text: String) {
        var line = "<\(priority.syslogPriority)>libinput: \(text)\n"
        line.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                // try? flattens "failed" and "would block" into nil: either way, give up.
                guard let written = try? attemptSystemCall("write", {
                    write(2, bytes.baseAddress! + offset, bytes.count - offset)
                }), written > 0 else { return }
                offset += written
            }
        }
    }

    /// libinput's text without its trailing newline(s).
    static func trimmed(_ text: String) -> String {
        var text = Substring(text)
        while let last = text.last, last == "\n" || last == "\r" { text = text.dropLast() }
        return String(text)
    }
}
