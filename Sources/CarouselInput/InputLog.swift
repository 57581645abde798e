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

    /// The log priority of a line at this level.
    public var logPriority: LogPriority {
        switch self {
        case .error: .error
        case .info: .info
        case .debug: .debug
        }
    }

    public static func < (a: InputLogPriority, b: InputLogPriority) -> Bool { a.rawValue < b.rawValue }
}

/// Receives libinput's messages and the input room's own: one line of
/// text (no trailing newline), with its level. Called synchronously on the
/// thread that called into the `InputContext` (init, `dispatch()`, ...).
public typealias InputLogHandler = (InputLogPriority, String) -> Void

public enum InputLog {
    /// Writes each line to the process's log (`<3>libinput: event5 - ...`),
    /// at the matching priority: the one place libinput's levels meet ours.
    public static func write(_ priority: InputLogPriority, _ text: String) {
        log(priority.logPriority, "libinput: \(text)")
    }

    /// libinput's text without its trailing newline(s).
    static func trimmed(_ text: String) -> String {
        var text = Substring(text)
        while let last = text.last, last == "\n" || last == "\r" { text = text.dropLast() }
        return String(text)
    }
}
