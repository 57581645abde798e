/// The formats the decoder reads, recognised by their leading bytes, never by
/// the file name: a `.jpg` that is really a PNG decodes as a PNG.
public enum ImageFormat: String, Sendable, CaseIterable {
    case jpeg
    case png
    case webp

    /// The name people use, for messages.
    public var name: String {
        switch self {
        case .jpeg: return "JPEG"
        case .png: return "PNG"
        case .webp: return "WebP"
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

        if !bytes.isEmpty {
            if isPrefix(of: jpegSignature) { return .truncated(.jpeg) }
            if isPrefix(of: pngSignature) { return .truncated(.png) }
            if isPrefix(of: Array("RIFF".utf8)) || (bytes.count < 12 && ascii("RIFF")) { return .truncated(.webp) }
        }

        // Name the usual suspects so that the log line says what the file is.
        if ascii("GIF87a") || ascii("GIF89a") { return .unsupported(detected: "GIF") }
        if ascii("BM") && bytes.count >= 14 { return .unsupported(detected: "BMP") }
        if starts(with: [0x49, 0x49, 0x2A, 0x00]) || starts(with: [0x4D, 0x4D, 0x00, 0x2A]) {
            return .unsupported(detected: "TIFF")
        }
        if ascii("ftyp", at: 4) {
            // ISO base media: the major brand says HEIF (Apple's .heic) or AVIF.
            if ascii("avif", at: 8) || ascii("avis", at: 8) { return .unsupported(detected: "AVIF") }
            if ascii("heic", at: 8) || ascii("heix", at: 8) || ascii("mif1", at: 8) || ascii("msf1", at: 8) {
                return .unsupported(detected: "HEIF")
            }
        }
        if ascii("RIFF") { return .unsupported(detected: "RIFF, but not WebP") }
        if starts(with: [0x00, 0x00, 0x00, 0x0C, 0x6A, 0x50]) || starts(with: [0xFF, 0x4F, 0xFF, 0x51]) {
            return .unsupported(detected: "JPEG 2000")
        }
        if ascii("<svg") || ascii("<?xml") { return .unsupported(detected: "SVG or XML") }
        if looksLikeText(bytes) { return .unsupported(detected: "text") }
        return .unsupported(detected: nil)
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
