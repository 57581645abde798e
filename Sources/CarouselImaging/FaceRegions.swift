/// A face (or a pet's head) that a person or a program marked in a picture:
/// a rectangle of the upright picture (after its EXIF orientation, as it is
/// shown), each coordinate a fraction of the picture's side, clamped to it.
public struct FaceRegion: Equatable, Sendable, CustomStringConvertible {
    /// The left and top edges, and the size.
    public var x: Double, y: Double, width: Double, height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        (self.x, self.y, self.width, self.height) = (x, y, width, height)
    }

    /// A region from its centre and size (MWG's `stArea`), clamped to the
    /// picture; nil when nothing of it is inside or a number is not one.
    init?(centerX: Double, centerY: Double, width: Double, height: Double) {
        self.init(left: centerX - width / 2, top: centerY - height / 2, width: width, height: height)
    }

    /// A region from its corner and size (Microsoft's `MPReg:Rectangle`),
    /// clamped to the picture; nil when nothing of it is inside.
    public init?(left: Double, top: Double, width: Double, height: Double) {
        guard left.isFinite, top.isFinite, width.isFinite, height.isFinite, width > 0, height > 0 else { return nil }
        let x0 = max(0, left), y0 = max(0, top), x1 = min(1, left + width), y1 = min(1, top + height)
        guard x1 > x0, y1 > y0 else { return nil }
        self.init(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    public var maxX: Double { x + width }
    public var maxY: Double { y + height }
    public var centerX: Double { x + width / 2 }
    public var centerY: Double { y + height / 2 }

    public var description: String {
        func f(_ v: Double) -> String { String(Double(Int((v * 1000).rounded())) / 1000) }
        return "(\(f(x)),\(f(y)) \(f(width))x\(f(height)))"
    }
}

/// Face regions in a picture's XMP: the Metadata Working Group's
/// `mwg-rs:RegionInfo` (digiKam, Lightroom, Picasa, darktable; regions of
/// type `Face` or `Pet`, `stArea` a normalized centre and size) and
/// Microsoft's `MP:RegionInfo` (Windows Photo Gallery; `MPReg:Rectangle` a
/// normalized corner and size). MWG's regions are for the picture as it is
/// shown (after its orientation); so are Microsoft's.
///
/// A tolerant scan, not an XML parser: fields are found in their attribute
/// (`stArea:x="0.5"`) or element (`<stArea:x>0.5</stArea:x>`) form inside
/// each `rdf:li` of the region list. Bounded by the XMP's own length (the
/// callers read at most `ImageMetadata.readLimit` bytes) and by
/// `maximumRegions`; values that are not numbers, regions of another unit
/// than `normalized`, and regions wholly outside the picture are left out.
public enum FaceRegions {
    /// More regions than any photo of people has; the rest are not read.
    public static let maximumRegions = 256

    public static func parse(_ xml: String) -> [FaceRegion] {
        var found: [FaceRegion] = []
        if let list = section(xml, "mwg-rs:RegionList") {
            for item in items(list) where found.count < maximumRegions {
                let type = field("mwg-rs:Type", in: item)
                guard type == nil || type == "Face" || type == "Pet" else { continue }
                guard let area = section(item, "mwg-rs:Area") ?? Optional(item) else { continue }
                if let unit = field("stArea:unit", in: area) ?? field("stArea:unit", in: item), unit != "normalized" { continue }
                guard let x = number("stArea:x", area), let y = number("stArea:y", area),
                      let w = number("stArea:w", area), let h = number("stArea:h", area),
                      let region = FaceRegion(centerX: x, centerY: y, width: w, height: h) else { continue }
                found.append(region)
            }
        }
        if let list = section(xml, "MPRI:Regions") {
            for item in items(list) where found.count < maximumRegions {
                guard let rectangle = field("MPReg:Rectangle", in: item) else { continue }
                let parts = rectangle.split(separator: ",").map { Double($0.trimmingCharacters(in: " ")) }
                guard parts.count == 4, let l = parts[0], let t = parts[1], let w = parts[2], let h = parts[3],
                      let region = FaceRegion(left: l, top: t, width: w, height: h) else { continue }
                found.append(region)
            }
        }
        return found
    }

    /// What an element holds: from its start tag to its end tag (or, for an
    /// element that closes itself, its start tag alone).
    static func section(_ text: Substring, _ name: String) -> Substring? {
        guard let open = text.firstRange(of: "<" + name) else { return nil }
        // The name must end there: `<mwg-rs:Area` is not `<mwg-rs:AreaX`.
        guard let next = text[open.upperBound...].first, next == " " || next == ">" || next == "/" || next == "\n"
                || next == "\t" || next == "\r" else { return nil }
        if let close = text[open.upperBound...].firstRange(of: "</" + name + ">") {
            return text[open.lowerBound..<close.upperBound]
        }
        guard let end = text[open.upperBound...].firstIndex(of: ">") else { return nil }
        return text[open.lowerBound...end]
    }

    static func section(_ text: String, _ name: String) -> Substring? { section(text[...], name) }

    /// The stretches that start at each `<rdf:li` of `list`.
    static func items(_ list: Substring) -> [Substring] {
        var starts: [Substring.Index] = []
        var rest = list
        while let li = rest.firstRange(of: "<rdf:li") {
            starts.append(li.lowerBound)
            rest = list[li.upperBound...]
        }
        return starts.indices.map { i in list[starts[i]..<(i + 1 < starts.count ? starts[i + 1] : list.endIndex)] }
    }

    /// A field's text, in its attribute form (either quote) or its element form.
    static func field(_ name: String, in text: Substring) -> Substring? {
        for quote in ["\"", "'"] {
            if let a = text.firstRange(of: name + "=" + quote) {
                return text[a.upperBound...].split(separator: Character(quote), maxSplits: 1,
                                                   omittingEmptySubsequences: false).first
            }
        }
        if let open = text.firstRange(of: "<" + name + ">"),
           let close = text[open.upperBound...].firstRange(of: "</" + name + ">") {
            return text[open.upperBound..<close.lowerBound]
        }
        return nil
    }

    static func number(_ name: String, _ text: Substring) -> Double? {
        field(name, in: text).flatMap { Double($0.trimmingCharacters(in: " \n\t\r")) }.flatMap { $0.isFinite ? $0 : nil }
    }
}

extension Substring {
    func trimmingCharacters(in set: String) -> Substring {
        var s = self
        while let c = s.first, set.contains(c) { s.removeFirst() }
        while let c = s.last, set.contains(c) { s.removeLast() }
        return s
    }
}

/// What of a picture to keep in view when not all of it fits, by its faces:
/// the `fit = cover` crop, and where Ken Burns starts and ends.
public enum FaceFraming {
    /// Room kept around a face on each side, as a fraction of its own size,
    /// where there is room: a face region is the face, and the hair and the
    /// chin around it belong to the head.
    public static let margin = 0.25

    /// The stretch to keep in view of a picture `length` long, through a
    /// window `window` long, given the faces' spans along that axis
    /// (fractions of the picture): every face when they fit, else the
    /// largest group that does (ties: the larger faces, then the group
    /// nearer the picture's centre); with margins when the window has room
    /// for them. Units of `length`; nil without faces.
    public static func keep(_ faces: [(start: Double, end: Double)], length: Double,
                            window: Double) -> (start: Double, end: Double)? {
        let spans = faces.map { (start: $0.start * length, end: $0.end * length) }.sorted { $0.start < $1.start }
        guard !spans.isEmpty, length > 0, window > 0 else { return nil }
        var best: (count: Int, size: Double, offCentre: Double, start: Double, end: Double)?
        // A window holding some faces can slide right until its left edge
        // meets the first of them: every best group starts at a face.
        for candidate in spans {
            let inside = spans.filter { $0.start >= candidate.start && $0.end <= candidate.start + window }
            guard !inside.isEmpty else { continue }
            let start = inside.map(\.start).min()!, end = inside.map(\.end).max()!
            let size = inside.reduce(0) { $0 + ($1.end - $1.start) }
            let offCentre = abs((start + end) / 2 - length / 2)
            if let b = best, (b.count, b.size, -b.offCentre) >= (inside.count, size, -offCentre) { continue }
            best = (inside.count, size, offCentre, start, end)
        }
        guard let best else {
            // No face fits the window by itself: the largest one's middle.
            let largest = spans.max { $0.end - $0.start < $1.end - $1.start }!
            let middle = (largest.start + largest.end) / 2
            return (middle - window / 2, middle + window / 2)
        }
        let grown = spans.filter { $0.start >= best.start && $0.end <= best.end }.reduce((start: best.start, end: best.end)) {
            let m = margin * ($1.end - $1.start)
            return (min($0.start, max(0, $1.start - m)), max($0.end, min(length, $1.end + m)))
        }
        return grown.end - grown.start <= window ? grown : (best.start, best.end)
    }

    /// Where a crop of `window` pixels starts in a picture scaled to
    /// `scaled` pixels along the axis it is cropped on: the centred crop,
    /// moved as little as keeps in view what `keep` chooses.
    static func cropStart(_ faces: [(Double, Double)], scaled: Int, window: Int) -> Int {
        let centred = (scaled - window + 1) / 2   // as `placement` centres: the extra pixel right/below
        guard let kept = keep(faces.map { (start: $0.0, end: $0.1) }, length: Double(scaled), window: Double(window)) else {
            return centred
        }
        let latest = min(Int(kept.start.rounded(.down)), scaled - window)
        let earliest = max(Int((kept.end - Double(window)).rounded(.up)), 0)
        return min(max(centred, earliest), max(latest, earliest))
    }
}
