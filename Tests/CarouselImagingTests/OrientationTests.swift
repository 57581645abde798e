import Testing
@testable import CarouselImaging

@Suite("EXIF orientation: parsed in all three containers and applied")
struct OrientationTests {
    /// What each orientation shows at the top-left, top-right, bottom-left and
    /// bottom-right of the upright picture, for stored quadrants
    /// red/green/blue/yellow (checked against ImageMagick's -auto-orient in
    /// `matchesImageMagick`).
    static let expectedCorners: [Int: [UInt32]] = [
        1: [Quadrant.red, Quadrant.green, Quadrant.blue, Quadrant.yellow],
        2: [Quadrant.green, Quadrant.red, Quadrant.yellow, Quadrant.blue],
        3: [Quadrant.yellow, Quadrant.blue, Quadrant.green, Quadrant.red],
        4: [Quadrant.blue, Quadrant.yellow, Quadrant.red, Quadrant.green],
        5: [Quadrant.red, Quadrant.blue, Quadrant.green, Quadrant.yellow],
        6: [Quadrant.blue, Quadrant.red, Quadrant.yellow, Quadrant.green],
        7: [Quadrant.yellow, Quadrant.green, Quadrant.blue, Quadrant.red],
        8: [Quadrant.green, Quadrant.yellow, Quadrant.red, Quadrant.blue],
    ]

    @Test("all 8 orientations, JPEG, PNG (eXIf) and WebP (EXIF chunk)",
          arguments: 1...8, ["jpg", "png", "webp"])
    func orientation(value: Int, ext: String) throws {
        let name = "orientation-\(value).\(ext)"
        let bytes = try Fixtures.bytes(name)
        let format = try ImageDecoder.inspect(bytes: bytes, name: name)
        #expect(format.orientation.rawValue == value)

        let image = try ImageDecoder.decode(path: Fixtures.path(name))
        let expectedSize = value >= 5 ? PixelSize(width: 32, height: 64) : PixelSize(width: 64, height: 32)
        #expect(image.size == expectedSize)
        let c = Self.expectedCorners[value]!
        expectQuadrants(image, c[0], c[1], c[2], c[3], tolerance: ext == "jpg" ? 4 : 0)
    }

    @Test("JPEG orientations match ImageMagick's -auto-orient pixel for pixel", arguments: 1...8)
    func matchesImageMagick(value: Int) throws {
        let ours = try ImageDecoder.decode(path: Fixtures.path("orientation-\(value).jpg"))
        let reference = try ImageDecoder.decode(path: Fixtures.path("upright-\(value).png"))
        #expect(ours.size == reference.size)
        guard ours.size == reference.size else { return }
        var worst = 0
        for y in 0..<ours.height {
            for x in 0..<ours.width {
                worst = max(worst, channelDistance(ours.pixel(x: x, y: y), reference.pixel(x: x, y: y)))
            }
        }
        // Both decode with libjpeg-turbo's defaults; only the rotation differs.
        #expect(worst <= 2, "largest channel difference \(worst)")
    }

    @Test("a one-pixel-wide image turns without reading outside it", arguments: ExifOrientation.allCases)
    func thinImage(orientation: ExifOrientation) throws {
        let image = try DecodedImage(width: 1, height: 3, format: .xrgb8888) { buffer, stride in
            for y in 0..<3 { buffer.storeBytes(of: UInt32(y), toByteOffset: y * stride, as: UInt32.self) }
        }
        let turned = try image.oriented(orientation, path: "thin")
        #expect(turned.size == orientation.uprightSize(of: image.size))
        var values: [UInt32] = []
        for y in 0..<turned.height { for x in 0..<turned.width { values.append(turned.pixel(x: x, y: y)) } }
        #expect(values.sorted() == [0, 1, 2])
    }

    @Test("orientation is applied in tiles correctly for sizes that are not tile multiples")
    func largerThanOneTile() throws {
        let width = 131, height = 70
        let image = try DecodedImage(width: width, height: height, format: .xrgb8888) { buffer, stride in
            for y in 0..<height { for x in 0..<width {
                buffer.storeBytes(of: UInt32(y * 1000 + x), toByteOffset: y * stride + x * 4, as: UInt32.self)
            } }
        }
        for orientation in ExifOrientation.allCases {
            let turned = try image.oriented(orientation, path: "tiles")
            for y in 0..<height { for x in 0..<width {
                let d = orientation.destination(x: x, y: y, width: width, height: height)
                if turned.pixel(x: d.x, y: d.y) != UInt32(y * 1000 + x) {
                    Issue.record("\(orientation): (\(x), \(y)) misplaced")
                    return
                }
            } }
        }
    }
}

@Suite("EXIF parser: bounds-checked, never traps")
struct ExifParserTests {
    /// A minimal TIFF block with IFD0 holding one entry.
    static func tiff(bigEndian: Bool, tag: UInt16 = 0x0112, type: UInt16 = 3, value: UInt32) -> [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] { bigEndian ? [UInt8(v >> 8), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func u32(_ v: UInt32) -> [UInt8] {
            let b = [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
            return bigEndian ? b : b.reversed()
        }
        var out: [UInt8] = bigEndian ? Array("MM".utf8) : Array("II".utf8)
        out += u16(42) + u32(8)
        out += u16(2)  // two entries: an unrelated tag first, then ours
        out += u16(0x010F) + u16(2) + u32(4) + Array("Cam\0".utf8)
        let valueField = type == 3 ? u16(UInt16(value)) + [0, 0] : u32(value)
        out += u16(tag) + u16(type) + u32(1) + valueField
        out += u32(0)  // no next IFD
        return out
    }

    static func jpeg(withExif tiff: [UInt8]) -> [UInt8] {
        let payload = Array("Exif\0\0".utf8) + tiff
        let length = payload.count + 2
        return [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x00, 0x00]  // SOI, a tiny APP0
            + [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
            + [0xFF, 0xDA, 0x00, 0x02, 0xFF, 0xD9]
    }

    static func orientation(_ bytes: [UInt8], _ format: ImageFormat) -> ExifOrientation? {
        bytes.withUnsafeBytes { ExifReader.orientation(in: $0, format: format) }
    }

    @Test("both byte orders, SHORT and LONG values", arguments: [true, false])
    func byteOrders(bigEndian: Bool) {
        for value in 1...8 {
            let short = Self.jpeg(withExif: Self.tiff(bigEndian: bigEndian, value: UInt32(value)))
            #expect(Self.orientation(short, .jpeg)?.rawValue == value)
            let long = Self.jpeg(withExif: Self.tiff(bigEndian: bigEndian, type: 4, value: UInt32(value)))
            #expect(Self.orientation(long, .jpeg)?.rawValue == value)
        }
    }

    @Test("out-of-range values, other tags and wrong types give no orientation")
    func invalidValues() {
        for value: UInt32 in [0, 9, 255, 0xFFFF] {
            #expect(Self.orientation(Self.jpeg(withExif: Self.tiff(bigEndian: true, value: value)), .jpeg) == nil)
        }
        #expect(Self.orientation(Self.jpeg(withExif: Self.tiff(bigEndian: false, tag: 0x0113, value: 6)), .jpeg) == nil)
        #expect(Self.orientation(Self.jpeg(withExif: Self.tiff(bigEndian: false, type: 7, value: 6)), .jpeg) == nil)
    }

    @Test("every truncation of a tagged file parses to 6 or nil, never traps", arguments: ["jpg", "png", "webp"])
    func truncations(ext: String) throws {
        let bytes = try Fixtures.bytes("orientation-6.\(ext)")
        let format: ImageFormat = ext == "jpg" ? .jpeg : ext == "png" ? .png : .webp
        for length in 0...bytes.count {
            let result = Self.orientation(Array(bytes.prefix(length)), format)
            #expect(result == nil || result == .rotate90)
        }
        #expect(Self.orientation(bytes, format) == .rotate90)
    }

    @Test("random damage to the EXIF block never traps (deterministic fuzz)", arguments: ["jpg", "png", "webp"])
    func fuzz(ext: String) throws {
        let original = try Fixtures.bytes("orientation-6.\(ext)")
        let format: ImageFormat = ext == "jpg" ? .jpeg : ext == "png" ? .png : .webp
        var rng = SplitMix64(seed: 0xC0FFEE)
        // The first ~200 bytes hold the containers' headers and the EXIF block.
        let span = min(original.count, 200)
        for _ in 0..<3000 {
            var bytes = original
            for _ in 0..<Int(rng.next() % 6 + 1) {
                let i = Int(rng.next() % UInt64(span))
                switch rng.next() % 3 {
                case 0: bytes[i] = UInt8(truncatingIfNeeded: rng.next())
                case 1: bytes[i] = 0xFF
                default: bytes[i] = 0x00
                }
            }
            _ = Self.orientation(bytes, format)
        }
    }

    @Test("EXIF whose IFD0 offset points past the end: the picture decodes, unrotated")
    func badIFDOffset() throws {
        let name = "exif-bad-offset.jpg"
        #expect(try ImageDecoder.inspect(bytes: Fixtures.bytes(name), name: name).orientation == .identity)
        let image = try ImageDecoder.decode(path: Fixtures.path(name))
        #expect(image.size == PixelSize(width: 64, height: 32))
        expectQuadrants(image, Quadrant.red, Quadrant.green, Quadrant.blue, Quadrant.yellow, tolerance: 4)
    }

    @Test("EXIF whose IFD0 claims 65535 entries: the entries that are there are read, the rest ignored")
    func badEntryCount() throws {
        let name = "exif-bad-count.jpg"
        #expect(try ImageDecoder.inspect(bytes: Fixtures.bytes(name), name: name).orientation == .rotate90)
        let image = try ImageDecoder.decode(path: Fixtures.path(name))
        #expect(image.size == PixelSize(width: 32, height: 64))
    }

    @Test("an APP1 length past the end: no orientation, and the decoder reports the damage")
    func segmentPastEnd() throws {
        let bytes = try Fixtures.bytes("exif-bad-length.jpg")
        #expect(Self.orientation(bytes, .jpeg) == nil)
        let error = expectImageError(path: Fixtures.path("exif-bad-length.jpg"))
        guard case .corrupt(.jpeg, _)? = error?.reason else {
            Issue.record("expected a corrupt-JPEG error, got \(String(describing: error))")
            return
        }
    }

    @Test("an Exif prefix inside PNG eXIf is tolerated")
    func pngExifWithPrefix() throws {
        // Build a PNG chunk stream by hand: signature, eXIf with "Exif\0\0" + TIFF, IEND.
        let tiff = Array("Exif\0\0".utf8) + Self.tiff(bigEndian: false, value: 8)
        func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        png += be32(tiff.count) + Array("eXIf".utf8) + tiff + [0, 0, 0, 0]
        png += be32(0) + Array("IEND".utf8) + [0, 0, 0, 0]
        #expect(Self.orientation(png, .png) == .rotate270)
    }
}

/// A small deterministic generator, so that fuzz failures reproduce.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
