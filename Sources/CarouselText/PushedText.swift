import CarouselImaging
#if canImport(Glibc)
import Glibc
#endif

/// Text the house pushes onto the screen (`[overlay] text_file`, `overlay
/// text`): what a file or a pushed string says, as the lines to draw.
/// PictureFrame shows the text of a file under /dev/shm beneath its clock,
/// a hook any script can feed; this is that hook's reading side.
public enum PushedText {
    /// A file is read up to this many bytes; a larger one is not shown.
    public static let fileLimit = 16 * 1024
    /// At most this many lines are shown; the rest is left out (said once).
    public static let maxLines = 4

    /// Why a file's text is not shown (one log line per change).
    public struct Problem: Error, Equatable, Sendable, CustomStringConvertible {
        public var message: String
        public init(_ message: String) { self.message = message }
        public var description: String { message }
    }

    /// The lines to draw: at most `maxLines`, and whether more were left out.
    public struct Lines: Equatable, Sendable {
        public var lines: [String]
        /// The text had more than `maxLines` lines.
        public var cut: Bool
        public init(lines: [String], cut: Bool) {
            self.lines = lines
            self.cut = cut
        }
        public var isEmpty: Bool { lines.isEmpty }
        /// The lines as one text (`status`).
        public var text: String { lines.joined(separator: "\n") }
    }

    /// What a file held when read.
    public enum FileText: Equatable, Sendable {
        /// There is no such file (yet, or any more).
        case missing
        case text(Lines)
        case problem(Problem)
    }

    /// The lines of `text`: split at line ends, control characters (a tab)
    /// as spaces, trailing spaces dropped, blank lines at the start and the
    /// end left out (blank lines between kept), the first `maxLines` kept.
    public static func lines(_ text: String) -> Lines {
        var lines: [String] = []
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            var line = String(raw.map { $0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } ?? false ? " " : $0 })
            while line.last?.isWhitespace == true { line.removeLast() }
            lines.append(line)
        }
        while lines.first?.isEmpty == true { lines.removeFirst() }
        while lines.last?.isEmpty == true { lines.removeLast() }
        return Lines(lines: Array(lines.prefix(maxLines)), cut: lines.count > maxLines)
    }

    /// The lines of text pushed over the socket or MQTT: `\n` (a backslash
    /// and an n) ends a line as a real line end does.
    public static func lines(pushed text: String) -> Lines {
        lines(text.replacing("\\n", with: "\n"))
    }

    /// The lines of a file's bytes (its first `fileLimit`; `size`: the
    /// file's whole size): refused when larger, when not UTF-8 or when it
    /// holds a NUL byte (a binary file, not text someone meant to show).
    public static func lines(bytes: [UInt8], size: Int, path: String) throws(Problem) -> Lines {
        guard size <= fileLimit, bytes.count <= fileLimit else {
            throw Problem("overlay: \(path) is \(size) bytes, more than the \(fileLimit / 1024) KiB of a text file shown; not shown")
        }
        var bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        guard !bytes.contains(0) else {
            throw Problem("overlay: \(path) holds a NUL byte (a binary file?), not text; not shown")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw Problem("overlay: \(path) is not UTF-8 text (save it as UTF-8); not shown")
        }
        return lines(text)
    }

    /// Reads the file at `path` (at most `fileLimit` bytes and one more; it
    /// never blocks on a FIFO or a device: only a regular file is read).
    public static func read(path: String) -> FileText {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return .missing }
            return .problem(Problem("overlay: cannot read \(path): \(String(cString: strerror(code))); not shown"))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            return .problem(Problem("overlay: \(path) is not a regular file; not shown"))
        }
        let bytes = readBytes(from: fd, upTo: fileLimit + 1)
        do {
            return .text(try lines(bytes: bytes, size: max(Int(info.st_size), bytes.count), path: path))
        } catch {
            return .problem(error)
        }
    }
}
