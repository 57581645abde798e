extension ImageShape {
    /// The most bytes of an XMP item read: as much as a JPEG's prefix gives.
    static let maxXMPBytes = 512 * 1024

    /// A HEIF or AVIF file's XMP: the item `iinf` says is of type `mime`
    /// with content type `application/rdf+xml`, read where `iloc` puts it
    /// (in the file, construction method 0, or in `meta`'s `idat`, method
    /// 1), its extents joined. nil when there is none, or when a length or
    /// an offset is past the file, `maxXMPBytes` or the read caps.
    static func heifXMP(_ r: inout HeaderReader) -> [UInt8]? {
        guard r.loadHead(), let meta = metaBox(&r) else { return nil }
        let found = meta.withUnsafeBytes { raw -> (extents: [(offset: Int, length: Int)], inIdat: Range<Int>?)? in
            let v = ByteView(raw)
            guard let metaHeader = boxHeader(v, at: 0, end: v.count) else { return nil }
            let children = boxes(v, from: metaHeader.header + 4, to: v.count)
            guard let iinf = children.first(where: { $0.type == "iinf" }),
                  let iloc = children.first(where: { $0.type == "iloc" }),
                  let item = xmpItem(v, iinf), let located = location(v, iloc, item: item) else { return nil }
            if located.method == 1 {
                guard let idat = children.first(where: { $0.type == "idat" }) else { return nil }
                return (located.extents, idat.payload)
            }
            return located.method == 0 ? (located.extents, nil) : nil
        }
        guard let found, !found.extents.isEmpty else { return nil }
        var bytes: [UInt8] = []
        for extent in found.extents {
            guard extent.length > 0, extent.length <= maxXMPBytes - bytes.count else { return nil }
            if let idat = found.inIdat {
                guard extent.offset >= 0, extent.offset <= idat.count - extent.length else { return nil }
                meta.withUnsafeBytes { raw in
                    bytes += raw[(idat.lowerBound + extent.offset)..<(idat.lowerBound + extent.offset + extent.length)]
                }
            } else {
                guard let part = r.read(extent.offset, extent.length) else { return nil }
                bytes += part
            }
        }
        return bytes
    }

    /// The ID of the first `infe` (version 2 or 3) of type `mime` whose
    /// content type is `application/rdf+xml`.
    private static func xmpItem(_ v: ByteView, _ iinf: Box) -> UInt32? {
        let p = iinf.payload.lowerBound
        guard let version = v.u8(p) else { return nil }
        let first = p + 4 + (version == 0 ? 2 : 4)
        for infe in boxes(v, from: first, to: iinf.payload.upperBound) where infe.type == "infe" {
            let q = infe.payload.lowerBound
            guard let infeVersion = v.u8(q), infeVersion == 2 || infeVersion == 3 else { continue }
            let id: UInt32?
            var i = q + 4
            if infeVersion == 2 {
                id = v.u16(i, bigEndian: true).map(UInt32.init)
                i += 2
            } else {
                id = v.u32(i, bigEndian: true)
                i += 4
            }
            i += 2  // item_protection_index
            guard let id, v.matches("mime", at: i) else { continue }
            i += 4
            // item_name, then content_type: NUL-terminated.
            let end = infe.payload.upperBound
            while i < end, v.u8(i) != 0 { i += 1 }
            i += 1
            let type: StaticString = "application/rdf+xml\0"
            if i + type.utf8CodeUnitCount <= end, v.matches(type, at: i) { return id }
        }
        return nil
    }

    /// Where item `item` lies: its construction method and extents (offsets
    /// with the base offset added), from `iloc` versions 0 to 2.
    private static func location(_ v: ByteView, _ iloc: Box, item: UInt32) -> (method: Int, extents: [(offset: Int, length: Int)])? {
        let p = iloc.payload.lowerBound
        guard let version = v.u8(p), version <= 2, let sizes = v.u8(p + 4), let sizes2 = v.u8(p + 5) else { return nil }
        let offsetSize = Int(sizes >> 4), lengthSize = Int(sizes & 15), baseSize = Int(sizes2 >> 4)
        let indexSize = version == 0 ? 0 : Int(sizes2 & 15)
        guard [0, 4, 8].contains(offsetSize), [0, 4, 8].contains(lengthSize), [0, 4, 8].contains(baseSize),
              [0, 4, 8].contains(indexSize) else { return nil }
        var i = p + 6
        /// An unsigned field of `size` bytes (0: zero), advancing `i`; nil past the box or above Int's range.
        func read(_ size: Int) -> Int? {
            var value = 0
            for _ in 0..<size {
                guard i < iloc.payload.upperBound, let b = v.u8(i), value >> 55 == 0 else { return nil }
                value = value << 8 | Int(b)
                i += 1
            }
            return value
        }
        guard let count = read(version < 2 ? 2 : 4) else { return nil }
        for _ in 0..<count {
            guard let id = read(version < 2 ? 2 : 4) else { return nil }
            var method = 0
            if version >= 1 {
                guard let m = read(2) else { return nil }
                method = m & 15
            }
            guard read(2) != nil, let base = read(baseSize), let extentCount = read(2) else { return nil }
            var extents: [(offset: Int, length: Int)] = []
            for _ in 0..<extentCount {
                guard read(indexSize) != nil, let offset = read(offsetSize), let length = read(lengthSize),
                      let start = v.offset(base, offset) else { return nil }
                extents.append((start, length))
            }
            if UInt32(truncatingIfNeeded: id) == item, id <= Int(UInt32.max) { return (method, extents) }
        }
        return nil
    }
}
