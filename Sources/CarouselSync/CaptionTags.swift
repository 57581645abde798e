/// A synced picture's caption, from its source's records (Immich's
/// description and date taken), written into the JPEG where carouseld's
/// caption reader finds them: an EXIF segment with DateTimeOriginal and an
/// XMP segment with dc:description, right after the start of the image.
/// They come before whatever the file holds, so they win over it.
public struct CaptionTags: Equatable, Sendable {
    /// "YYYY:MM:DD HH:MM:SS", EXIF's form.
    public var dateTaken: String?
    public var description: String?

    public init(dateTaken: String?, description: String?) {
        self.dateTaken = dateTaken
        self.description = description
    }

    /// From an ISO 8601 time such as 2024-06-30T14:32:10.000Z (the clock's
    /// reading as recorded; no zone conversion, as a camera's EXIF has none).
    public static func exifDate(iso: String) -> String? {
        let digits = iso.split(whereSeparator: { !$0.isNumber }).prefix(6).map { Int($0) }
        guard digits.count >= 3, let y = digits[0], let m = digits[1], let d = digits[2],
              (1...9999).contains(y), (1...12).contains(m), (1...31).contains(d) else { return nil }
        let rest = digits.dropFirst(3).map { $0 ?? 0 } + [0, 0, 0]
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let year = String(repeating: "0", count: 4 - String(y).count) + String(y)
        return "\(year):\(two(m)):\(two(d)) \(two(rest[0])):\(two(rest[1])):\(two(rest[2]))"
    }

    /// The bytes to insert after a JPEG's SOI: the segments, or none. An
    /// EXIF segment (the date) only `withDate`: a file with EXIF of its own
    /// (an original) keeps it, since the reader takes the first and its
    /// Orientation must not be hidden (the picture would lie on its side).
    public func jpegSegments(withDate: Bool) -> [UInt8] {
        var out: [UInt8] = []
        if withDate, let date = dateTaken, date.utf8.count == 19 { out += Self.exifSegment(date) }
        if let description, !description.isEmpty { out += Self.xmpSegment(description) }
        return out
    }

    /// APP1 "Exif": a big-endian TIFF with IFD0 pointing to an Exif IFD that holds DateTimeOriginal.
    static func exifSegment(_ date: String) -> [UInt8] {
        var tiff: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8]
        func u16(_ v: Int) { tiff += [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func u32(_ v: Int) { tiff += [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        // IFD0 at 8: one entry, the Exif IFD's offset (26).
        u16(1); u16(0x8769); u16(4); u32(1); u32(26); u32(0)
        // The Exif IFD at 26: DateTimeOriginal, 20 ASCII bytes at 44.
        u16(1); u16(0x9003); u16(2); u32(20); u32(44); u32(0)
        tiff += Array(date.utf8) + [0]
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        return [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
    }

    /// APP1 XMP with dc:description (its x-default entry), as Immich and Lightroom write it.
    static func xmpSegment(_ description: String) -> [UInt8] {
        var text = ""
        for scalar in description.unicodeScalars {
            switch scalar {
            case "&": text += "&amp;"
            case "<": text += "&lt;"
            case ">": text += "&gt;"
            case "\"": text += "&quot;"
            default:
                // Control characters other than tab and newlines are not XML.
                if scalar.value < 0x20, scalar != "\t", scalar != "\n", scalar != "\r" { continue }
                text.unicodeScalars.append(scalar)
            }
            // A segment holds at most 64 KB; a caption needs far less.
            if text.utf8.count > 4000 { break }
        }
        let packet = "<?xpacket begin=\"\u{FEFF}\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>"
            + "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">"
            + "<rdf:Description rdf:about=\"\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\">"
            + "<dc:description><rdf:Alt><rdf:li xml:lang=\"x-default\">\(text)</rdf:li></rdf:Alt></dc:description>"
            + "</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end=\"w\"?>"
        let payload = Array("http://ns.adobe.com/xap/1.0/".utf8) + [0] + Array(packet.utf8)
        return [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
    }
}
