/// One `key = value` line of an INI file, with where it came from.
public struct IniEntry: Equatable, Sendable {
    public var section: String
    public var key: String
    public var value: String
    public var line: Int

    public init(section: String, key: String, value: String, line: Int) {
        self.section = section
        self.key = key
        self.value = value
        self.line = line
    }
}

/// An error in a configuration file: `FILE:LINE: message`, ready for a log line.
/// Text from the file as an error line quotes it: whole when short, else
/// its start and its length, so a megabyte-long line is not echoed to the
/// log whole.
func excerpt(_ text: some StringProtocol) -> String {
    guard text.count > 80 else { return String(text) }
    return "\(text.prefix(60))... (\(text.utf8.count) bytes)"
}

public struct ConfigError: Error, Equatable, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var message: String

    public init(file: String, line: Int?, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String {
        if let line { return "\(file):\(line): \(message)" }
        return "\(file): \(message)"
    }
}

/// A strict INI reader: `[section]` headers, `key = value` lines, full-line
/// comments starting with `#` or `;`, and trailing comments introduced by
/// whitespace and `#` or `;` followed by whitespace (so `#RRGGBB` colours stay
/// values). Anything else is an error naming the line; nothing is guessed.
public enum IniParser {
    /// With `sections`, a header naming any other section is an error at its
    /// line, even when no key follows it.
    public static func parse(_ text: String, file: String, sections: [String]? = nil) throws(ConfigError) -> [IniEntry] {
        var entries: [IniEntry] = []
        var section: String? = nil
        var seen: [String: Int] = [:]
        var number = 0
        // "\r\n" is one Character in Swift: split on newline characters, not on "\n".
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            number += 1
            var line = Substring(rawLine)
            if number == 1, line.hasPrefix("\u{FEFF}") { line = line.dropFirst() }
            let trimmed = line.trimmingWhitespace()
            if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix(";") { continue }
            if trimmed.hasPrefix("[") {
                let body = stripComment(trimmed)
                guard body.hasSuffix("]"), body.count > 2 else {
                    throw ConfigError(file: file, line: number, message: "malformed section header '\(excerpt(trimmed))' (expected [name])")
                }
                let name = body.dropFirst().dropLast().trimmingWhitespace()
                guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else {
                    throw ConfigError(file: file, line: number, message: "malformed section name '\(excerpt(name))'")
                }
                if let sections, !sections.contains(String(name)) {
                    throw ConfigError(file: file, line: number,
                                      message: "unknown section [\(excerpt(name))] (known: \(sections.map { "[\($0)]" }.joined(separator: ", ")))")
                }
                section = String(name)
                continue
            }
            guard let eq = trimmed.firstIndex(of: "=") else {
                throw ConfigError(file: file, line: number, message: "expected 'key = value', '[section]' or a comment, got '\(excerpt(trimmed))'")
            }
            let key = trimmed[..<eq].trimmingWhitespace()
            let value = stripComment(trimmed[trimmed.index(after: eq)...]).trimmingWhitespace()
            guard !key.isEmpty else {
                throw ConfigError(file: file, line: number, message: "missing key name before '='")
            }
            guard let section else {
                throw ConfigError(file: file, line: number, message: "key '\(excerpt(key))' before any [section]")
            }
            let id = "\(section).\(key)"
            if let first = seen[id] {
                throw ConfigError(file: file, line: number, message: "duplicate key '\(excerpt(key))' in [\(section)] (first set on line \(first))")
            }
            seen[id] = number
            entries.append(IniEntry(section: section, key: String(key), value: String(value), line: number))
        }
        return entries
    }

    /// Cuts a trailing comment: `#` or `;` at the start or after whitespace,
    /// followed by whitespace or the end of the line.
    static func stripComment(_ s: Substring) -> Substring {
        var previous: Character = " "
        var index = s.startIndex
        while index < s.endIndex {
            let c = s[index]
            if (c == "#" || c == ";") && previous.isWhitespace {
                let next = s.index(after: index)
                if next == s.endIndex || s[next].isWhitespace { return s[..<index] }
            }
            previous = c
            index = s.index(after: index)
        }
        return s
    }
}

extension Substring {
    func trimmingWhitespace() -> Substring {
        var s = self
        while let f = s.first, f.isWhitespace { s = s.dropFirst() }
        while let l = s.last, l.isWhitespace { s = s.dropLast() }
        return s
    }
}
