#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The size a picture will have once decoded and turned upright, read from
/// its header without decoding it: the album asks it of every file when it
/// lists the folder (two portraits side by side on a landscape panel), on
/// the daemon's loop, so it must be cheap and must never trap or hang.
///
/// The answer is `ImageDecoder`'s: the same format sniffing, and EXIF
/// orientation found by the same `ExifReader` walk over the same bytes
/// (JPEG, PNG, WebP; never GIF, HEIF or AVIF, which the decoder does not
/// turn by EXIF). Where the header cannot settle it the answer is nil,
/// never a guess.
///
/// A file is read in a few bounded `pread`s: the first 64 KiB, and past
/// them only as far as a walk over the container's own lengths leads (a
/// JPEG frame header behind a large EXIF thumbnail, a WebP EXIF chunk after
/// the picture data), at most `maxReads` more reads and `maxBytes` in all
/// (and one read of a PNG's last 64 KiB). No buffer is sized by a length
/// read from the file beyond those caps.
///
/// Where it may still differ from a decode (the fuzz targets hold it to
/// the decoder, with these exceptions):
/// * FIXME: HEIF and AVIF give the primary item's `ispe`; libheif 1.15
///   decodes the coded stream (or a grid's box) at whatever size it says,
///   even one that contradicts `ispe`, which only a damaged file does.
///   Reading the HEVC SPS or AV1 sequence header would settle it.
/// * A clean aperture (`clap`) other than whole pixels centred inside the
///   picture gives nil: libheif's rounding of the others changed between
///   versions.
/// * A PNG's eXIf after the picture data but more than 64 KiB before the
///   end of the file is not seen (writers put it before IDAT, or last).
/// * A GIF whose extensions before the first frame run past the read caps,
///   and a HEIF `meta` box over 1 MiB, give nil.
public enum ImageShape {
    /// What the first read takes: every header the formats put first, and
    /// the metadata most writers put before the picture data.
    static let headBytes = 64 * 1024
    /// A read past the head takes at least this much, so that the segments
    /// or chunks that follow are usually in it too.
    static let windowBytes = 16 * 1024
    /// Reads past the head, and bytes read in all (head included).
    static let maxReads = 64
    static let maxBytes = 4 << 20
    /// The largest box or chunk read whole: a HEIF `meta` box, an EXIF block.
    static let maxBlockBytes = 1 << 20

    /// The size `ImageDecoder.decode(path:)` gives the file at `path` (full
    /// size, upright), read from its header; nil when the file cannot be
    /// opened, is not a picture the decoder reads, or its header does not
    /// say (truncated, damaged, or beyond the read caps).
    ///
    /// Opened with `O_NONBLOCK` for the decoder's reason (a FIFO would
    /// block the open); `fstat` then refuses anything but a regular file.
    /// The corresponding C functions are `open`, `fstat` and `pread`.
    public static func uprightSize(path: String) -> PixelSize? {
        withReader(path: path) { probe(&$0) }
    }

    /// `body`'s answer from a reader of the regular file at `path`, under
    /// the read caps; nil when the file cannot be opened or is not one.
    static func withReader<T>(path: String, _ body: (inout HeaderReader) -> T?) -> T? {
        let fd = retrying { open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard retrying({ fstat(fd, &info) }) == 0, (info.st_mode & S_IFMT) == S_IFREG,
              let size = Int(exactly: info.st_size), size > 0, size <= ImageDecoder.maxFileBytes else { return nil }
        var reader = HeaderReader(size: size) { buffer, offset in
            // Stops early at end of file (a file shrinking while it is read).
            var filled = 0
            while filled < buffer.count {
                let n = retrying { pread(fd, buffer.baseAddress! + filled, buffer.count - filled, off_t(offset + filled)) }
                if n <= 0 { break }
                filled += n
            }
            return filled
        }
        return body(&reader)
    }

    /// The same for a file held in memory (tests and the fuzz targets): read
    /// through the same windows and caps as a file.
    public static func uprightSize(bytes: UnsafeRawBufferPointer) -> PixelSize? {
        withReader(bytes: bytes) { probe(&$0) }
    }

    /// `body`'s answer from a reader of `bytes`, as of a file's.
    static func withReader<T>(bytes: UnsafeRawBufferPointer, _ body: (inout HeaderReader) -> T?) -> T? {
        guard let base = bytes.baseAddress, bytes.count > 0, bytes.count <= ImageDecoder.maxFileBytes else { return nil }
        var reader = HeaderReader(size: bytes.count) { buffer, offset in
            let n = max(0, min(buffer.count, bytes.count - offset))
            buffer.baseAddress!.copyMemory(from: base + offset, byteCount: n)
            return n
        }
        return body(&reader)
    }

    private static func retrying<T: BinaryInteger>(_ call: () -> T) -> T {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }

    static func probe(_ r: inout HeaderReader) -> PixelSize? {
        guard r.loadHead() else { return nil }
        let sniffed = r.head.withUnsafeBytes { ImageFormat.sniff($0) }
        guard case .supported(let format) = sniffed else { return nil }
        let size: PixelSize?
        switch format {
        case .jpeg: size = jpeg(&r)
        case .png: size = png(&r)
        case .webp: size = webp(&r)
        case .gif: size = gif(&r)
        case .heif, .avif: size = heif(&r)
        }
        guard let size, size.width > 0, size.height > 0 else { return nil }
        return size
    }

    /// The EXIF orientation `ExifReader` finds in `file` (JPEG, PNG and
    /// WebP, rebuilt from the segment or chunk a walk found), identity when none.
    static func orientation(of file: [UInt8], _ format: ImageFormat) -> ExifOrientation {
        file.withUnsafeBytes { ExifReader.orientation(in: $0, format: format) } ?? .identity
    }
}

/// The bytes of a file as a header walk asks for them: the head read once,
/// then one window at a time past it, within `ImageShape`'s caps. Any
/// request past the end of the file or past the caps gives nil, and
/// `exhausted` tells the second from the first.
struct HeaderReader {
    let size: Int
    /// Copies up to `buffer.count` bytes from `offset`; returns how many.
    private let fill: (UnsafeMutableRawBufferPointer, Int) -> Int
    private(set) var head: [UInt8] = []
    private var window: [UInt8] = []
    private var windowStart = 0
    private(set) var reads = 0
    private var bytesRead = 0
    /// A request went unanswered because of the caps, not the file's end.
    private(set) var exhausted = false

    init(size: Int, fill: @escaping (UnsafeMutableRawBufferPointer, Int) -> Int) {
        self.size = size
        self.fill = fill
    }

    mutating func loadHead() -> Bool {
        head = load(0, min(size, ImageShape.headBytes))
        bytesRead = head.count
        return !head.isEmpty
    }

    private func load(_ offset: Int, _ count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let n = bytes.withUnsafeMutableBytes { fill($0, offset) }
        if n < count { bytes.removeLast(count - n) }
        return bytes
    }

    /// `count` bytes at `offset`, from the head, the window, or a new window.
    mutating func read(_ offset: Int, _ count: Int) -> [UInt8]? {
        guard offset >= 0, count >= 0, offset <= size, count <= size - offset else { return nil }
        if offset + count <= head.count { return Array(head[offset..<offset + count]) }
        if offset < head.count {
            // Only what the head lacks.
            guard let rest = read(head.count, offset + count - head.count) else { return nil }
            return Array(head[offset...]) + rest
        }
        if offset >= windowStart, offset + count <= windowStart + window.count {
            return Array(window[(offset - windowStart)..<(offset - windowStart + count)])
        }
        let length = min(max(count, ImageShape.windowBytes), size - offset)
        guard reads < ImageShape.maxReads, bytesRead + length <= ImageShape.maxBytes else {
            exhausted = true
            return nil
        }
        reads += 1
        bytesRead += length
        window = load(offset, length)
        windowStart = offset
        guard window.count >= count else { return nil }  // the file shrank
        return Array(window[0..<count])
    }

    /// One read outside the caps (the tail of a PNG).
    mutating func readBeyondCaps(_ offset: Int, _ count: Int) -> [UInt8]? {
        guard offset >= 0, count > 0, offset + count <= size else { return nil }
        reads += 1
        let bytes = load(offset, count)
        return bytes.count == count ? bytes : nil
    }

    mutating func byte(_ offset: Int) -> UInt8? {
        if offset >= 0 && offset < head.count { return head[offset] }
        if offset >= windowStart && offset - windowStart < window.count { return window[offset - windowStart] }
        return read(offset, 1)?[0]
    }

    mutating func u16(_ offset: Int, bigEndian: Bool) -> UInt16? {
        guard let a = byte(offset), let b = byte(offset + 1) else { return nil }
        return bigEndian ? UInt16(a) << 8 | UInt16(b) : UInt16(b) << 8 | UInt16(a)
    }

    mutating func u24(_ offset: Int) -> Int? {
        guard let a = byte(offset), let b = byte(offset + 1), let c = byte(offset + 2) else { return nil }
        return Int(c) << 16 | Int(b) << 8 | Int(a)
    }

    mutating func u32(_ offset: Int, bigEndian: Bool) -> UInt32? {
        guard let bytes = read(offset, 4) else { return nil }
        return bytes.withUnsafeBytes { ByteView($0).u32(0, bigEndian: bigEndian) }
    }

    mutating func matches(_ ascii: StaticString, at offset: Int) -> Bool {
        guard let bytes = read(offset, ascii.utf8CodeUnitCount) else { return false }
        return bytes.withUnsafeBytes { ByteView($0).matches(ascii, at: 0) }
    }

    /// A box header at `offset` (see `ImageShape.boxHeader`).
    mutating func boxHeader(at offset: Int, end: Int) -> ImageShape.Box? {
        guard offset < end else { return nil }
        let bytes = read(offset, min(32, end - offset)) ?? []
        guard bytes.count >= 8 else { return nil }
        return bytes.withUnsafeBytes { raw -> ImageShape.Box? in
            guard var box = ImageShape.boxHeader(ByteView(raw), at: 0, end: end - offset) else { return nil }
            box.start = offset
            return box
        }
    }
}
