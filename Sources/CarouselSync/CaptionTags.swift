/// A synced picture's caption, from its source's records (Immich's
/// description and date taken), written into the JPEG where carouseld's
/// caption reader finds them: an EXIF segment with DateTimeOriginal and an
/// XMP segment with dc:description, right after the start of the image.
/// They come before whatever the file holds, so they win over it.
public struct CaptionTags: Equatable, Sendable {
    /// "YYYY:MM:DD HH:MM:SS", EXIF's form.
    public var dateTaken: String?
    public var description: String?
    /// Faces the source recognised (Immich's faces API), written as MWG
    /// regions beside the description: what `fit = cover` and Ken Burns keep.
    public var faces: [FaceTag] = []

    public init(dateTaken: String?, description: String?, faces: [FaceTag] = []) {
        self.dateTaken = dateTaken
        self.description = description
        self.faces = faces
    }

    /// A face: its box's centre and size as fractions of the picture as it
    /// is shown, and the person's name if the source knows it.
    public struct FaceTag: Equatable, Sendable {
        public var x: Double, y: Double, width: Double, height: Double
        public var name: String?

        public init(x: Double, y: Double, width: Double, height: Double, name: String? = nil) {
            (self.x, self.y, self.width, self.height, self.name) = (x, y, width, height, name)
        }

        /// From a box in pixels of an image `imageWidth` x `imageHeight` (Immich's
        /// boundingBoxX1...Y2 over the image its faces were found in); nil for
        /// a box that is empty or not inside that image.
        public init?(x1: Int, y1: Int, x2: Int, y2: Int, imageWidth: Int, imageHeight: Int, name: String?) {
            guard imageWidth > 0, imageHeight > 0, x2 > x1, y2 > y1, x1 >= 0, y1 >= 0,
                  x2 <= imageWidth, y2 <= imageHeight else { return nil }
            let w = Double(imageWidth), h = Double(imageHeight)
            self.init(x: Double(x1 + x2) / 2 / w, y: Double(y1 + y2) / 2 / h, width: Double(x2 - x1) / w,
                      height: Double(y2 - y1) / h, name: name.flatMap { $0.isEmpty ? nil : $0 })
        }
    }

    /// The most faces written into one picture (a crowd needs no more to be framed).
    public static let maximumFaces = 64

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
        if description?.isEmpty == false || !faces.isEmpty { out += Self.xmpSegment(description ?? "", faces: faces) }
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

    /// APP1 XMP with dc:description (its x-default entry), as Immich and
    /// Lightroom write it, and the faces as MWG regions (mwg-rs:Regions, an
    /// area's x and y its centre, all normalized), as digiKam and Lightroom do.
    static func xmpSegment(_ description: String, faces: [FaceTag] = []) -> [UInt8] {
        let text = escaped(description, limit: 4000)
        var regions = ""
        if !faces.isEmpty {
            func n(_ v: Double) -> String {
                let k = Int((min(max(v, 0), 1) * 10_000).rounded())
                let digits = String(k)
                return k == 10_000 ? "1" : "0." + String(repeating: "0", count: 4 - digits.count) + digits
            }
            regions = "<mwg-rs:Regions rdf:parseType=\"Resource\"><mwg-rs:RegionList><rdf:Bag>"
            for face in faces.prefix(maximumFaces) {
                regions += "<rdf:li rdf:parseType=\"Resource\"><mwg-rs:Type>Face</mwg-rs:Type>"
                if let name = face.name { regions += "<mwg-rs:Name>\(escaped(name, limit: 200))</mwg-rs:Name>" }
                regions += "<mwg-rs:Area stArea:x=\"\(n(face.x))\" stArea:y=\"\(n(face.y))\" stArea:w=\"\(n(face.width))\" "
                    + "stArea:h=\"\(n(face.height))\" stArea:unit=\"normalized\"/></rdf:li>"
            }
            regions += "</rdf:Bag></mwg-rs:RegionList></mwg-rs:Regions>"
        }
        let packet = "<?xpacket begin=\"\u{FEFF}\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>"
            + "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">"
            + "<rdf:Description rdf:about=\"\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\""
            + (faces.isEmpty ? "" : " xmlns:mwg-rs=\"http://www.metadataworkinggroup.com/schemas/regions/\""
                + " xmlns:stArea=\"http://ns.adobe.com/xmp/sType/Area#\"") + ">"
            + (text.isEmpty ? "" : "<dc:description><rdf:Alt><rdf:li xml:lang=\"x-default\">\(text)</rdf:li></rdf:Alt></dc:description>")
            + regions
            + "</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end=\"w\"?>"
        let payload = Array("http://ns.adobe.com/xap/1.0/".utf8) + [0] + Array(packet.utf8)
        return [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
    }

    /// Text as XML character data, control characters left out, cut at
    /// `limit` bytes (a segment holds at most 64 KB; a caption needs far less).
    static func escaped(_ description: String, limit: Int) -> String {
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
            if text.utf8.count > limit { break }
        }
        return text
    }
}
