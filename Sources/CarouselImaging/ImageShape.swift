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
        return probe(&reader)
    }

    /// The same for a file held in memory (tests and the fuzz targets): read
    /// through the same windows and caps as a file.
    public static func uprightSize(bytes: UnsafeRawBufferPointer) -> PixelSize? {
        guard let base = bytes.baseAddress, bytes.count > 0, bytes.count <= ImageDecoder.maxFileBytes else { return nil }
        var reader = HeaderReader(size: bytes.count) { buffer, offset in
            let n = max(0, min(buffer.count, bytes.count - offset))
            buffer.baseAddress!.copyMemory(from: base + offset, byteCount: n)
            return n
        }
        return probe(&reader)
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

    // MARK: JPEG

    /// The first frame header (SOFn), reached as libjpeg reaches it: bytes
    /// that are not a marker are skipped (libjpeg warns and goes on),
    /// standalone markers carry no length, every other segment is skipped
    /// by its length. The EXIF orientation is then `ExifReader`'s.
    ///
    /// While the walk meets only well-formed segments it is `ExifReader`'s
    /// walk too, so the EXIF segment is noted on the way and the second
    /// walk, for the orientation, starts after the frame header: a file's
    /// segments past the first 64 KiB are read once.
    static func jpeg(_ r: inout HeaderReader) -> PixelSize? {
        var i = 2
        var stored: PixelSize?
        /// ExifReader would have walked the same segments so far.
        var plain = true
        var exifSegment: Int?
        var afterFrameHeader = 0
        while stored == nil {
            // libjpeg's next_marker: skip to an FF, past fill FFs; FF 00 is data.
            guard var byte = r.byte(i) else { return nil }
            if byte != 0xFF { plain = false }
            while true {
                while byte != 0xFF {
                    i += 1
                    guard let next = r.byte(i) else { return nil }
                    byte = next
                }
                while byte == 0xFF {
                    i += 1
                    guard let next = r.byte(i) else { return nil }
                    byte = next
                }
                i += 1
                if byte != 0 { break }
                plain = false
                guard let next = r.byte(i) else { return nil }
                byte = next
            }
            switch byte {
            case 0xC0...0xCF where byte != 0xC4 && byte != 0xC8 && byte != 0xCC:
                // Length (2), precision (1), height (2), width (2).
                guard let length = r.u16(i, bigEndian: true), let height = r.u16(i + 3, bigEndian: true),
                      let width = r.u16(i + 5, bigEndian: true) else { return nil }
                stored = PixelSize(width: Int(width), height: Int(height))
                afterFrameHeader = i + Int(length)
            case 0x01, 0xD0...0xD7:
                continue
            case 0xD8, 0xD9, 0xDA:
                return nil  // a second SOI, the end, or a scan before any frame header
            case 0xC4, 0xCC, 0xDB, 0xDD:
                // DHT, DAC, DQT, DRI: libjpeg reads these by their contents
                // and refuses a length that disagrees with them.
                guard let length = r.u16(i, bigEndian: true), length >= 2 else { return nil }
                i += Int(length)
            case 0xDC, 0xE0...0xEF, 0xFE:
                // DNL, APPn, COM: skipped by their length, and a bogus one
                // (under 2, counting only itself) as if it were 2.
                guard let length = r.u16(i, bigEndian: true) else { return nil }
                if length < 2 { plain = false }
                if plain, exifSegment == nil, byte == 0xE1, length >= 8, i + Int(length) <= r.size,
                   r.matches("Exif\0\0", at: i + 2) {
                    exifSegment = i
                }
                i += max(2, Int(length))
            default:
                return nil  // a marker libjpeg does not know: it stops there
            }
        }
        let orientation: ExifOrientation?
        if plain, let exifSegment {
            orientation = jpegExifSegment(&r, at: exifSegment)
        } else {
            orientation = jpegOrientation(&r, from: plain ? afterFrameHeader : 2)
        }
        guard let stored, let orientation else { return nil }
        return orientation.uprightSize(of: stored)
    }

    /// The orientation in the APP1 segment whose length field is at `i`,
    /// read by `ExifReader` on its own.
    private static func jpegExifSegment(_ r: inout HeaderReader, at i: Int) -> ExifOrientation? {
        guard let length = r.u16(i, bigEndian: true), let segment = r.read(i - 2, Int(length) + 2) else { return nil }
        return orientation(of: [0xFF, 0xD8] + segment, .jpeg)
    }

    /// `ExifReader.jpegExif`'s walk, over the reader: the first APP1 that
    /// starts "Exif\0\0" before the scan, given to `ExifReader` on its own.
    /// Nil only when the walk hit the read caps.
    static func jpegOrientation(_ r: inout HeaderReader, from start: Int) -> ExifOrientation? {
        var i = start
        while let marker0 = r.byte(i), let marker = r.byte(i + 1) {
            guard marker0 == 0xFF else { return .identity }
            if marker == 0xFF { i += 1; continue }
            i += 2
            switch marker {
            case 0x01, 0xD0...0xD8: continue
            case 0xD9, 0xDA: return .identity
            default: break
            }
            guard let length = r.u16(i, bigEndian: true), length >= 2, i + Int(length) <= r.size else {
                return r.exhausted ? nil : .identity
            }
            if marker == 0xE1, length >= 8, r.matches("Exif\0\0", at: i + 2) {
                return jpegExifSegment(&r, at: i)
            }
            i += Int(length)
        }
        return r.exhausted ? nil : .identity
    }

    private static func orientation(of file: [UInt8], _ format: ImageFormat) -> ExifOrientation {
        file.withUnsafeBytes { ExifReader.orientation(in: $0, format: format) } ?? .identity
    }

    // MARK: PNG

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// IHDR, the first chunk (libpng passes unknown ancillary chunks before
    /// it), and the orientation of `ExifReader.pngExif`'s eXIf chunk.
    static func png(_ r: inout HeaderReader) -> PixelSize? {
        var i = 8
        var stored: PixelSize?
        while stored == nil {
            guard let length = r.u32(i, bigEndian: true), length <= 0x7FFF_FFFF else { return nil }
            if r.matches("IHDR", at: i + 4) {
                guard length >= 8, let w = r.u32(i + 8, bigEndian: true), let h = r.u32(i + 12, bigEndian: true),
                      w <= 0x7FFF_FFFF, h <= 0x7FFF_FFFF, let width = Int(exactly: w), let height = Int(exactly: h)
                else { return nil }
                stored = PixelSize(width: width, height: height)
            } else if r.matches("IDAT", at: i + 4) || r.matches("IEND", at: i + 4) {
                return nil
            } else {
                // Checked first: Int is 32 bits on ARMv7 boards.
                guard Int(length) <= r.size - i - 12 else { return nil }
                i += 12 + Int(length)
            }
        }
        guard let stored, let orientation = pngOrientation(&r) else { return nil }
        return orientation.uprightSize(of: stored)
    }

    /// `ExifReader.pngExif`'s walk. A PNG's picture data usually comes in
    /// many 8 KiB IDAT chunks, too many to walk by reads: when the walk
    /// reaches them and the file goes on past the head, an eXIf written
    /// after the picture data (as the PNG specification allows) is looked
    /// for in the last 64 KiB instead, as a chunk whose CRC holds: one read.
    static func pngOrientation(_ r: inout HeaderReader) -> ExifOrientation? {
        var i = 8
        while let length32 = r.u32(i, bigEndian: true) {
            guard length32 <= 0x7FFF_FFFF, Int(length32) <= r.size - i - 8 else { return .identity }
            let length = Int(length32)
            if r.matches("eXIf", at: i + 4) {
                guard length <= maxBlockBytes, let chunk = r.read(i, 8 + length) else { return nil }
                return orientation(of: pngSignature + chunk, .png)
            }
            if r.matches("IEND", at: i + 4) { return .identity }
            if r.size > r.head.count, r.matches("IDAT", at: i + 4) { return tailPNGOrientation(&r) }
            i += 12 + length
        }
        return r.exhausted ? tailPNGOrientation(&r) : .identity
    }

    private static func tailPNGOrientation(_ r: inout HeaderReader) -> ExifOrientation? {
        let start = max(0, r.size - headBytes)
        guard let tail = r.readBeyondCaps(start, r.size - start) else { return nil }
        var p = 4
        while p + 8 <= tail.count {
            defer { p += 1 }
            guard tail[p] == 0x65, tail[p + 1] == 0x58, tail[p + 2] == 0x49, tail[p + 3] == 0x66 else { continue }  // "eXIf"
            let length32 = UInt32(tail[p - 4]) << 24 | UInt32(tail[p - 3]) << 16 | UInt32(tail[p - 2]) << 8 | UInt32(tail[p - 1])
            guard length32 <= UInt32(tail.count - p - 8) else { continue }
            let length = Int(length32)
            let end = p + 4 + length
            let stored = UInt32(tail[end]) << 24 | UInt32(tail[end + 1]) << 16 | UInt32(tail[end + 2]) << 8 | UInt32(tail[end + 3])
            guard crc32(tail[p..<end]) == stored else { continue }
            return orientation(of: pngSignature + tail[(p - 4)..<end], .png)
        }
        return .identity
    }

    // MARK: WebP

    /// The first chunk: a lossy key frame's header (VP8), a lossless
    /// header (VP8L), or the extended format's canvas (VP8X), which
    /// libwebp holds equal to a still picture's bitstream and which is
    /// what an animation decodes to. EXIF is `ExifReader.webpExif`'s chunk.
    static func webp(_ r: inout HeaderReader) -> PixelSize? {
        let stored: PixelSize
        var exifFlag = true
        if r.matches("VP8 ", at: 12) {
            guard let size = vp8Size(&r, at: 20) else { return nil }
            stored = size
        } else if r.matches("VP8L", at: 12) {
            guard let size = vp8lSize(&r, at: 20) else { return nil }
            stored = size
        } else if r.matches("VP8X", at: 12) {
            guard let flags = r.byte(20), let w = r.u24(24), let h = r.u24(27) else { return nil }
            exifFlag = flags & 0x08 != 0
            stored = PixelSize(width: w + 1, height: h + 1)
        } else if let size = vp8lSize(&r, at: 12) ?? vp8Size(&r, at: 12) {
            // No chunk header: libwebp takes what follows "WEBP" as a bare
            // bitstream, lossless if it starts like one.
            stored = size
        } else {
            return nil
        }
        guard let orientation = webpOrientation(&r, exifFlag: exifFlag) else { return nil }
        return orientation.uprightSize(of: stored)
    }

    /// A lossy key frame: the frame tag (3 bytes, bit 0 clear on a key
    /// frame), the start code 9D 01 2A, then 14-bit sizes (libwebp's VP8GetInfo).
    private static func vp8Size(_ r: inout HeaderReader, at p: Int) -> PixelSize? {
        guard let tag = r.byte(p), tag & 1 == 0, r.byte(p + 3) == 0x9D, r.byte(p + 4) == 0x01, r.byte(p + 5) == 0x2A,
              let w = r.u16(p + 6, bigEndian: false), let h = r.u16(p + 8, bigEndian: false) else { return nil }
        return PixelSize(width: Int(w & 0x3FFF), height: Int(h & 0x3FFF))
    }

    /// A lossless header: the byte 2F, then 14-bit sizes less one and a
    /// 3-bit version that must be 0 (libwebp's VP8LGetInfo).
    private static func vp8lSize(_ r: inout HeaderReader, at p: Int) -> PixelSize? {
        guard r.byte(p) == 0x2F, let bits = r.u32(p + 1, bigEndian: false), bits >> 29 == 0 else { return nil }
        return PixelSize(width: Int(bits & 0x3FFF) + 1, height: Int(bits >> 14 & 0x3FFF) + 1)
    }

    /// `ExifReader.webpExif`'s walk. Out of reads (an animation of many
    /// frames), a file whose VP8X says it has no EXIF is taken at its word.
    static func webpOrientation(_ r: inout HeaderReader, exifFlag: Bool) -> ExifOrientation? {
        var i = 12
        while let size32 = r.u32(i + 4, bigEndian: false) {
            guard let size = Int(exactly: size32), size <= r.size - i - 8 else { return .identity }
            if r.matches("EXIF", at: i) {
                guard size <= maxBlockBytes, let chunk = r.read(i, 8 + size) else { return nil }
                var riff = Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBP".utf8)
                riff += chunk
                return orientation(of: riff, .webp)
            }
            i += 8 + size + (size & 1)
        }
        if r.exhausted { return exifFlag ? nil : .identity }
        return .identity
    }

    // MARK: GIF

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

    // MARK: HEIF and AVIF

    /// The primary item (`pitm`) and its properties (`iprp`: `ipco`, and
    /// the first `ipma` entry for the item, in order), as libheif reads
    /// them: the picture is the item's `ispe` (a grid item's is the grid's
    /// output size), then turned by `irot` and cropped by `clap` in their
    /// order, as `heif_decode_image` applies them (`imir` keeps the size).
    /// EXIF is never read: the decoder does not turn HEIF by it.
    static func heif(_ r: inout HeaderReader) -> PixelSize? {
        // The top-level boxes, as far as `meta`: read whole.
        var i = 0
        var meta: [UInt8]?
        while meta == nil {
            guard let box = r.boxHeader(at: i, end: r.size) else { return nil }
            if box.type == "meta" {
                guard box.size <= maxBlockBytes, let bytes = r.read(i, box.size) else { return nil }
                meta = bytes
            }
            i += box.size
        }
        guard let meta else { return nil }
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

    /// PNG's CRC-32 (ISO 3309, reflected 0xEDB88320) over type and data.
    static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
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
