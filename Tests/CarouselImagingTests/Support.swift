import Foundation
import Testing
@testable import CarouselImaging

/// The committed fixtures, made by scripts/make-fixtures.sh with ImageMagick,
/// exiftool and python3 (never by the code under test).
enum Fixtures {
    static let directory: String = {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast()
        return parts.joined(separator: "/") + "/Fixtures"
    }()

    static func path(_ name: String) -> String { directory + "/" + name }

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path(name))))
    }
}

/// A fresh directory for files a test writes, removed when the value is dropped.
final class ScratchDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "carousel-imaging-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        // Give back any permission a test took away, so that removal succeeds for non-root users.
        if let names = try? FileManager.default.contentsOfDirectory(atPath: path) {
            for name in names { chmod(path + "/" + name, 0o644) }
        }
        try? FileManager.default.removeItem(atPath: path)
    }

    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let file = path + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return file
    }
}

/// 0xAARRGGBB of an opaque colour.
func rgb(_ r: UInt32, _ g: UInt32, _ b: UInt32) -> UInt32 { 0xFF00_0000 | r << 16 | g << 8 | b }

enum Quadrant {
    // The fixtures' base picture: 64x32, quadrants of 32x16.
    static let red = rgb(255, 0, 0)
    static let green = rgb(0, 255, 0)
    static let blue = rgb(0, 0, 255)
    static let yellow = rgb(255, 255, 0)
}

/// Largest per-channel difference between two 0xAARRGGBB pixels.
func channelDistance(_ a: UInt32, _ b: UInt32) -> Int {
    (0..<4).map { shift in
        abs(Int((a >> (8 * UInt32(shift))) & 0xFF) - Int((b >> (8 * UInt32(shift))) & 0xFF))
    }.max()!
}

func hex(_ pixel: UInt32) -> String { "0x" + String(pixel, radix: 16, uppercase: true) }

/// Checks that the pixel at (x, y) is `expected` within `tolerance` per channel.
func expectPixel(
    _ image: DecodedImage, _ x: Int, _ y: Int, _ expected: UInt32, tolerance: Int = 0,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let actual = image.pixel(x: x, y: y)
    #expect(channelDistance(actual, expected) <= tolerance,
            "pixel (\(x), \(y)) is \(hex(actual)), expected \(hex(expected)) ± \(tolerance)",
            sourceLocation: sourceLocation)
}

/// Checks the centres of the four quadrants of an image laid out like the fixtures.
func expectQuadrants(
    _ image: DecodedImage, _ topLeft: UInt32, _ topRight: UInt32, _ bottomLeft: UInt32, _ bottomRight: UInt32,
    tolerance: Int = 0, sourceLocation: SourceLocation = #_sourceLocation
) {
    let w = image.width, h = image.height
    expectPixel(image, w / 4, h / 4, topLeft, tolerance: tolerance, sourceLocation: sourceLocation)
    expectPixel(image, 3 * w / 4, h / 4, topRight, tolerance: tolerance, sourceLocation: sourceLocation)
    expectPixel(image, w / 4, 3 * h / 4, bottomLeft, tolerance: tolerance, sourceLocation: sourceLocation)
    expectPixel(image, 3 * w / 4, 3 * h / 4, bottomRight, tolerance: tolerance, sourceLocation: sourceLocation)
}

/// Decodes and expects a thrown `ImageError`, returning it.
func expectImageError(
    path: String, maxPixels: Int = ImageDecoder.defaultMaxPixels,
    sourceLocation: SourceLocation = #_sourceLocation
) -> ImageError? {
    do {
        let image = try ImageDecoder.decode(path: path, maxPixels: maxPixels)
        Issue.record("\(path) decoded to \(image.width)x\(image.height) instead of failing", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// A picture a library refused: `.corrupt(format, detail)` with the
/// library's own reason as the detail, one line, whatever its words (a
/// security update of the library may change them). The detail, or nil
/// (an issue recorded) when the error is of another kind.
@discardableResult
func expectLibraryReason(_ error: ImageError?, _ format: ImageFormat,
                         sourceLocation: SourceLocation = #_sourceLocation) -> String? {
    guard let error else { return nil }  // expectImageError recorded the picture
    guard case let .corrupt(format2, detail) = error.reason, format2 == format else {
        Issue.record("not corrupt \(format.name) data: \(error)", sourceLocation: sourceLocation)
        return nil
    }
    #expect(!detail.isEmpty && !detail.contains("\n"), "\(error)", sourceLocation: sourceLocation)
    #expect(error.message == "corrupt \(format.name) data: \(detail)", "\(error)", sourceLocation: sourceLocation)
    return detail
}
