extension ImageShape {
    /// The first image descriptor, reached as giflib reaches it (the
    /// screen descriptor, its colour table, extensions by their
    /// sub-blocks); the canvas is the screen grown to hold that frame, as
    /// `GIFReader` draws it.
    static func gif(_ r: inout HeaderReader) -> PixelSize? {
        guard let screenWidth = r.u16(6, bigEndian: false), let screenHeight = r.u16(8, bigEndian: false),
              let packed = r.byte(10) else { return nil }
        var i = 13
        if packed & 0x80 != 0 { i += 3 << (Int(packed & 7) + 1) }
        while true {
            guard let record = r.byte(i) else { return nil }
            switch record {
            case 0x21:  // extension: label, then sub-blocks up to an empty one
                i += 2
                while true {
                    guard let count = r.byte(i) else { return nil }
                    i += 1 + Int(count)
                    if count == 0 { break }
                }
            case 0x2C:  // image descriptor: left, top, width, height
                guard let left = r.u16(i + 1, bigEndian: false), let top = r.u16(i + 3, bigEndian: false),
                      let width = r.u16(i + 5, bigEndian: false), let height = r.u16(i + 7, bigEndian: false),
                      width > 0, height > 0 else { return nil }
                return PixelSize(width: max(Int(screenWidth), Int(left) + Int(width)),
                                 height: max(Int(screenHeight), Int(top) + Int(height)))
            default:
                return nil  // the trailer before any frame, or not a record
            }
        }
    }
}
