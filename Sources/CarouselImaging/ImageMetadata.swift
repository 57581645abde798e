#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What a picture says about itself: when it was taken (EXIF
/// DateTimeOriginal) and its description (XMP dc:description, else EXIF
/// ImageDescription), for captions; the faces marked in it (XMP regions,
/// `FaceRegions`), for crops and Ken Burns. Read from JPEG, PNG and WebP;
/// HEIF and AVIF give their XMP item's description and faces; GIF none.
public struct ImageMetadata: Equatable, Sendable {
    /// The day and time the photo was taken, as the camera's clock showed it.
    public struct DateTaken: Equatable, Sendable {
        public var year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int
        public init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
            (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
        }

        static let months = ["January", "February", "March", "April", "May", "June", "July", "August",
                             "September", "October", "November", "December"]

        /// "12 March 2024": the day as people write it, unambiguous in any
        /// country (no 03/12 against 12/03).
        public var text: String { "\(day) \(Self.months[month - 1]) \(year)" }

        /// EXIF's "YYYY:MM:DD HH:MM:SS"; nil for anything else (cameras
        /// without a set clock write "0000:00:00 00:00:00" or spaces).
        init?(exif: String) {
            let digits = exif.split(whereSeparator: { $0 == ":" || $0 == " " || $0 == "-" || $0 == "T" })
            guard digits.count >= 3, let y = Int(digits[0]), let m = Int(digits[1]), let d = Int(digits[2]),
                  (1...9999).contains(y), (1...12).contains(m), (1...31).contains(d) else { return nil }
            let rest = digits.dropFirst(3).prefix(3).map { Int($0) ?? 0 }
            self.init(year: y, month: m, day: d, hour: rest.first ?? 0, minute: rest.dropFirst().first ?? 0,
                      second: rest.dropFirst(2).first ?? 0)
        }
    }

    public var dateTaken: DateTaken?
    /// XMP dc:description if there is one, else EXIF ImageDescription.
    public var description: String?
    /// The faces (and pets' heads) marked in the picture, upright; empty: none.
    public var faces: [FaceRegion]

    public init(dateTaken: DateTaken? = nil, description: String? = nil, faces: [FaceRegion] = []) {
        self.dateTaken = dateTaken
        self.description = description
        self.faces = faces
    }

    /// Metadata sits at the start of a file (JPEG's APP segments before the
    /// scan, PNG's chunks before IDAT as writers put them, WebP's chunks
    /// after VP8X): reading this much of the file finds it without reading
    /// a whole photo a second time.
    public static let readLimit = 512 * 1024

    /// Reads `path`'s metadata. A file that cannot be read or holds none gives empty metadata.
    /// A HEIF or AVIF file's XMP item is found through its `meta` box, where
    /// the item's location says, within `ImageShape`'s read caps.
    public static func read(path: String) -> ImageMetadata {
        guard let bytes = readPrefix(path: path, limit: readLimit) else { return ImageMetadata() }
        if case .supported(let format) = bytes.withUnsafeBytes({ ImageFormat.sniff($0) }), format == .heif || format == .avif {
            return ImageShape.withReader(path: path) { reader in
                ImageShape.heifXMP(&reader).map { xmpPacket(String(decoding: $0, as: UTF8.self)) }
            } ?? ImageMetadata()
        }
        return bytes.withUnsafeBytes { parse($0) }
    }

    /// The description and faces an XMP packet holds.
    static func xmpPacket(_ text: String) -> ImageMetadata {
        ImageMetadata(description: xmpDescription(text).flatMap(cleaned), faces: FaceRegions.parse(text))
    }

    /// The metadata in a file's bytes (or its first `readLimit` bytes).
    public static func parse(_ bytes: UnsafeRawBufferPointer) -> ImageMetadata {
        let view = ByteView(bytes)
        let format: ImageFormat?
        if view.u8(0) == 0xFF, view.u8(1) == 0xD8 {
            format = .jpeg
        } else if view.u8(0) == 0x89, view.matches("PNG", at: 1) {
            format = .png
        } else if view.matches("RIFF", at: 0), view.matches("WEBP", at: 8) {
            format = .webp
        } else if case .supported(let sniffed) = ImageFormat.sniff(bytes), sniffed == .heif || sniffed == .avif {
            return ImageShape.withReader(bytes: bytes) { reader in
                ImageShape.heifXMP(&reader).map { xmpPacket(String(decoding: $0, as: UTF8.self)) }
            } ?? ImageMetadata()
        } else {
            format = nil
        }
        var result = ImageMetadata()
        let tiff: Range<Int>?
        let xmp: Range<Int>?
        switch format {
        case .jpeg?:
            tiff = ExifReader.jpegExif(view)
            xmp = jpegXMP(view)
        case .png?:
            tiff = ExifReader.pngExif(view)
            xmp = pngXMP(view)
        case .webp?:
            tiff = ExifReader.webpExif(view)
            xmp = webpXMP(view)
        default:
            tiff = nil
            xmp = nil
        }
        if let tiff {
            let fields = tiffFields(view.slice(tiff))
            result.dateTaken = fields.dateTimeOriginal.flatMap(DateTaken.init(exif:))
            result.description = fields.imageDescription.flatMap(cleaned)
        }
        if let xmp {
            let packet = xmpPacket(view.slice(xmp).string)
            if let text = packet.description { result.description = text }
            result.faces = packet.faces
        }
        return result
    }

    /// Text as a caption shows it: trimmed, control characters as spaces; nil if nothing is left.
    static func cleaned(_ text: String) -> String? {
        let scalars = text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : Character($0) }
        let s = String(scalars).trimmingSpaces
        return s.isEmpty ? nil : s
    }

    // MARK: - EXIF

    struct TiffFields {
        var imageDescription: String?
        var dateTimeOriginal: String?
    }

    /// IFD0's ImageDescription (0x010E) and, through the Exif IFD pointer
    /// (0x8769), DateTimeOriginal (0x9003). Every offset is checked, as in
    /// `ExifReader.tiffOrientation`.
    static func tiffFields(_ v: ByteView) -> TiffFields {
        var fields = TiffFields()
        let bigEndian: Bool
        if v.matches("MM", at: 0) { bigEndian = true } else if v.matches("II", at: 0) { bigEndian = false } else { return fields }
        guard v.u16(2, bigEndian: bigEndian) == 42, let ifd32 = v.u32(4, bigEndian: bigEndian),
              let ifd0 = Int(exactly: ifd32) else { return fields }
        /// The ASCII (type 2) value of an entry: inline up to 4 bytes, else at its offset.
        func ascii(_ entry: Int) -> String? {
            guard v.u16(entry + 2, bigEndian: bigEndian) == 2 || v.u16(entry + 2, bigEndian: bigEndian) == 7,
                  let count32 = v.u32(entry + 4, bigEndian: bigEndian), let count = Int(exactly: count32),
                  count > 0, count <= 65_536 else { return nil }
            let start: Int
            if count <= 4 {
                start = entry + 8
            } else {
                guard let o = v.u32(entry + 8, bigEndian: bigEndian), let offset = Int(exactly: o) else { return nil }
                start = offset
            }
            guard let end = v.offset(start, count), end <= v.count else { return nil }
            var bytes: [UInt8] = []
            for i in start..<end {
                guard let b = v.u8(i) else { return nil }
                if b == 0 { break }
                bytes.append(b)
            }
            return decodeText(bytes)
        }
        func entries(_ ifd: Int, _ body: (_ tag: UInt16, _ entry: Int) -> Void) {
            guard let n = v.u16(ifd, bigEndian: bigEndian) else { return }
            for index in 0..<Int(n) {
                guard let entry = v.offset(ifd, 2 + 12 * index), entry <= v.count - 12,
                      let tag = v.u16(entry, bigEndian: bigEndian) else { return }
                body(tag, entry)
            }
        }
        var exifIFD: Int?
        entries(ifd0) { tag, entry in
            switch tag {
            case 0x010E: fields.imageDescription = ascii(entry)
            case 0x8769: exifIFD = v.u32(entry + 8, bigEndian: bigEndian).flatMap { Int(exactly: $0) }
            default: break
            }
        }
        if let exifIFD, exifIFD != ifd0 {
            entries(exifIFD) { tag, entry in
                if tag == 0x9003 { fields.dateTimeOriginal = ascii(entry) }
            }
        }
        return fields
    }

    /// EXIF says ASCII, but writers put UTF-8 there (exiftool, phones) and
    /// older ones Latin-1: UTF-8 when the bytes are valid UTF-8, else Latin-1.
    static func decodeText(_ bytes: [UInt8]) -> String {
        if let s = String(validating: bytes, as: UTF8.self) { return s }
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }

    // MARK: - XMP

    /// JPEG: the APP1 segment that starts with XMP's namespace and a NUL.
    static func jpegXMP(_ v: ByteView) -> Range<Int>? {
        let header: StaticString = "http://ns.adobe.com/xap/1.0/\0"
        var i = 2
        while let marker0 = v.u8(i), let marker = v.u8(i + 1) {
            guard marker0 == 0xFF else { return nil }
            if marker == 0xFF { i += 1; continue }
            i += 2
            switch marker {
            case 0x01, 0xD0...0xD8: continue
            case 0xD9, 0xDA: return nil
            default: break
            }
            guard let length = v.u16(i, bigEndian: true), length >= 2,
                  let end = v.offset(i, Int(length)), end <= v.count else { return nil }
            let payload = (i + 2)..<end
            if marker == 0xE1, payload.count > header.utf8CodeUnitCount, v.matches(header, at: payload.lowerBound) {
                return (payload.lowerBound + header.utf8CodeUnitCount)..<end
            }
            i = end
        }
        return nil
    }

    /// PNG: an uncompressed iTXt chunk with the keyword "XML:com.adobe.xmp".
    static func pngXMP(_ v: ByteView) -> Range<Int>? {
        var i = 8
        while let length32 = v.u32(i, bigEndian: true) {
            guard length32 <= 0x7FFF_FFFF, let dataStart = v.offset(i, 8),
                  let dataEnd = v.offset(dataStart, Int(length32)), dataEnd <= v.count else { return nil }
            if v.matches("iTXt", at: i + 4), v.matches("XML:com.adobe.xmp\0", at: dataStart) {
                // Keyword, NUL, compression flag and method, language tag NUL, translated keyword NUL, text.
                var p = dataStart + 18
                guard v.u8(p) == 0 else { return nil }   // compressed XMP is not read
                p += 2
                for _ in 0..<2 {
                    while p < dataEnd, v.u8(p) != 0 { p += 1 }
                    p += 1
                }
                return p <= dataEnd ? p..<dataEnd : nil
            }
            if v.matches("IEND", at: i + 4) { return nil }
            guard let next = v.offset(dataEnd, 4) else { return nil }
            i = next
        }
        return nil
    }

    /// WebP: the "XMP " chunk.
    static func webpXMP(_ v: ByteView) -> Range<Int>? {
        var i = 12
        while let size32 = v.u32(i + 4, bigEndian: false) {
            guard let dataStart = v.offset(i, 8), let size = Int(exactly: size32),
                  let dataEnd = v.offset(dataStart, size), dataEnd <= v.count else { return nil }
            if v.matches("XMP ", at: i) { return dataStart..<dataEnd }
            guard let next = v.offset(dataEnd, size & 1) else { return nil }
            i = next
        }
        return nil
    }

    /// dc:description's text: the `x-default` entry of its rdf:Alt, else its
    /// first entry, else the element's own text, or the attribute form
    /// `dc:description="..."`. XML entities are decoded.
    static func xmpDescription(_ xml: String) -> String? {
        if let open = xml.firstRange(of: "<dc:description") {
            guard let close = xml[open.upperBound...].firstRange(of: "</dc:description>") else { return nil }
            let body = xml[open.upperBound..<close.lowerBound]
            var items: [(lang: String?, text: Substring)] = []
            var rest = body[...]
            while let li = rest.firstRange(of: "<rdf:li") {
                guard let tagEnd = rest[li.upperBound...].firstRange(of: ">"),
                      let liEnd = rest[tagEnd.upperBound...].firstRange(of: "</rdf:li>") else { break }
                let attributes = rest[li.upperBound..<tagEnd.lowerBound]
                let lang = attributes.firstRange(of: "xml:lang=\"").flatMap { a in
                    attributes[a.upperBound...].split(separator: "\"", maxSplits: 1).first.map(String.init)
                }
                items.append((lang, rest[tagEnd.upperBound..<liEnd.lowerBound]))
                rest = rest[liEnd.upperBound...]
            }
            if let chosen = items.first(where: { $0.lang == "x-default" }) ?? items.first {
                return unescape(chosen.text)
            }
            guard let gt = body.firstIndex(of: ">") else { return nil }
            return unescape(body[body.index(after: gt)...])
        }
        if let attribute = xml.firstRange(of: "dc:description=\"") {
            return xml[attribute.upperBound...].split(separator: "\"", maxSplits: 1).first.map { unescape($0) }
        }
        return nil
    }

    static func unescape(_ s: Substring) -> String {
        var out = ""
        var rest = s
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            guard let semi = rest[amp...].firstIndex(of: ";"), rest.distance(from: amp, to: semi) <= 10 else {
                out += "&"
                rest = rest[rest.index(after: amp)...]
                continue
            }
            let name = rest[rest.index(after: amp)..<semi]
            let named = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'"]
            if let n = named[String(name)] {
                out += n
            } else if name.hasPrefix("#x") || name.hasPrefix("#X"), let v = UInt32(name.dropFirst(2), radix: 16),
                      let scalar = Unicode.Scalar(v) {
                out.unicodeScalars.append(scalar)
            } else if name.hasPrefix("#"), let v = UInt32(name.dropFirst()), let scalar = Unicode.Scalar(v) {
                out.unicodeScalars.append(scalar)
            } else {
                out += rest[amp...semi]
            }
            rest = rest[rest.index(after: semi)...]
        }
        return out + rest
    }

    /// Up to `limit` bytes from the start of a regular file; nil if it cannot be read.
    static func readPrefix(path: String, limit: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return readBytes(from: fd, upTo: min(limit, Int(info.st_size)))
    }
}

/// Up to `limit` bytes read from `fd` where it stands (fewer at its end or
/// on an error), reading again after EINTR and short reads.
public func readBytes(from fd: Int32, upTo limit: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: max(limit, 0))
    var filled = 0
    while filled < bytes.count {
        let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, $0.count - filled) }
        if n < 0, errno == EINTR { continue }
        if n <= 0 { break }
        filled += n
    }
    bytes.removeLast(bytes.count - filled)
    return bytes
}

extension ByteView {
    /// The window's bytes as text (UTF-8, invalid sequences replaced).
    var string: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        for i in 0..<count { bytes.append(u8(i)!) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first?.isWhitespace == true { s.removeFirst() }
        while s.last?.isWhitespace == true { s.removeLast() }
        return String(s)
    }
}
