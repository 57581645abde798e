import Foundation
import Testing
@testable import CarouselImaging

@Suite("Broken files: every one throws an ImageError with a clear line, none crashes")
struct BrokenFileTests {
    @Test("truncated JPEG, PNG, WebP, GIF, HEIF and AVIF at several lengths", arguments: [
        "quadrants.jpg", "progressive.jpg", "quadrants.png", "interlaced.png", "quadrants.webp",
        "quadrants-lossless.webp", "orientation-6.webp", "animated.webp", "partial-frame.webp",
        "quadrants.gif", "interlaced.gif", "transparent.gif", "local-colormap.gif",
        "quadrants.heic", "irot-3-exif-6.heic", "quadrants.avif", "alpha.avif",
    ])
    func truncated(name: String) throws {
        let bytes = try Fixtures.bytes(name)
        let scratch = try ScratchDirectory()
        // From a few bytes into the signature to a few bytes short of the end.
        // (A file cut only inside its trailer, JPEG's EOI or PNG's IEND, still
        // has every pixel and decodes; the shortest cut here removes 16 bytes.)
        // HEIF starts with its first box's size, any four bytes: only from the
        // fifth byte ("f" of "ftyp") is it told from an unknown file.
        let shortest = name.hasSuffix(".heic") || name.hasSuffix(".avif") ? 5 : 1
        let lengths = [1, 2, 5, 7, 9, 12, 30, bytes.count / 3, bytes.count / 2, bytes.count * 3 / 4, bytes.count - 16]
        for length in Set(lengths) where length >= shortest && length < bytes.count {
            let path = try scratch.write("cut-\(length)-\(name)", Array(bytes.prefix(length)))
            guard let error = expectImageError(path: path) else { continue }
            #expect(error.path == path)
            switch error.reason {
            case .corrupt, .invalidDimensions:
                break
            default:
                Issue.record("\(name) cut to \(length) bytes: unexpected \(error)")
            }
            #expect(error.description.hasPrefix(path + ": "))
            #expect(!error.message.contains("\n"))
        }
    }

    /// libjpeg's words are libjpeg's ("Premature end of JPEG file" in
    /// libjpeg-turbo 2.1): the line carries them after the file and the
    /// format, whatever they are.
    @Test("a truncated JPEG names libjpeg's reason")
    func truncatedJPEGMessage() throws {
        let bytes = try Fixtures.bytes("quadrants.jpg")
        let scratch = try ScratchDirectory()
        let path = try scratch.write("half.jpg", Array(bytes.prefix(bytes.count - 40)))
        let error = expectImageError(path: path)
        let detail = expectLibraryReason(error, .jpeg)
        #expect(error?.description == "\(path): corrupt JPEG data: \(detail ?? "")")
    }

    @Test("a truncated PNG and WebP say so")
    func truncatedMessages() throws {
        let scratch = try ScratchDirectory()
        let png = try Fixtures.bytes("quadrants.png")
        let pngPath = try scratch.write("cut.png", Array(png.prefix(png.count - 30)))
        #expect(expectImageError(path: pngPath)?.message.hasPrefix("corrupt PNG data:") == true)

        let webp = try Fixtures.bytes("quadrants.webp")
        let webpPath = try scratch.write("cut.webp", Array(webp.prefix(webp.count / 2)))
        let message = expectImageError(path: webpPath)?.message ?? ""
        #expect(message.hasPrefix("corrupt WebP data:"), "\(message)")

        let tiny = try scratch.write("two.jpg", [0xFF, 0xD8])
        #expect(expectImageError(path: tiny)?.message == "corrupt JPEG data: file is truncated (2 bytes)")

        let gif = try Fixtures.bytes("quadrants.gif")
        let gifPath = try scratch.write("cut.gif", Array(gif.prefix(gif.count / 2)))
        #expect(expectImageError(path: gifPath)?.message == "corrupt GIF data: file is truncated")

        let heic = try Fixtures.bytes("quadrants.heic")
        let heicPath = try scratch.write("cut.heic", Array(heic.prefix(heic.count - 40)))
        let heicMessage = expectImageError(path: heicPath)?.message ?? ""
        #expect(heicMessage.hasPrefix("corrupt HEIF data:"), "\(heicMessage)")
    }

    @Test("an animation cut inside its first frame is an error, not a partial picture",
          arguments: ["animated.webp", "animated.gif"])
    func truncatedAnimation(name: String) throws {
        let bytes = try Fixtures.bytes(name)
        let scratch = try ScratchDirectory()
        let path = try scratch.write("cut-\(name)", Array(bytes.prefix(bytes.count / 3)))
        guard case .corrupt? = expectImageError(path: path)?.reason else {
            Issue.record("\(name) cut to a third did not fail as corrupt")
            return
        }
    }

    @Test("garbage bytes after a valid signature, and garbage without one")
    func garbage() throws {
        let scratch = try ScratchDirectory()
        var rng = SplitMix64(seed: 42)
        let noise = (0..<4096).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        let signatures: [(String, [UInt8])] = [
            ("garbage.jpg", [0xFF, 0xD8, 0xFF]),
            ("garbage.png", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
            ("garbage.webp", Array("RIFF".utf8) + [0x00, 0x10, 0x00, 0x00] + Array("WEBP".utf8)),
            ("garbage.gif", Array("GIF89a".utf8)),
            ("garbage.heic", [0x00, 0x00, 0x00, 0x18] + Array("ftypheic".utf8)),
            ("garbage.avif", [0x00, 0x00, 0x00, 0x18] + Array("ftypavif".utf8)),
        ]
        for (name, signature) in signatures {
            let path = try scratch.write(name, signature + noise)
            let error = expectImageError(path: path)
            guard case .corrupt? = error?.reason else {
                Issue.record("\(name): expected corrupt, got \(String(describing: error))")
                continue
            }
        }
        let path = try scratch.write("noise.jpg", [0x00, 0x01] + noise)
        #expect(expectImageError(path: path)?.message == "unsupported format (not JPEG, PNG, WebP, GIF, HEIF or AVIF)")
    }

    @Test("random damage inside real files never crashes the decoder (deterministic fuzz)",
          arguments: ["quadrants.jpg", "progressive.jpg", "quadrants.png", "interlaced.png", "palette-trns.png",
                      "quadrants.webp", "alpha.webp", "orientation-6.jpg", "animated.webp", "partial-frame.webp",
                      "quadrants.gif", "interlaced.gif", "transparent.gif", "partial-frame.gif",
                      "quadrants.heic", "irot-3-exif-6.heic", "quadrants.avif", "alpha.avif"])
    func fuzz(name: String) throws {
        let original = try Fixtures.bytes(name)
        var rng = SplitMix64(seed: 7)
        for round in 0..<150 {
            var bytes = original
            for _ in 0..<Int(rng.next() % 4 + 1) {
                bytes[Int(rng.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: rng.next())
            }
            do {
                // Damage may be harmless (ancillary data, a DC coefficient): decoding is fine.
                let image = try ImageDecoder.decode(bytes: bytes, name: "\(name)#\(round)")
                #expect(image.width > 0 && image.height > 0)
            } catch {
                #expect(!error.message.isEmpty)
            }
        }
    }

    @Test("an empty file")
    func empty() throws {
        let scratch = try ScratchDirectory()
        let path = try scratch.write("empty.jpg", [])
        let error = expectImageError(path: path)
        #expect(error?.reason == .emptyFile)
        #expect(error?.message == "empty file")
        #expect(throws: ImageError(path: "mem", reason: .emptyFile)) {
            try ImageDecoder.decode(bytes: [UInt8](), name: "mem")
        }
    }

    @Test("a text file named .jpg, an MP4 video named .heic, and a bare RIFF that is not WebP")
    func notImages() throws {
        let text = expectImageError(path: Fixtures.path("text.jpg"))
        #expect(text?.reason == .unsupportedFormat(detected: "text"))
        #expect(text?.message == "unsupported format (text, not JPEG, PNG, WebP, GIF, HEIF or AVIF)")

        let scratch = try ScratchDirectory()
        let video = try scratch.write("clip.heic", [0x00, 0x00, 0x00, 0x18] + Array("ftypisom".utf8) + [UInt8](repeating: 0, count: 64))
        #expect(expectImageError(path: video)?.message
            == "unsupported format (MP4 or QuickTime video, not JPEG, PNG, WebP, GIF, HEIF or AVIF)")

        let wave = try scratch.write("sound.webp", Array("RIFF".utf8) + [4, 0, 0, 0] + Array("WAVEfmt ".utf8))
        #expect(expectImageError(path: wave)?.reason == .unsupportedFormat(detected: "RIFF, but not WebP"))
    }

    @Test("a PNG whose image data fails its CRC")
    func badCRC() {
        // libpng's words ("IDAT: CRC error" in 1.6.39), after the format.
        expectLibraryReason(expectImageError(path: Fixtures.path("bad-crc.png")), .png)
    }

    @Test("a PNG with zero width")
    func zeroWidth() {
        // libpng validates IHDR itself and refuses a zero width ("Invalid
        // IHDR data: Image width is zero in IHDR" in 1.6.39).
        expectLibraryReason(expectImageError(path: Fixtures.path("zero-width.png")), .png)
    }

    @Test("a missing file, a directory, and a FIFO")
    func notFiles() throws {
        #expect(expectImageError(path: "/nonexistent/photo.jpg")?.message == "no such file")
        let scratch = try ScratchDirectory()
        #expect(expectImageError(path: scratch.path)?.reason == .notARegularFile)
        let fifo = scratch.path + "/pipe.jpg"
        #expect(mkfifo(fifo, 0o600) == 0)
        // Opening a FIFO without O_NONBLOCK would hang here until a writer came.
        #expect(expectImageError(path: fifo)?.reason == .notARegularFile)
    }

    @Test("an unreadable file (chmod 000)", .enabled(if: getuid() != 0, "root reads any file; run as a user to check"))
    func unreadable() throws {
        let scratch = try ScratchDirectory()
        let path = try scratch.write("secret.jpg", Fixtures.bytes("quadrants.jpg"))
        #expect(chmod(path, 0) == 0)
        let error = expectImageError(path: path)
        #expect(error?.reason == .permissionDenied)
        #expect(error?.message.hasPrefix("permission denied") == true)
    }

    @Test("a read failure's message names the call and errno")
    func readFailedMessage() {
        let error = ImageError(path: "/p.jpg", reason: .readFailed(call: "read", errno: EIO))
        #expect(error.description == "/p.jpg: cannot read: read failed: Input/output error (errno 5)")
    }
}

@Suite("max_pixels: decompression bombs are refused before any pixel memory is allocated")
struct PixelLimitTests {
    /// Records every pixel-buffer allocation the decoder asks for, for this task only.
    final class Allocations: @unchecked Sendable {
        private let lock = NSLock()
        private var sizes: [Int] = []
        func record(_ bytes: Int) { lock.withLock { sizes.append(bytes) } }
        var all: [Int] { lock.withLock { sizes } }
    }

    @Test("huge headers in tiny files", arguments: [
        ("bomb.jpg", 30000, 30000, "900 MP"), ("bomb.png", 30000, 30000, "900 MP"),
        ("bomb.webp", 16383, 16383, "268 MP"),
    ])
    func bombs(name: String, width: Int, height: Int, megapixels: String) throws {
        let allocations = Allocations()
        let error = DecodedImage.$allocationObserver.withValue({ allocations.record($0) }) {
            expectImageError(path: Fixtures.path(name))
        }
        #expect(error?.reason == .tooManyPixels(width: width, height: height, limit: 64_000_000))
        #expect(error?.message == "image is \(width)x\(height) = \(megapixels), over the 64 MP limit ([images] max_pixels); "
                + "scale it down to 64 MP or less, or raise max_pixels to \(width * height) where the board has the memory")
        #expect(allocations.all.isEmpty, "allocated \(allocations.all) bytes before refusing")
        // The file is tiny: the refusal came from the header alone.
        #expect(try Fixtures.bytes(name).count < 1024)
    }

    @Test("past what max_pixels can take, the line says only to scale it down")
    func pastTheCeiling() {
        let error = ImageError(path: "/p/huge.png", reason: .tooManyPixels(width: 32767, height: 32767, limit: 64_000_000))
        #expect(error.message == "image is 32767x32767 = 1074 MP, over the 64 MP limit ([images] max_pixels); scale it down to 64 MP or less")
        let atCeiling = ImageError(path: "/p/big.png", reason: .tooManyPixels(width: 40000, height: 25000, limit: 64_000_000))
        #expect(atCeiling.message.hasSuffix("or raise max_pixels to 1000000000 where the board has the memory"))
    }

    @Test("the limit is the caller's, and the upright size is reported")
    func customLimit() throws {
        let allocations = Allocations()
        let error = DecodedImage.$allocationObserver.withValue({ allocations.record($0) }) {
            expectImageError(path: Fixtures.path("large-rotated.jpg"), maxPixels: 100_000)
        }
        // 800x600 stored, orientation 6: shown as 600x800.
        #expect(error?.message == "image is 600x800 = 0.5 MP, over the 0.1 MP limit ([images] max_pixels); "
                + "scale it down to 0.1 MP or less, or raise max_pixels to 480000 where the board has the memory")
        #expect(allocations.all.isEmpty)
        // At the limit exactly, it decodes; and an observer sees the one buffer.
        let image = try DecodedImage.$allocationObserver.withValue({ allocations.record($0) }) {
            try ImageDecoder.decode(path: Fixtures.path("quadrants.png"), maxPixels: 64 * 32)
        }
        #expect(image.size == PixelSize(width: 64, height: 32))
        #expect(allocations.all == [64 * 32 * 4])
    }

    @Test("megapixel and byte formatting")
    func formatting() {
        #expect(formatMegapixels(900_000_000) == "900 MP")
        #expect(formatMegapixels(64_000_000) == "64 MP")
        #expect(formatMegapixels(2_100_000) == "2.1 MP")
        #expect(formatMegapixels(268_402_689) == "268 MP")
        #expect(formatBytes(812) == "812 bytes")
        #expect(formatBytes(3000) == "3 KB")
        #expect(formatBytes(120 << 20) == "120 MB")
        #expect(formatBytes(1 << 30) == "1 GB")
    }
}
