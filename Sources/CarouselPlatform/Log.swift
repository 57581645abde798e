#if canImport(Glibc)
import Glibc
#endif

/// A log line's syslog priority. Lines go to stderr prefixed `<N>`, which
/// journald reads as the line's priority (STYLE.md: errors and logs).
public enum LogPriority: Int, Sendable, CaseIterable, Comparable, CustomStringConvertible {
    case error = 3, warning = 4, info = 6, debug = 7

    /// The name `[log] level` takes: error, warning, info, debug.
    public var description: String {
        switch self {
        case .error: "error"
        case .warning: "warning"
        case .info: "info"
        case .debug: "debug"
        }
    }

    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = match
    }

    /// More urgent first: `.error < .debug`.
    public static func < (a: LogPriority, b: LogPriority) -> Bool { a.rawValue < b.rawValue }
}

/// The process's one log: every room writes through it.
public enum Log {
    /// Lines less urgent than this are not written (`[log] level`). Set at
    /// start-up and by reloads, from the loop thread; read from any thread
    /// (a stale read only decides whether one line is written).
    nonisolated(unsafe) public static var threshold = LogPriority.info

    /// Whether a line at `priority` would be written (to skip building it).
    public static func enabled(_ priority: LogPriority) -> Bool { priority <= threshold }

    /// One line on stderr with its syslog priority prefix.
    public static func write(_ priority: LogPriority, _ line: String) {
        guard enabled(priority) else { return }
        writeAll(2, "<\(priority.rawValue)>\(line)\n")
    }
}

/// One log line (see `Log`).
public func log(_ priority: LogPriority, _ line: String) { Log.write(priority, line) }

/// Writes all of `text` to file descriptor `fd` (1 stdout, 2 stderr),
/// retrying on EINTR. Returns false, having given up, when the descriptor
/// takes no more (its reader went away, SIGPIPE ignored).
@discardableResult
public func writeAll(_ fd: Int32, _ text: String) -> Bool {
    var text = text
    return text.withUTF8 { writeAll(fd, UnsafeRawBufferPointer($0)) }
}

/// Writes all of `bytes` to `fd`, as `writeAll(_:_:)` writes a text.
@discardableResult
public func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    var offset = 0
    while offset < bytes.count {
        // try? flattens "failed" and "would block" into nil: either way, give up.
        guard let written = try? attemptSystemCall("write", {
            Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        }), written > 0 else { return false }
        offset += written
    }
    return true
}

/// A message for a person at a terminal, on stderr, without a priority
/// prefix (command-line tools' errors).
public func printError(_ line: String) { writeAll(2, line + "\n") }

extension Double {
    /// At most one decimal, no trailing ".0": sizes and times in log lines and reports.
    public var formatted: String {
        let tenths = (self * 10).rounded() / 10
        return tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
    }
}
