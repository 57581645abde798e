extension ImageShape {
    /// The primary item (`pitm`) and its properties (`iprp`: `ipco`, and
    /// the first `ipma` entry for the item, in order), as libheif reads
    /// them: the picture is the item's `ispe` (a grid item's is the grid's
    /// output size), then turned by `irot` and cropped by `clap` in their
    /// order, as `heif_decode_image` applies them (`imir` keeps the size).
    /// EXIF is never read: the decoder does not turn HEIF by it.
    static func heif(_ r: inout HeaderReader) -> PixelSize? {
        guard let meta = metaBox(&r) else { return nil }
        return meta.withUnsafeBytes { raw -> PixelSize? in
            let v = ByteView(raw)
            // meta is a FullBox: 4 bytes of version and flags before its children.
            guard let metaHeader = boxHeader(v, at: 0, end: v.count) else { return nil }
            let children = boxes(v, from: metaHeader.header + 4, to: v.count)
            guard let pitm = children.first(where: { $0.type == "pitm" }),
                  let iprp = children.first(where: { $0.type == "iprp" }),
                  let pitmVersion = v.u8(pitm.payload.lowerBound) else { return nil }
            let primary: UInt32?
            if pitmVersion == 0 {
                primary = v.u16(pitm.payload.lowerBound + 4, bigEndian: true).map(UInt32.init)
            } else {
                primary = v.u32(pitm.payload.lowerBound + 4, bigEndian: true)
            }
            guard let primary else { return nil }
            let properties = boxes(v, from: iprp.payload.lowerBound, to: iprp.payload.upperBound)
            guard let ipco = properties.first(where: { $0.type == "ipco" }),
                  let ipma = properties.first(where: { $0.type == "ipma" }) else { return nil }
            let all = boxes(v, from: ipco.payload.lowerBound, to: ipco.payload.upperBound)
            guard let associated = associations(v, ipma, item: primary) else { return nil }
            let chosen = associated.compactMap { $0 == 0 ? nil : $0 }
            guard chosen.allSatisfy({ $0 <= all.count }) else { return nil }  // libheif refuses the file
            let properties2 = chosen.map { all[$0 - 1] }
            // The coded picture: the last ispe.
            var coded: PixelSize?
            for box in properties2 where box.type == "ispe" {
                let p = box.payload.lowerBound
                guard let w = v.u32(p + 4, bigEndian: true), let h = v.u32(p + 8, bigEndian: true),
                      let width = Int(exactly: w), let height = Int(exactly: h) else { return nil }
                coded = PixelSize(width: width, height: height)
            }
            guard var size = coded else { return nil }
            for box in properties2 {
                switch box.type {
                case "irot":
                    guard let angle = v.u8(box.payload.lowerBound) else { return nil }
                    if angle & 1 == 1 { size = size.transposed }
                case "clap":
                    guard let cropped = cleanAperture(v, box.payload.lowerBound, of: size) else { return nil }
                    size = cropped
                default:
                    break
                }
            }
            return size
        }
    }

    /// The top-level `meta` box, read whole (at most `maxBlockBytes`).
    static func metaBox(_ r: inout HeaderReader) -> [UInt8]? {
        var i = 0
        while true {
            guard let box = r.boxHeader(at: i, end: r.size) else { return nil }
            if box.type == "meta" {
                guard box.size <= maxBlockBytes else { return nil }
                return r.read(i, box.size)
            }
            i += box.size
        }
    }

    /// The property indices (1-based, 0 for none) of the first `ipma` entry
    /// for `item`.
    private static func associations(_ v: ByteView, _ ipma: Box, item: UInt32) -> [Int]? {
        let p = ipma.payload.lowerBound
        guard let version = v.u8(p), let flags = v.u8(p + 3), let count = v.u32(p + 4, bigEndian: true) else { return nil }
        let wideIndices = flags & 1 == 1
        var i = p + 8
        for _ in 0..<count {
            let id: UInt32?
            if version < 1 {
                id = v.u16(i, bigEndian: true).map(UInt32.init)
                i += 2
            } else {
                id = v.u32(i, bigEndian: true)
                i += 4
            }
            guard let id, let n = v.u8(i) else { return nil }
            i += 1
            var indices: [Int] = []
            for _ in 0..<n {
                if wideIndices {
                    guard let value = v.u16(i, bigEndian: true) else { return nil }
                    indices.append(Int(value & 0x7FFF))
                    i += 2
                } else {
                    guard let value = v.u8(i) else { return nil }
                    indices.append(Int(value & 0x7F))
                    i += 1
                }
            }
            if id == item { return indices }
            guard i <= ipma.payload.upperBound else { return nil }
        }
        return nil
    }

    /// A clean aperture centred as ISO/IEC 14496-12 12.1.4 says, for the
    /// plain case only: whole-pixel sizes and offsets, the crop falling on
    /// whole pixels inside the picture. libheif rounds the other cases its
    /// own way (which changed between versions): nil for them.
    private static func cleanAperture(_ v: ByteView, _ p: Int, of size: PixelSize) -> PixelSize? {
        var values: [Int] = []
        for k in 0..<8 {
            guard let value = v.u32(p + 4 * k, bigEndian: true) else { return nil }
            values.append(Int(Int32(bitPattern: value)))
        }
        func whole(_ n: Int, _ d: Int) -> Int? { d > 0 && n % d == 0 ? n / d : nil }
        guard let width = whole(values[0], values[1]), let height = whole(values[2], values[3]),
              let dx = whole(values[4], values[5]), let dy = whole(values[6], values[7]),
              width > 0, height > 0, (size.width - width) % 2 == 0, (size.height - height) % 2 == 0 else { return nil }
        let left = dx + (size.width - width) / 2, top = dy + (size.height - height) / 2
        guard left >= 0, top >= 0, left + width <= size.width, top + height <= size.height else { return nil }
        return PixelSize(width: width, height: height)
    }

    struct Box {
        var type: String
        /// Where the box starts, its whole size and its header's length.
        var start: Int, size: Int, header: Int
        var payload: Range<Int> { (start + header)..<(start + size) }
    }

    /// The box at `offset` (size 1: a 64-bit size follows; size 0: to
    /// `end`; `uuid`: 16 more bytes of type), if it fits before `end`.
    static func boxHeader(_ v: ByteView, at offset: Int, end: Int) -> Box? {
        guard let size32 = v.u32(offset, bigEndian: true), let t = v.u32(offset + 4, bigEndian: true) else { return nil }
        var header = 8
        guard var size = Int(exactly: size32) else { return nil }
        if size32 == 1 {
            guard let high = v.u32(offset + 8, bigEndian: true), high == 0,
                  let low = v.u32(offset + 12, bigEndian: true), let low = Int(exactly: low) else { return nil }
            size = low
            header = 16
        } else if size32 == 0 {
            size = end - offset
        }
        let type = fourCC(t)
        if type == "uuid" { header += 16 }
        guard size >= header, size <= end - offset else { return nil }
        return Box(type: type, start: offset, size: size, header: header)
    }

    /// The boxes that follow each other in `from..<to`, as far as they fit.
    static func boxes(_ v: ByteView, from: Int, to: Int) -> [Box] {
        var result: [Box] = []
        var i = from
        while i < to, let box = boxHeader(v, at: i, end: to) {
            result.append(box)
            i += box.size
        }
        return result
    }

    static func fourCC(_ value: UInt32) -> String {
        String(decoding: [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)],
               as: UTF8.self)
    }
}
