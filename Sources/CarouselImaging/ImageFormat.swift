/// The formats the decoder reads, recognised by their leading bytes, never by
/// the file name: a `.jpg` that is really a PNG decodes as a PNG.
public enum ImageFormat: String, Sendable, CaseIterable {
    case jpeg
    case png
    case webp
    case gif
    /// HEIF with an HEVC picture: what phones save as `.heic`.
    case heif
    /// HEIF's container with an AV1 picture.
    case avif

    /// The name people use, for messages.
    public var name: String {
        switch self {
        case .jpeg: return "JPEG"
        case .png: return "PNG"
        case .webp: return "WebP"
        case .gif: return "GIF"
        case .heif: return "HEIF"
        case .avif: return "AVIF"
        }
    }

    /// The file name extensions of this format, lower case, without the dot:
    /// the album shows files with these names (and the decoder still trusts
    /// only the leading bytes).
    public var fileExtensions: [String] {
        switch self {
        case .jpeg: ["jpg", "jpeg"]
        case .png: ["png"]
        case .webp: ["webp"]
        case .gif: ["gif"]
        // .hif is what Canon and Fujifilm cameras name their HEIF files.
        case .heif: ["heic", "heif", "hif"]
        case .avif: ["avif"]
        }
    }

    /// What the first bytes of a file say it is.
    enum Sniffed: Equatable {
        case supported(ImageFormat)
        /// Fewer bytes than a signature, all of them matching one: a cut-off file.
        case truncated(ImageFormat)
        case unsupported(detected: String?)
    }

    private static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    private static let jpegSignature: [UInt8] = [0xFF, 0xD8, 0xFF]
    private static let gif87Signature = Array("GIF87a".utf8)
    private static let gif89Signature = Array("GIF89a".utf8)

    /// ISO base media brands (the `ftyp` box) of still HEIF pictures: HEVC
    /// pictures and sequences (`heic`, `heix`, `hevc`, `hevx`, and the
    /// multi-layer `heim`, `heis`, `hevm`, `hevs`), and the codec-neutral
    /// `mif1`/`msf1` that any HEIF may give as its major brand.
    private static let heifBrands = ["heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs", "mif1", "msf1"]
    /// AVIF's brands: still picture and sequence.
    private static let avifBrands = ["avif", "avis"]

    static func sniff(_ bytes: UnsafeRawBufferPointer) -> Sniffed {
        func starts(with prefix: [UInt8], at offset: Int = 0) -> Bool {
            guard bytes.count >= offset + prefix.count else { return false }
            for (i, byte) in prefix.enumerated() where bytes[offset + i] != byte { return false }
            return true
        }
        func ascii(_ text: String, at offset: Int = 0) -> Bool { starts(with: Array(text.utf8), at: offset) }
        /// The whole (short) file is a prefix of `signature`.
        func isPrefix(of signature: [UInt8]) -> Bool {
            bytes.count < signature.count && bytes.indices.allSatisfy { bytes[$0] == signature[$0] }
        }

        if starts(with: jpegSignature) { return .supported(.jpeg) }
        if starts(with: pngSignature) { return .supported(.png) }
        // RIFF container: "RIFF", 4-byte size, form type "WEBP".
        if ascii("RIFF") && ascii("WEBP", at: 8) { return .supported(.webp) }
        if starts(with: gif87Signature) || starts(with: gif89Signature) { return .supported(.gif) }
        if ascii("ftyp", at: 4), let format = isoMediaFormat(bytes) { return .supported(format) }

        if !bytes.isEmpty {
            if isPrefix(of: jpegSignature) { return .truncated(.jpeg) }
            if isPrefix(of: pngSignature) { return .truncated(.png) }
            if isPrefix(of: Array("RIFF".utf8)) || (bytes.count < 12 && ascii("RIFF")) { return .truncated(.webp) }
            if isPrefix(of: gif87Signature) || isPrefix(of: gif89Signature) { return .truncated(.gif) }
            // A box size (any four bytes), then part of "ftyp" and of a
            // brand we know; AVIF is a HEIF too, so "HEIF" until the brand says.
            if bytes.count > 4 && bytes.count < 12 {
                let typ = Array(bytes[4..<min(bytes.count, 8)])
                let partial = bytes.count > 8 ? Array(bytes[8...]) : []
                if "ftyp".utf8.starts(with: typ) {
                    if !partial.isEmpty && avifBrands.contains(where: { $0.utf8.starts(with: partial) }) { return .truncated(.avif) }
                    if heifBrands.contains(where: { $0.utf8.starts(with: partial) }) { return .truncated(.heif) }
                }
            }
        }

        // Name the usual suspects so that the log line says what the file is.
        if ascii("BM") && bytes.count >= 14 { return .unsupported(detected: "BMP") }
        if starts(with: [0x49, 0x49, 0x2A, 0x00]) || starts(with: [0x4D, 0x4D, 0x00, 0x2A]) {
            return .unsupported(detected: "TIFF")
        }
        if ascii("ftyp", at: 4) { return .unsupported(detected: "MP4 or QuickTime video") }
        if ascii("RIFF") { return .unsupported(detected: "RIFF, but not WebP") }
        if starts(with: [0x00, 0x00, 0x00, 0x0C, 0x6A, 0x50]) || starts(with: [0xFF, 0x4F, 0xFF, 0x51]) {
            return .unsupported(detected: "JPEG 2000")
        }
        if ascii("<svg") || ascii("<?xml") { return .unsupported(detected: "SVG or XML") }
        if looksLikeText(bytes) { return .unsupported(detected: "text") }
        return .unsupported(detected: nil)
    }

    /// An ISO base media file (`ftyp` at offset 4): HEIF or AVIF by its
    /// brands, nil for others (MP4 and QuickTime video, JPEG 2000).
    ///
    /// The major brand decides when it names a codec; `mif1`/`msf1` only say
    /// "a HEIF file", and then AVIF is told by its compatible brand (libavif
    /// and libheif both list `avif` there). The compatible brands are read
    /// only within the `ftyp` box and the file.
    private static func isoMediaFormat(_ bytes: UnsafeRawBufferPointer) -> ImageFormat? {
        guard bytes.count >= 12 else { return nil }
        func brand(at offset: Int) -> String {
            String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
        }
        let major = brand(at: 8)
        if avifBrands.contains(major) { return .avif }
        guard heifBrands.contains(major) else { return nil }
        if major == "mif1" || major == "msf1" {
            // The box's size is big-endian; the compatible brands start at 16.
            let boxSize = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
            let end = min(boxSize, bytes.count)
            var offset = 16
            while offset + 4 <= end {
                if avifBrands.contains(brand(at: offset)) { return .avif }
                offset += 4
            }
        }
        return .heif
    }

    /// The first 512 bytes are printable ASCII or UTF-8 and whitespace.
    private static func looksLikeText(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let sample = bytes.prefix(512)
        guard !sample.isEmpty else { return false }
        return sample.allSatisfy { byte in
            byte == 0x09 || byte == 0x0A || byte == 0x0D || (byte >= 0x20 && byte != 0x7F)
        }
    }
}

/// Clips the album shows beside pictures (played with FFmpeg, `CarouselVideo`),
/// recognised by their names alone: the player reads what the container is.
public enum ClipName {
    /// Lower case, without the dot.
    public static let fileExtensions = ["mp4", "m4v", "mov", "mkv", "webm"]

    /// Whether `path` names a clip (its extension in any case; `.mp4` alone is a hidden file's name).
    public static func isClip(_ path: String) -> Bool {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
        return fileExtensions.contains(name[name.index(after: dot)...].lowercased())
    }
}
