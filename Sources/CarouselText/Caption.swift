import CarouselCore
import CarouselImaging
import CarouselPlatform
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// How captions are drawn on pictures: what they say, where, in what text.
/// Part of the decode cache's settings: a change re-prepares the pictures.
public struct Captioning: Equatable, Sendable {
    public var kind: CaptionKind
    public var position: OverlayPosition
    public var style: TextStyle
    /// The em size in pixels (`TextStyle.pixelSize` for the screen).
    public var size: Int

    public init(kind: CaptionKind, position: OverlayPosition, style: TextStyle, size: Int) {
        self.kind = kind
        self.position = position
        self.style = style
        self.size = size
    }
}

/// A caption's text for a picture, from what `[overlay] caption` names.
public enum Caption {
    /// A sidecar file is read up to this many bytes; a longer one is cut there.
    public static let sidecarLimit = 4096
    /// At most this many lines of a sidecar (a caption, not a page).
    public static let maxLines = 3

    /// Why a picture has no caption although it should have one (logged once per file).
    public struct Problem: Error, Equatable, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// The caption's lines for the picture at `path`; empty when it has none
    /// (no date in the file, no sidecar: nothing to say, nothing logged).
    public static func lines(for path: String, kind: CaptionKind) throws(Problem) -> [String] {
        switch kind {
        case .none:
            return []
        case .name:
            return [baseName(path)]
        case .date:
            return ImageMetadata.read(path: path).dateTaken.map { [$0.text] } ?? []
        case .exif:
            return ImageMetadata.read(path: path).description.map { [$0] } ?? []
        case .sidecar:
            return try sidecarLines(sidecarPath(for: path))
        }
    }

    /// The file name without folder and extension: "IMG_1234" for /a/IMG_1234.JPG.
    public static func baseName(_ path: String) -> String {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }

    /// NAME.txt beside NAME.jpg (the picture's extension replaced, any case).
    public static func sidecarPath(for path: String) -> String {
        let slash = path.lastIndex(of: "/")
        let nameStart = slash.map { path.index(after: $0) } ?? path.startIndex
        if let dot = path[nameStart...].lastIndex(of: "."), dot != nameStart {
            return String(path[..<dot]) + ".txt"
        }
        return path + ".txt"
    }

    /// The first lines of a sidecar file: up to `maxLines` lines of its first
    /// paragraph, trimmed. A missing file is no caption; one that is not
    /// UTF-8 text is a problem (one log line; no caption).
    public static func sidecarLines(_ path: String) throws(Problem) -> [String] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return [] }
            throw Problem(message: "caption: cannot read \(path): \(String(cString: strerror(code))); no caption")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw Problem(message: "caption: \(path) is not a regular file; no caption")
        }
        var bytes = readBytes(from: fd, upTo: sidecarLimit)
        if Int(info.st_size) > sidecarLimit {
            // Cut at the limit: a character split there is dropped, not called invalid.
            var cut = bytes.count
            while cut > 0, bytes[cut - 1] & 0xC0 == 0x80 { cut -= 1 }
            if cut > 0, bytes[cut - 1] >= 0xC0 { bytes.removeLast(bytes.count - (cut - 1)) }
        }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw Problem(message: "caption: \(path) is not UTF-8 text (save it as UTF-8); no caption")
        }
        var lines: [String] = []
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            let line = String(raw.map { $0.isNewline || ($0.asciiValue.map { $0 < 0x20 } ?? false) ? " " : $0 })
            let trimmed = line.trimmingWhitespace()
            if trimmed.isEmpty {
                if lines.isEmpty { continue }   // blank lines before the text
                break                           // the first paragraph ends
            }
            lines.append(String(trimmed))
            if lines.count == maxLines { break }
        }
        return lines
    }
}

/// Draws captions into pictures being prepared (on the decoder thread).
public enum Captioner {
    private static let logged = Mutex<Set<String>>([])

    /// Where a caption's problems go: the log, as warnings.
    public static let logWarning: @Sendable (String) -> Void = { log(.warning, $0) }

    /// Reports `line` once for `key` in this process (a picture decoded
    /// again as the carousel comes back to it does not log again).
    static func reportOnce(_ key: String, _ line: String, _ report: (String) -> Void) {
        let first = logged.withLock { set in
            if set.count > 10_000 { set.removeAll() }
            return set.insert(key).inserted
        }
        if first { report(line) }
    }

    /// The caption of the picture at `path` as a sprite and where it goes in
    /// a picture of `box` size; nil when there is none (or no font). A
    /// sidecar that cannot be used is reported once per file.
    public static func sprite(for path: String, in box: PixelSize, _ captioning: Captioning,
                              report: (String) -> Void = logWarning) -> (sprite: DecodedImage, x: Int, y: Int)? {
        let lines: [String]
        do {
            lines = try Caption.lines(for: path, kind: captioning.kind)
        } catch {
            reportOnce("caption:" + path, error.message, report)
            return nil
        }
        guard !lines.isEmpty else { return nil }
        let (result, isNew) = TextRenderer.shared(pattern: captioning.style.font, pixelSize: captioning.size)
        let renderer: TextRenderer
        switch result {
        case .success(let r): renderer = r
        case .failure(let error):
            if isNew { report("overlay: \(error); captions, the clock and pushed text are not drawn") }
            return nil
        }
        let margin = TextSprite.margin(size: captioning.size)
        let maxWidth = Double(box.width - 2 * margin - captioning.size)
        guard maxWidth > 0 else { return nil }
        let fitted = lines.map { renderer.fitted($0, maxWidth: maxWidth) }
        guard let mask = renderer.render(lines: fitted, alignment: captioning.position.horizontal),
              let sprite = try? TextSprite.make(mask, style: captioning.style, size: captioning.size) else { return nil }
        let origin = TextSprite.origin(of: sprite.size, in: box, at: captioning.position, margin: margin)
        return (sprite, origin.x, origin.y)
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> Substring {
        var s = self[...]
        while s.first?.isWhitespace == true { s.removeFirst() }
        while s.last?.isWhitespace == true { s.removeLast() }
        return Substring(s)
    }
}
