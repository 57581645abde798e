import CHeifLoader
import Testing
@testable import CarouselImaging

/// Largest channel difference between two images of the same size, over the
/// pixels at least `margin` away from the quadrant edges (lossy codecs blur
/// the edges; the quadrants' insides must match).
func worstDistance(_ ours: DecodedImage, _ reference: DecodedImage, margin: Int) -> Int {
    var worst = 0
    for y in 0..<ours.height where abs(y - ours.height / 2) >= margin && y >= margin && y < ours.height - margin {
        for x in 0..<ours.width where abs(x - ours.width / 2) >= margin && x >= margin && x < ours.width - margin {
            worst = max(worst, channelDistance(ours.pixel(x: x, y: y), reference.pixel(x: x, y: y)))
        }
    }
    return worst
}

@Suite("HEIF and AVIF through libheif: pixels, orientation by irot only, limits, errors")
struct HEIFTests {
    @Test("HEIC (HEVC) and AVIF (AV1) decode to the quadrant colours", arguments: ["quadrants.heic", "quadrants.avif"])
    func quadrants(name: String) throws {
        let image = try ImageDecoder.decode(path: Fixtures.path(name))
        #expect(image.size == PixelSize(width: 64, height: 32))
        #expect(image.format == .xrgb8888 && !image.hasAlpha)
        // Lossy at quality 90, 4:4:4: the drawn colours within a few levels
        // inside each quadrant, against the PNG they were encoded from.
        expectQuadrants(image, Quadrant.red, Quadrant.green, Quadrant.blue, Quadrant.yellow, tolerance: 6)
        let reference = try ImageDecoder.decode(path: Fixtures.path("quadrants.png"))
        let worst = worstDistance(image, reference, margin: 4)
        #expect(worst <= 8, "largest channel difference \(worst)")
    }

    @Test("the format comes from the ftyp box, and the album's extensions include .heic and .avif")
    func sniffing() throws {
        #expect(try ImageDecoder.inspect(bytes: Fixtures.bytes("quadrants.heic"), name: "a.jpg").format == .heif)
        #expect(try ImageDecoder.inspect(bytes: Fixtures.bytes("quadrants.avif"), name: "a.jpg").format == .avif)
        #expect(ImageFormat.heif.fileExtensions.contains("heic") && ImageFormat.avif.fileExtensions == ["avif"])
        // A mif1 major brand with avif among the compatible brands is AVIF.
        let mif1 = [0, 0, 0, 24] + Array("ftypmif1".utf8) + [0, 0, 0, 0] + Array("mif1avif".utf8) + [UInt8](repeating: 0, count: 8)
        #expect(mif1.withUnsafeBytes { ImageFormat.sniff($0) } == .supported(.avif))
        // An MP4 video is named, not decoded.
        let mp4 = [0, 0, 0, 24] + Array("ftypisom".utf8) + [UInt8](repeating: 0, count: 12)
        #expect(mp4.withUnsafeBytes { ImageFormat.sniff($0) } == .unsupported(detected: "MP4 or QuickTime video"))
    }

    @Test("AVIF alpha is premultiplied for pixman")
    func alpha() throws {
        let image = try ImageDecoder.decode(path: Fixtures.path("alpha.avif"))
        #expect(image.format == .argb8888Premultiplied && image.hasAlpha)
        // As alpha.png: red at alpha 128, transparent, opaque blue, yellow at alpha 64.
        expectQuadrants(image, 0x8080_0000, 0x0000_0000, 0xFF00_00FF, 0x4040_4000, tolerance: 4)
    }

    /// The iPhone case and its opposite. The stored pixels are the quadrants
    /// (64x32), EXIF says orientation 6; irot 3 turns clockwise (agreeing,
    /// as Apple writes it), irot 1 anticlockwise (disagreeing). Only irot
    /// may turn the picture, once: ImageMagick's -auto-orient of the JPEG
    /// with orientation 6 (or 8) is the reference.
    @Test("irot turns the picture once; EXIF orientation inside a HEIF is never applied", arguments: [
        ("exif-6.heic", 1), ("irot-3-exif-6.heic", 6), ("irot-1-exif-6.heic", 8), ("irot-3.avif", 6),
    ])
    func orientation(name: String, upright: Int) throws {
        let bytes = try Fixtures.bytes(name)
        // The EXIF block says 6 in the HEIC files, but it is not the orientation.
        #expect(try ImageDecoder.inspect(bytes: bytes, name: name).orientation == .identity)
        let image = try ImageDecoder.decode(path: Fixtures.path(name))
        let reference = try ImageDecoder.decode(path: Fixtures.path("upright-\(upright).png"))
        #expect(image.size == reference.size, "\(name) decoded at \(image.size)")
        guard image.size == reference.size else { return }
        let c = OrientationTests.expectedCorners[upright]!
        expectQuadrants(image, c[0], c[1], c[2], c[3], tolerance: 8)
        let worst = worstDistance(image, reference, margin: 4)
        #expect(worst <= 10, "\(name): largest channel difference \(worst) from upright-\(upright).png")
    }

    @Test("the EXIF block really says 6 in the fixtures (else the orientation test proves nothing)")
    func fixturesCarryExifOrientation() throws {
        for name in ["exif-6.heic", "irot-3-exif-6.heic", "irot-1-exif-6.heic"] {
            let bytes = try Fixtures.bytes(name)
            let tiff = try #require(bytes.firstRange(of: Array("MM\0*".utf8)) ?? bytes.firstRange(of: Array("II*\0".utf8)))
            let orientation = bytes.withUnsafeBytes { raw in
                ExifReader.tiffOrientation(ByteView(raw), tiff.lowerBound..<bytes.count)
            }
            #expect(orientation == .rotate90, "\(name)")
        }
    }

    @Test("decoding for a box smaller than the picture still covers it", arguments: ["quadrants.heic", "irot-3.avif"])
    func targetSize(name: String) throws {
        let image = try ImageDecoder.decode(path: Fixtures.path(name), targetSize: PixelSize(width: 16, height: 16), fit: .cover)
        #expect(image.width >= 16 && image.height >= 16)
    }

    @Test("a header claiming 30000x30000 is refused before decoding, by max_pixels", arguments: ["bomb.heic", "bomb.avif"])
    func bomb(name: String) {
        let error = expectImageError(path: Fixtures.path(name))
        #expect(error?.reason == .tooManyPixels(width: 30000, height: 30000, limit: ImageDecoder.defaultMaxPixels))
    }

    @Test("max_pixels applies to HEIF as to every format", arguments: ["quadrants.heic", "quadrants.avif"])
    func maxPixels(name: String) {
        let error = expectImageError(path: Fixtures.path(name), maxPixels: 2047)
        #expect(error?.reason == .tooManyPixels(width: 64, height: 32, limit: 2047))
    }

    @Test("this libheif decodes HEVC and AV1 (Debian 12's libheif1: libde265, dav1d and libaom built in)")
    func decodersPresent() throws {
        let heif = try HEIFReader.loadedLibrary(format: .heif, path: "-")
        #expect(heif.heif_have_decoder_for_format(heif_compression_HEVC) != 0)
        #expect(heif.heif_have_decoder_for_format(heif_compression_AV1) != 0)
    }

    /// libheif 1.15 answers a picture whose codec it has no plugin for with
    /// Unsupported_feature/Unsupported_codec from heif_decode_image. Debian
    /// 12's libheif1 has every plugin built in, so no file here reaches that
    /// answer: it is built as libheif builds it.
    @Test("libheif's 'no decoder for this codec' is an unsupported variant that says what to install", arguments: [
        ImageFormat.heif, .avif,
    ])
    func missingDecoder(format: ImageFormat) {
        let status = "Unsupported feature: Unsupported codec".withCString { message in
            heif_error(code: heif_error_Unsupported_feature, subcode: heif_suberror_Unsupported_codec, message: message)
        }
        // The pointer only lives in the closure above; libheif's are static strings.
        let error = "Unsupported codec".withCString { message in
            var copy = status
            copy.message = message
            return HEIFReader.imageError(copy, format: format, path: "/p/a")
        }
        #expect(error.reason == .unsupportedVariant(format, detail: HEIFReader.missingDecoder(format)))
        #expect(error.description.hasPrefix("/p/a: unsupported \(format.name) variant: libheif 1."), "\(error)")
    }

    @Test("a picture item of a type libheif does not know (jpeg in an AVIF) is one clear ImageError")
    func unknownItemType() {
        let error = expectImageError(path: Fixtures.path("jpeg-coded.avif"))
        guard case .corrupt(.avif, let detail)? = error?.reason else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        #expect(!detail.isEmpty && !detail.contains("\n"))
    }
}
