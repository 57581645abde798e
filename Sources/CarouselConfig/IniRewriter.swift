import CarouselPlatform
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Sets one key of an INI file and leaves every other byte as it was:
/// comments, blank lines, other keys, line endings, a missing final newline.
public enum IniRewriter {
    /// `text` with `key = value` in `[section]`: an existing `key` line
    /// there is replaced (its indentation and trailing comment kept), else
    /// the line goes after the section's last key (or its header), else a
    /// new section is added at the end. Lines are read as `IniParser` reads
    /// them; commented-out keys stay as they are.
    public static func setting(_ key: String, to value: String, in section: String, of text: String) -> String {
        let lines = splitLines(text)
        // "\r\n" if the file uses it, so an added line looks like its neighbours.
        let newline = lines.first(where: { $0.hasSuffix("\r\n") }) != nil ? "\r\n" : "\n"
        var current: String? = nil
        var sectionEnd: Int? = nil  // index after which to add the key
        for (i, line) in lines.enumerated() {
            let body = Substring(stripNewline(line))
            let trimmed = (i == 0 && body.hasPrefix("\u{FEFF}") ? body.dropFirst() : body).trimmingWhitespace()
            if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix(";") { continue }
            if trimmed.hasPrefix("[") {
                let header = IniParser.stripComment(trimmed).trimmingWhitespace()
                current = header.hasSuffix("]") ? String(header.dropFirst().dropLast().trimmingWhitespace()) : nil
                if current == section, sectionEnd == nil { sectionEnd = i }
                continue
            }
            guard current == section, let eq = trimmed.firstIndex(of: "=") else { continue }
            sectionEnd = i
            guard trimmed[..<eq].trimmingWhitespace() == key else { continue }
            // Replace this line: keep its indentation, its trailing comment and its line ending.
            let indentation = body.prefix(while: { $0.isWhitespace })
            let afterValue = trimmed[trimmed.index(after: eq)...]
            let comment = afterValue[IniParser.stripComment(afterValue).endIndex...]
            var replaced = lines
            replaced[i] = "\(indentation)\(key) = \(value)\(comment.isEmpty ? "" : " " + comment)" + lineEnding(line)
            return replaced.joined()
        }
        var result = lines
        let added = "\(key) = \(value)"
        if let end = sectionEnd {
            // The line before may lack a final newline (the file's last line).
            if lineEnding(result[end]).isEmpty { result[end] += newline }
            result.insert(added + newline, at: end + 1)
            return result.joined()
        }
        var out = text
        if !out.isEmpty && !out.hasSuffix("\n") { out += newline }
        if !out.isEmpty { out += newline }
        return out + "[\(section)]" + newline + added + newline
    }

    /// The lines of `text`, each with its own line ending ("\n" or "\r\n";
    /// the last may have none). Joined, they give `text` back byte for byte.
    static func splitLines(_ text: String) -> [String] {
        var lines: [String] = []
        var start = text.utf8.startIndex
        var i = start
        let utf8 = text.utf8
        while i < utf8.endIndex {
            if utf8[i] == UInt8(ascii: "\n") {
                let next = utf8.index(after: i)
                lines.append(String(text[start..<next]))
                start = next
            }
            i = utf8.index(after: i)
        }
        if start < utf8.endIndex { lines.append(String(text[start...])) }
        return lines
    }

    static func lineEnding(_ line: String) -> String {
        line.hasSuffix("\r\n") ? "\r\n" : line.hasSuffix("\n") ? "\n" : ""
    }

    static func stripNewline(_ line: String) -> String {
        String(line.utf8.dropLast(lineEnding(line).utf8.count))!
    }
}

/// Errors of writing a configuration file.
public struct ConfigWriteError: Error, Equatable, Sendable, CustomStringConvertible {
    public var path: String
    public var message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "cannot write \(path): \(message)" }
}

extension IniRewriter {
    /// Sets `[section] key = value` in the file at `path` (created if it
    /// does not exist) atomically: the new text goes to a temporary file in
    /// the same directory, is flushed to disk, and is renamed over the old
    /// one, so a reader or a power cut sees the old file or the new one,
    /// never half of either. The new text must still be a valid
    /// configuration (`Configuration.parse`), else nothing is written.
    ///
    /// The old file's permission bits are kept; a symbolic link at `path`
    /// is replaced by the file (as every editor that saves atomically does).
    public static func update(path: String, section: String, key: String, value: String) throws(ConfigWriteError) {
        let old: String
        var mode: mode_t = 0o644
        var info = stat()
        if stat(path, &info) == 0 {
            mode = info.st_mode & 0o7777
            do {
                old = try readFile(path)
            } catch {
                throw ConfigWriteError(path: path, message: error.message)
            }
        } else if errno == ENOENT {
            old = ""
        } else {
            throw ConfigWriteError(path: path, message: errnoDescription(errno))
        }
        let new = setting(key, to: value, in: section, of: old)
        do {
            _ = try Configuration.parse(new, file: path)
        } catch {
            throw ConfigWriteError(path: path, message: "the file would not be a valid configuration (\(error)); fix it first (carouseld check-config)")
        }
        try writeAtomically(path: path, text: new, mode: mode)
    }

    private static func readFile(_ path: String) throws(ConfigWriteError) -> String {
        let bytes: [UInt8]
        do {
            bytes = try readFileBytes(path)
        } catch {
            throw ConfigWriteError(path: path, message: errnoDescription(error.errno))
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigWriteError(path: path, message: "not UTF-8 text")
        }
        return text
    }

    /// Writes `text` to `path` through a temporary file in the same directory,
    /// fsync and rename: readers see the old file or the new one, never a part.
    /// The directory is synced after the rename too: without it a power cut
    /// can forget the rename (the old file comes back).
    public static func writeAtomically(path: String, text: String, mode: mode_t) throws(ConfigWriteError) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        var template = Array((directory + "/." + name + ".XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw ConfigWriteError(path: path, message: "cannot create a temporary file in \(directory): \(errnoDescription(errno)) (the directory must be writable)")
        }
        let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var failure: String? = nil
        if fchmod(fd, mode) != 0 { failure = "chmod: \(errnoDescription(errno))" }
        if failure == nil, !writeAll(fd, text) { failure = "write: \(errnoDescription(errno))" }
        // Flushed before the rename: otherwise a power cut can leave the new
        // name pointing at an empty file.
        if failure == nil, fsync(fd) != 0 { failure = "fsync: \(errnoDescription(errno))" }
        if close(fd) != 0, failure == nil { failure = "close: \(errnoDescription(errno))" }
        if failure == nil, rename(temporary, path) != 0 { failure = "rename: \(errnoDescription(errno))" }
        if let failure {
            unlink(temporary)
            throw ConfigWriteError(path: path, message: failure)
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            close(directoryFD)
        }
    }
}
