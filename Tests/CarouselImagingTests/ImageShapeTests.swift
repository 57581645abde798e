import Foundation
import Testing
@testable import CarouselImaging

/// The probe against the decoder itself: for every picture, the size read
/// from the header is the size a full decode gives, upright.
@Suite("ImageShape: a picture's upright size from its header agrees with the decoder")
struct ImageShapeTests {
    static let fixtureNames: [String] = {
        ((try? FileManager.default.contentsOfDirectory(atPath: Fixtures.directory)) ?? []).sorted()
    }()

    /// The probe by path and by bytes, and the decode, agree; a file the
    /// decoder refuses may still have a readable header (a bomb), so only
    /// the two probes are compared then.
    static func expectAgreement(_ path: String, requireSize: Bool = true,
                                sourceLocation: SourceLocation = #_sourceLocation) throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let probed = ImageShape.uprightSize(path: path)
        let inMemory = bytes.withUnsafeBytes { ImageShape.uprightSize(bytes: $0) }
        #expect(probed == inMemory, "\(path): by path \(String(describing: probed)), in memory \(String(describing: inMemory))",
                sourceLocation: sourceLocation)
        // A large picture (the 62 MP PNG fixture) is not decoded here: a
        // decode refused by max_pixels names the upright size the decoder
        // read from the same header, without a 250 MB picture in the test
        // process (whose peak the replayer tests' children inherit).
        if let probed, probed.width * probed.height > 1 << 22 {
            do {
                _ = try ImageDecoder.decode(path: path, maxPixels: 1 << 22)
                Issue.record("\(path): decoded within max_pixels although probed at \(probed)", sourceLocation: sourceLocation)
            } catch {
                if case .tooManyPixels(let width, let height, _) = error.reason {
                    #expect(probed == PixelSize(width: width, height: height), "\(path): probed \(probed), refused at \(width)x\(height)",
                            sourceLocation: sourceLocation)
                }
            }
            return
        }
        guard let image = try? ImageDecoder.decode(path: path) else { return }
        #expect(probed == image.size, "\(path): probed \(String(describing: probed)), decoded \(image.size)",
                sourceLocation: sourceLocation)
        if requireSize { #expect(probed != nil, "\(path) decodes but its header was not read", sourceLocation: sourceLocation) }
    }

    @Test("every committed fixture: the probe is the decoded size")
    func fixtures() throws {
        #expect(Self.fixtureNames.count > 50)
        for name in Self.fixtureNames {
            try Self.expectAgreement(Fixtures.path(name))
        }
    }

    @Test("the committed fixtures cover every format and turn")
    func fixtureCoverage() throws {
        // Portrait only by EXIF (JPEG, PNG, WebP) or irot (HEIF, AVIF).
        for name in ["orientation-6.jpg", "orientation-8.png", "orientation-5.webp", "irot-3-exif-6.heic", "irot-3.avif"] {
            #expect(ImageShape.uprightSize(path: Fixtures.path(name)) == PixelSize(width: 32, height: 64), "\(name)")
        }
        // EXIF 6 inside a HEIF without irot is not a turn.
        #expect(ImageShape.uprightSize(path: Fixtures.path("exif-6.heic")) == PixelSize(width: 64, height: 32))
        // A GIF frame past a smaller screen, an animation's canvas.
        #expect(ImageShape.uprightSize(path: Fixtures.path("partial-frame.gif")) == PixelSize(width: 64, height: 32))
        #expect(ImageShape.uprightSize(path: Fixtures.path("animated.webp")) == PixelSize(width: 64, height: 32))
    }

    @Test("every EXIF orientation on a non-square JPEG", arguments: 1...8)
    func jpegOrientations(value: Int) throws {
        let scratch = try ScratchDirectory()
        let base = try Self.magick(scratch, "base.jpg", ["-size", "40x24", "gradient:red-blue"])
        let path = try scratch.write("o\(value).jpg", Self.insertingSegments([Self.exifSegment(orientation: value)], into: base))
        try Self.expectAgreement(path)
        let expected = value >= 5 ? PixelSize(width: 24, height: 40) : PixelSize(width: 40, height: 24)
        #expect(ImageShape.uprightSize(path: path) == expected)
    }

    @Test("a frame header past the first 64 KiB, behind a large EXIF thumbnail and an ICC segment")
    func farFrameHeader() throws {
        let scratch = try ScratchDirectory()
        let base = try Self.magick(scratch, "base.jpg", ["-size", "48x30", "gradient:red-blue"])
        // EXIF (orientation 6, a 65000-byte "thumbnail") then 30 KB of APP2.
        let far = Self.insertingSegments([Self.exifSegment(orientation: 6, padding: 65000), Self.segment(0xE2, count: 30000)],
                                         into: base)
        #expect(try #require(far.firstRange(of: [0xFF, 0xC0])).lowerBound > ImageShape.headBytes)
        let farPath = try scratch.write("far.jpg", far)
        try Self.expectAgreement(farPath)
        #expect(ImageShape.uprightSize(path: farPath) == PixelSize(width: 30, height: 48))
        #expect(Self.readsPastHead(far) <= 3)
        // The EXIF segment itself past 64 KiB, behind two 40 KB APP2s.
        let late = Self.insertingSegments([Self.segment(0xE2, count: 40000), Self.segment(0xE2, count: 40000),
                                           Self.exifSegment(orientation: 8, padding: 1000)], into: base)
        #expect(try #require(late.firstRange(of: Array("Exif".utf8))).lowerBound > ImageShape.headBytes)
        let latePath = try scratch.write("late.jpg", late)
        try Self.expectAgreement(latePath)
        #expect(ImageShape.uprightSize(path: latePath) == PixelSize(width: 30, height: 48))
        #expect(Self.readsPastHead(late) <= 2)
    }

    @Test("JPEG frame header variants: progressive, extended sequential (SOF1), garbage before a marker")
    func jpegVariants() throws {
        let scratch = try ScratchDirectory()
        let progressive = try Self.magick(scratch, "p.jpg", ["-size", "30x50", "gradient:red-blue", "-interlace", "JPEG"])
        #expect(progressive.firstRange(of: [0xFF, 0xC2]) != nil)
        try Self.expectAgreement(scratch.path + "/p.jpg")
        // An 8-bit extended sequential frame decodes like a baseline one.
        var sof1 = try Fixtures.bytes("quadrants.jpg")
        let sof = try #require(sof1.firstRange(of: [0xFF, 0xC0]))
        sof1[sof.lowerBound + 1] = 0xC1
        try Self.expectAgreement(try scratch.write("sof1.jpg", sof1))
        // Bytes between segments: libjpeg skips them with a warning.
        var garbage = try Fixtures.bytes("quadrants.jpg")
        garbage.insert(contentsOf: [0x12, 0x34, 0x00], at: sof.lowerBound)
        try Self.expectAgreement(try scratch.write("garbage.jpg", garbage))
    }

    @Test("PNG: eXIf before the picture data, and after it in a file past 64 KiB")
    func pngExif() throws {
        let scratch = try ScratchDirectory()
        let base = try Self.magick(scratch, "noise.png", ["-size", "300x200", "xc:", "+noise", "Random", "PNG24:-"])
        #expect(base.count > 100_000)
        let exif = Array(Self.exifSegment(orientation: 6).dropFirst(10))  // the TIFF structure alone
        let iend = base.count - 12
        let late = Array(base[..<iend]) + Self.pngChunk("eXIf", exif) + base[iend...]
        let latePath = try scratch.write("late.png", late)
        try Self.expectAgreement(latePath)
        #expect(ImageShape.uprightSize(path: latePath) == PixelSize(width: 200, height: 300))
        let early = Array(base[..<33]) + Self.pngChunk("eXIf", exif) + base[33...]
        try Self.expectAgreement(try scratch.write("early.png", early))
        // Without eXIf, a large PNG is upright.
        try Self.expectAgreement(try scratch.write("plain.png", base))
        // The picture data in 8 KiB IDAT chunks, as libpng writes it: too
        // many to walk, so the eXIf after them is found in the file's tail.
        let chunked = Self.rechunkingIDAT(late, every: 8192)
        #expect(chunked.count > late.count + 12 * 16)
        let chunkedPath = try scratch.write("chunked.png", chunked)
        #expect(Self.readsPastHead(chunked) == 1)
        try Self.expectAgreement(chunkedPath)
        #expect(ImageShape.uprightSize(path: chunkedPath) == PixelSize(width: 200, height: 300))
        try Self.expectAgreement(try scratch.write("chunked-plain.png", Self.rechunkingIDAT(base, every: 8192)))
    }

    @Test("the CRC the PNG tail search checks is PNG's")
    func crc() throws {
        let png = try Fixtures.bytes("quadrants.png")
        // IHDR: length at 8, type and 13 bytes of data, then the CRC.
        let stored = UInt32(png[29]) << 24 | UInt32(png[30]) << 16 | UInt32(png[31]) << 8 | UInt32(png[32])
        #expect(ImageShape.crc32(png[12..<29]) == stored)
    }

    @Test("WebP lossy, lossless and VP8X with an EXIF chunk after a large picture")
    func webp() throws {
        let scratch = try ScratchDirectory()
        let lossy = try Self.magick(scratch, "lossy.webp", ["-size", "50x30", "gradient:red-blue", "-quality", "80"])
        try Self.expectAgreement(scratch.path + "/lossy.webp")
        let lossless = try Self.magick(scratch, "lossless.webp",
                                       ["-size", "300x200", "xc:", "+noise", "Random", "-define", "webp:lossless=true"])
        #expect(lossless.count > 100_000)
        try Self.expectAgreement(scratch.path + "/lossless.webp")
        for (name, file, width, height) in [("lossy", lossy, 50, 30), ("lossless", lossless, 300, 200)] {
            let picture = Array(file[12...])  // the VP8 or VP8L chunk
            func u24(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16)] }
            let vp8x = Self.riffChunk("VP8X", [0x08, 0, 0, 0] + u24(width - 1) + u24(height - 1))
            let exif = Self.riffChunk("EXIF", Array(Self.exifSegment(orientation: 8).dropFirst(10)))
            let body = Array("WEBP".utf8) + vp8x + picture + exif
            let path = try scratch.write("\(name)-exif.webp", Array("RIFF".utf8) + Self.le32(body.count) + body)
            try Self.expectAgreement(path)
            #expect(ImageShape.uprightSize(path: path) == PixelSize(width: height, height: width), "\(name)")
        }
        // An animation made by ImageMagick: its canvas.
        _ = try Self.magick(scratch, "anim.webp", ["-delay", "10", "-size", "20x36", "xc:red", "xc:blue", "-loop", "0"])
        try Self.expectAgreement(scratch.path + "/anim.webp")
    }

    @Test("GIF, HEIC and AVIF written by ImageMagick (libheif's encoders), portrait", arguments: ["gif", "heic", "avif"])
    func others(ext: String) throws {
        let scratch = try ScratchDirectory()
        _ = try Self.magick(scratch, "p.\(ext)", ["-size", "24x40", "gradient:red-blue"])
        try Self.expectAgreement(scratch.path + "/p.\(ext)")
        #expect(ImageShape.uprightSize(path: scratch.path + "/p.\(ext)") == PixelSize(width: 24, height: 40))
    }

    @Test("a header cut short, garbage, and files that are no pictures give nil; no input traps")
    func brokenInputs() throws {
        let scratch = try ScratchDirectory()
        for name in Self.fixtureNames {
            let bytes = try Fixtures.bytes(name)
            // Too short for any size field.
            for length in [1, 4, 8, 12, 16] where length < bytes.count {
                let cut = Array(bytes.prefix(length))
                #expect(cut.withUnsafeBytes { ImageShape.uprightSize(bytes: $0) } == nil, "\(name) cut to \(length)")
            }
            // Every cut, and the file with bytes flipped: any answer, but an answer.
            for length in stride(from: 1, to: min(bytes.count, 2000), by: 7) {
                _ = Array(bytes.prefix(length)).withUnsafeBytes { ImageShape.uprightSize(bytes: $0) }
            }
            var rng = SplitMix64(seed: UInt64(bytes.count))
            for _ in 0..<20 {
                var damaged = bytes
                for _ in 0..<4 { damaged[Int(rng.next() % UInt64(damaged.count))] = UInt8(truncatingIfNeeded: rng.next()) }
                _ = damaged.withUnsafeBytes { ImageShape.uprightSize(bytes: $0) }
            }
        }
        var rng = SplitMix64(seed: 7)
        let noise = (0..<100_000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        #expect(noise.withUnsafeBytes { ImageShape.uprightSize(bytes: $0) } == nil)
        #expect(ImageShape.uprightSize(path: Fixtures.path("text.jpg")) == nil)
        #expect(ImageShape.uprightSize(path: scratch.path) == nil)  // a directory
        #expect(ImageShape.uprightSize(path: scratch.path + "/missing.jpg") == nil)
        #expect(ImageShape.uprightSize(path: try scratch.write("empty.jpg", [])) == nil)
        // Signatures before noise: walks that must end within the caps.
        let heads: [[UInt8]] = [[0xFF, 0xD8, 0xFF], [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], Array("GIF89a".utf8),
                                Array("RIFF\0\0\0\0WEBPVP8X".utf8), [0, 0, 0, 16] + Array("ftypheic".utf8) + [0, 0, 0, 0]]
        for head in heads {
            _ = (head + noise).withUnsafeBytes { ImageShape.uprightSize(bytes: $0) }
            // A JPEG of fill bytes, a PNG of empty chunks: long walks, capped.
            _ = (head + [UInt8](repeating: 0xFF, count: 5 << 20)).withUnsafeBytes { ImageShape.uprightSize(bytes: $0) }
            _ = (head + [UInt8](repeating: 0, count: 5 << 20)).withUnsafeBytes { ImageShape.uprightSize(bytes: $0) }
        }
    }

    /// How many reads past the first 64 KiB the probe of `file` makes.
    static func readsPastHead(_ file: [UInt8]) -> Int {
        file.withUnsafeBytes { bytes in
            var reader = HeaderReader(size: bytes.count) { buffer, offset in
                let n = min(buffer.count, bytes.count - offset)
                buffer.baseAddress!.copyMemory(from: bytes.baseAddress! + offset, byteCount: n)
                return n
            }
            _ = ImageShape.probe(&reader)
            return reader.reads
        }
    }

    // MARK: Making pictures

    /// Runs ImageMagick's `convert ARGUMENTS... OUTPUT` and returns the file.
    static func magick(_ scratch: ScratchDirectory, _ name: String, _ arguments: [String]) throws -> [UInt8] {
        let output = scratch.path + "/" + name
        var args = arguments
        if args.last == "PNG24:-" { args[args.count - 1] = "PNG24:" + output } else { args.append(output) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["convert", "-strip"] + args
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ShapeTestError(message: "convert \(args.joined(separator: " ")) exited \(process.terminationStatus)")
        }
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
    }

    /// A JPEG segment of `count` payload bytes (an ICC-like filler).
    static func segment(_ marker: UInt8, count: Int) -> [UInt8] {
        [0xFF, marker, UInt8((count + 2) >> 8), UInt8((count + 2) & 0xFF)] + [UInt8](repeating: 0x5A, count: count)
    }

    /// An APP1 EXIF segment: a big-endian TIFF header, IFD0 with one entry
    /// (Orientation, SHORT), then `padding` bytes standing for a thumbnail.
    static func exifSegment(orientation: Int, padding: Int = 0) -> [UInt8] {
        var tiff: [UInt8] = Array("MM".utf8) + [0, 42, 0, 0, 0, 8]
        tiff += [0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, UInt8(orientation), 0, 0, 0, 0, 0, 0]
        tiff += [UInt8](repeating: 0, count: padding)
        let payload = Array("Exif\0\0".utf8) + tiff
        return [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
    }

    /// `segments` right after the JPEG's SOI.
    static func insertingSegments(_ segments: [[UInt8]], into jpeg: [UInt8]) -> [UInt8] {
        Array(jpeg[..<2]) + segments.flatMap { $0 } + jpeg[2...]
    }

    static func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return be32(data.count) + typed + be32(Int(ImageShape.crc32(typed[...])))
    }

    /// The PNG with its IDAT data cut anew into chunks of `every` bytes.
    static func rechunkingIDAT(_ png: [UInt8], every: Int) -> [UInt8] {
        var before: [UInt8] = [], data: [UInt8] = [], after: [UInt8] = []
        var i = 8
        while i + 12 <= png.count {
            let length = Int(png[i]) << 24 | Int(png[i + 1]) << 16 | Int(png[i + 2]) << 8 | Int(png[i + 3])
            let chunk = png[i..<i + 12 + length]
            if png[i + 4..<i + 8].elementsEqual("IDAT".utf8) {
                data += png[i + 8..<i + 8 + length]
            } else if data.isEmpty {
                before += chunk
            } else {
                after += chunk
            }
            i += 12 + length
        }
        var idat: [UInt8] = []
        for start in stride(from: 0, to: data.count, by: every) {
            idat += pngChunk("IDAT", Array(data[start..<min(start + every, data.count)]))
        }
        return Array(png[..<8]) + before + idat + after
    }

    static func riffChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        Array(type.utf8) + le32(data.count) + data + (data.count & 1 == 1 ? [0] : [])
    }

    static func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func le32(_ v: Int) -> [UInt8] { be32(v).reversed() }
}

struct ShapeTestError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
