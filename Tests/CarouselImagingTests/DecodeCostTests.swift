import Foundation
import Testing
@testable import CarouselImaging

/// Decodes `name` with `budget`, in this process.
private func decode(_ name: String, budget: Int, targetSize: PixelSize? = nil) -> Result<DecodedImage, ImageError> {
    Result { () throws(ImageError) -> DecodedImage in
        try ImageDecoder.decode(FileContents(copying: try! Fixtures.bytes(name)), path: "/photos/" + name,
                                targetSize: targetSize, fit: .cover, maxPixels: ImageDecoder.defaultMaxPixels,
                                decodeBudget: budget, process: nil)
    }
}

/// The refusal's figures, or nil (recording an issue) when it decoded or failed otherwise.
private func refusal(_ result: Result<DecodedImage, ImageError>,
                     sourceLocation: SourceLocation = #_sourceLocation) -> (needs: Int, budget: Int, message: String)? {
    switch result {
    case let .failure(error):
        if case let .overDecodeBudget(needs, budget, _, _) = error.reason { return (needs, budget, error.description) }
        Issue.record("failed otherwise: \(error)", sourceLocation: sourceLocation)
    case let .success(image):
        Issue.record("decoded to \(image.size) within the budget", sourceLocation: sourceLocation)
    }
    return nil
}

/// The smallest budget `name` decodes within: the cost the decoder counts.
private func cost(_ name: String, targetSize: PixelSize? = nil) -> Int? {
    refusal(decode(name, budget: 1, targetSize: targetSize))?.needs
}

@Suite("every decode has a memory budget: counted from the header, refused with a reason and a fix")
struct DecodeCostTests {
    @Test("a progressive JPEG counts libjpeg's coefficients of the whole picture; a baseline one none")
    func jpegCoefficients() throws {
        // progressive.jpg: 64x32, three components sampled 1x1, 8x4 blocks
        // each of 64 two-byte coefficients.
        let progressive = try JPEGDecompressor(FileContents(copying: try Fixtures.bytes("progressive.jpg")), path: "p")
        _ = try progressive.readHeader()
        #expect(progressive.coefficientBytes == 3 * 8 * 4 * 128)
        let baseline = try JPEGDecompressor(FileContents(copying: try Fixtures.bytes("quadrants.jpg")), path: "q")
        _ = try baseline.readHeader()
        #expect(baseline.coefficientBytes == 0)

        let file = try Fixtures.bytes("progressive.jpg").count
        #expect(cost("progressive.jpg") == file + 12288 + 64 * 32 * 4)
        // Reduced for a small screen: the pixels shrink, the coefficients do not.
        #expect(cost("progressive.jpg", targetSize: PixelSize(width: 16, height: 8)) == file + 12288 + 16 * 8 * 4)
    }

    @Test("a lossless WebP counts libwebp's full-size pixels; a lossy one decodes reduced and counts only ours")
    func webp() throws {
        let lossless = try Fixtures.bytes("quadrants-lossless.webp").count
        #expect(cost("quadrants-lossless.webp", targetSize: PixelSize(width: 16, height: 8)) == lossless + 64 * 32 * 4 + 16 * 8 * 4)
        let lossy = try Fixtures.bytes("quadrants.webp").count
        #expect(cost("quadrants.webp", targetSize: PixelSize(width: 16, height: 8)) == lossy + 16 * 8 * 4)
    }

    @Test("HEIF and AVIF count libheif's whole decode: 12 bytes a pixel, 22 with alpha (or more than 8 bits)")
    func heif() throws {
        #expect(cost("quadrants.heic") == (try Fixtures.bytes("quadrants.heic").count) + 64 * 32 * 12)
        // 10 bits a sample.
        #expect(cost("deep10.heic") == (try Fixtures.bytes("deep10.heic").count) + 64 * 32 * 22)
        #expect(cost("alpha.avif").map { $0 - (try! Fixtures.bytes("alpha.avif").count) } ==
                ImageShape.uprightSize(path: Fixtures.path("alpha.avif")).map { $0.width * $0.height * 22 })
    }

    @Test("exactly the cost decodes, a byte less is refused", arguments: [
        "progressive.jpg", "quadrants.jpg", "quadrants.png", "quadrants.webp", "quadrants-lossless.webp", "quadrants.gif",
        "quadrants.heic", "quadrants.avif", "alpha.png", "animated.webp", "large.jpg", "deep10.heic",
    ])
    func boundary(name: String) throws {
        let needs = try #require(cost(name))
        #expect(throws: Never.self) { try decode(name, budget: needs).get() }
        let refused = try #require(refusal(decode(name, budget: needs - 1)))
        #expect(refused.needs == needs && refused.budget == needs - 1)
        #expect(refused.message.hasPrefix("/photos/\(name): needs about "), "\(refused.message)")
        #expect(refused.message.contains("decode budget ([images] decode_mb); save it "), "\(refused.message)")
    }

    @Test("a file its header puts over max_pixels is refused from the header alone; within, nothing is refused unread")
    func overMaxPixelsUnread() throws {
        // decode(path:) asks this before it reads the file (the test below
        // shows the order, by the reason it gives).
        #expect(throws: ImageError(path: Fixtures.path("huge-gray1.png"),
                                   reason: .tooManyPixels(width: 7900, height: 7900, limit: 1_000_000))) {
            try ImageDecoder.refuseUnread(path: Fixtures.path("huge-gray1.png"), maxPixels: 1_000_000, decodeBudget: .max)
        }
        #expect(throws: Never.self) {
            try ImageDecoder.refuseUnread(path: Fixtures.path("huge-gray1.png"), maxPixels: 64_000_000, decodeBudget: 1 << 20)
            try ImageDecoder.refuseUnread(path: "/nonexistent/x.jpg", maxPixels: 1, decodeBudget: 1)
        }
    }

    @Test("a file larger by itself than the decode budget is refused before it is read")
    func fileOverBudgetUnread() throws {
        let scratch = try ScratchDirectory()
        let path = try scratch.write("padded.png", try Fixtures.bytes("quadrants.png"))
        #expect(truncate(path, off_t(64 << 20)) == 0)
        do {
            _ = try ImageDecoder.decode(path: path, targetSize: PixelSize(width: 64, height: 32), decodeBudget: 32 << 20)
            Issue.record("decoded")
        } catch {
            // Read first, the cost would name the file and the pixels ("the file's 64 MB and its ...").
            guard case let .overDecodeBudget(needs, budget, cause, fix) = error.reason else {
                Issue.record("not a budget refusal: \(error)")
                return
            }
            #expect(needs == 64 << 20 && budget == 32 << 20)
            #expect(cause == "the file alone is 64 MB, read into memory to decode it")
            #expect(fix.hasPrefix("save it "), "\(fix)")
        }
    }

    @Test("the line says what takes the memory and how to make it fit")
    func messages() throws {
        func reason(_ format: ImageFormat, stored: PixelSize, file: Int, codec: Int, pixels: Int, lossless: Bool = false,
                    budget: Int) -> String {
            let cost = DecodeCost(format: format, stored: stored, file: file, codec: codec, pixels: pixels, lossless: lossless)
            return ImageError(path: "/p/x", reason: cost.refusal(budget: budget)).description
        }
        // A 48 MP progressive JPEG (4:2:0: 144 MB of coefficients) on a
        // 128 MiB budget; as a baseline JPEG it would fit.
        let mb = 1 << 20
        let jpeg = reason(.jpeg, stored: PixelSize(width: 8000, height: 6000), file: 20 * mb, codec: 144_000_000,
                          pixels: 2000 * 1500 * 4, budget: 128 * mb)
        #expect(jpeg == "/p/x: needs about 169 MB to decode (a progressive JPEG: libjpeg keeps all of its 48 MP's "
                + "coefficients, 137 MB), more than the 128 MB decode budget ([images] decode_mb); save it as a baseline "
                + "JPEG (not progressive), or at 33 MP or less, or raise decode_mb if the board has the memory", "\(jpeg)")
        // A lossless WebP whose file alone passes the budget: only fewer pixels help.
        let webp = reason(.webp, stored: PixelSize(width: 6000, height: 4000), file: 200 * mb, codec: 96_000_000,
                          pixels: 1920 * 1280 * 4, lossless: true, budget: 128 * mb)
        #expect(webp.contains("(a lossless WebP: libwebp keeps all of its 24 MP at 4 bytes a pixel, 92 MB)"), "\(webp)")
        #expect(webp.contains("; save it at "), "\(webp)")
        #expect(!webp.contains("lossy"), "\(webp)")
        let heic = reason(.heif, stored: PixelSize(width: 8000, height: 6000), file: 10 * mb, codec: 48_000_000 * 8,
                          pixels: 48_000_000 * 4, budget: 200 * mb)
        #expect(heic.contains("(48 MP decoded whole by libheif, about 12 bytes a pixel)"), "\(heic)")
        #expect(heic.contains("; save it at 15 MP or less, or as a JPEG, or raise decode_mb"), "\(heic)")
    }
}
