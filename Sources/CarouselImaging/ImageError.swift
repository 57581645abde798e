import CarouselPlatform

/// A file that could not be turned into pixels, with a reason a person can act on.
///
/// `description` is one log line: `"/photos/a.jpg: corrupt JPEG data: Premature end of JPEG file"`.
public struct ImageError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable {
        case notFound
        case permissionDenied
        case notARegularFile
        /// `read`/`open` failed otherwise; `call` names the system call.
        case readFailed(call: String, errno: Int32)
        case emptyFile
        case fileTooLarge(bytes: Int)
        /// None of `ImageFormat`'s formats; `detected` names the format when it is a known one.
        case unsupportedFormat(detected: String?)
        /// The header claims a size no image has (zero, or beyond the format's own limits).
        case invalidDimensions(width: Int, height: Int)
        /// Refused before any pixel memory was allocated (`max_pixels`).
        case tooManyPixels(width: Int, height: Int, limit: Int)
        /// Decoded size beyond pixman's 16.16 fixed-point coordinates.
        case sideTooLong(width: Int, height: Int)
        case corrupt(ImageFormat, detail: String)
        case unsupportedVariant(ImageFormat, detail: String)
        case outOfMemory(bytes: Int)
        /// Refused before its decode began: it would hold about `needs`
        /// bytes, more than `budget` (`[images] decode_mb`). `cause` says
        /// what takes the memory, `fix` how to make the file fit.
        case overDecodeBudget(needs: Int, budget: Int, cause: String, fix: String)
    }

    /// The file the error is about, as given to the decoder.
    public let path: String
    public let reason: Reason

    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    /// The reason alone, without the path.
    public var message: String {
        switch reason {
        case .notFound:
            return "no such file"
        case .permissionDenied:
            return "permission denied (the daemon's user cannot read it; check the file's mode and owner)"
        case .notARegularFile:
            return "not a regular file (a directory, device or pipe)"
        case let .readFailed(call, code):
            return "cannot read: \(call) failed: \(errnoDescription(code)) (errno \(code))"
        case .emptyFile:
            return "empty file"
        case let .fileTooLarge(bytes):
            return "file is \(formatBytes(bytes)), more than the \(formatBytes(ImageDecoder.maxFileBytes)) any image may take"
        case let .unsupportedFormat(detected):
            if let detected {
                return "unsupported format (\(detected), not \(Self.formatNames))"
            }
            return "unsupported format (not \(Self.formatNames))"
        case let .invalidDimensions(width, height):
            return "invalid image size \(width)x\(height) in the file header"
        case let .tooManyPixels(width, height, limit):
            // How to make it fit: smaller, or a higher limit where the key takes one.
            let pixels = Int64(width) * Int64(height)
            let raise = pixels <= Int64(ImageDecoder.maxPixelsCeiling)
                ? ", or raise max_pixels to \(pixels) where the board has the memory" : ""
            return "image is \(width)x\(height) = \(formatMegapixels(pixels)), "
                + "over the \(formatMegapixels(Int64(limit))) limit ([images] max_pixels); "
                + "scale it down to \(formatMegapixels(Int64(limit))) or less\(raise)"
        case let .sideTooLong(width, height):
            return "image is \(width)x\(height); sides longer than \(ImageDecoder.maxSide) pixels are not supported"
        case let .corrupt(format, detail):
            return "corrupt \(format.name) data: \(detail)"
        case let .unsupportedVariant(format, detail):
            return "unsupported \(format.name) variant: \(detail)"
        case let .outOfMemory(bytes):
            return "out of memory (needed \(formatBytes(bytes)) for the pixels)"
        case let .overDecodeBudget(needs, budget, cause, fix):
            return "needs about \(formatBytes(needs)) to decode (\(cause)), more than the \(formatBytes(budget)) decode budget "
                + "([images] decode_mb); \(fix)"
        }
    }

    public var description: String { "\(path): \(message)" }

    /// "JPEG, PNG, WebP, GIF, HEIF or AVIF": what the decoder reads.
    static let formatNames: String = {
        let names = ImageFormat.allCases.map(\.name)
        return names.dropLast().joined(separator: ", ") + " or " + names.last!
    }()
}

/// "900 MP", "64 MP", "2.1 MP": whole numbers from 10 MP up, one decimal below.
func formatMegapixels(_ pixels: Int64) -> String {
    let tenths = (pixels + 50_000) / 100_000
    if tenths >= 100 || tenths % 10 == 0 { return "\((pixels + 500_000) / 1_000_000) MP" }
    return "\(tenths / 10).\(tenths % 10) MP"
}

/// "812 bytes", "3 KB", "120 MB", "2 GB" (powers of 1024, rounded).
func formatBytes(_ bytes: Int) -> String {
    let units = ["KB", "MB", "GB", "TB"]
    if bytes < 1024 { return "\(bytes) bytes" }
    var value = bytes
    var unit = -1
    while value >= 1024 * 1024 && unit < units.count - 2 {
        value /= 1024
        unit += 1
    }
    return "\((value + 512) / 1024) \(units[unit + 1])"
}
