import CarouselImaging

/// The fuzz targets: one input format of carouseld each, with the
/// properties every input must keep. `carousel-fuzz` (built with libFuzzer
/// by scripts/fuzz.sh) feeds them generated inputs; `swift test` replays the
/// committed seeds and regression inputs through the same checks.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// `carouseld.ini`: the INI parser and the schema of every key.
    case config
    /// A control socket connection: request lines through the real server.
    case control
    /// The EXIF Orientation reader, in JPEG, PNG and WebP containers.
    case exif
    /// Face regions in XMP (MWG and Microsoft's), in JPEG, PNG, WebP and HEIF.
    case faces
    /// Each image decoder through its C library (and shim): libjpeg-turbo,
    /// libpng, libwebp (and libwebpdemux), giflib, and libheif for HEIF
    /// (libde265) and AVIF (dav1d).
    case jpeg, png, webp, gif, heif, avif
    /// `carouseld simulate` scripts: parse and run.
    case simulate
    /// Video clips (mp4, mov, mkv, webm) through `VideoDecoder`: CVideoLoader's
    /// C around FFmpeg's demuxers, decoders and libswscale.
    case clip

    /// HEIF and AVIF: decoded by the daemon only in its helper process,
    /// whose address space is capped (`DecodingProcess.addressSpaceAllowance`).
    public var decodesUnderHelperLimits: Bool { self == .heif || self == .avif }

    /// Caps this process as the daemon's decoding helper is capped for the
    /// largest max_pixels the decoder targets pick: for the replayer of a
    /// plain build, which has no AddressSanitizer to refuse what the helper
    /// would refuse. False when this target needs the cap and it could not be set.
    public func applyHelperLimits() -> Bool {
        guard decodesUnderHelperLimits else { return true }
        return DecodingProcess.limitAddressSpace(maxPixels: DecoderProperties.maxPixelsChoices.max()!)
    }

    /// Runs one input; throws when a property does not hold. A trap or a
    /// sanitizer report inside the code under test is a failure too.
    public func check(_ input: [UInt8]) throws(PropertyFailure) {
        switch self {
        case .config: try ConfigProperties.check(input)
        case .control: try ControlProperties.check(input)
        case .exif: try ExifProperties.check(input)
        case .faces: try FaceProperties.check(input)
        case .jpeg: try DecoderProperties.check(input, format: .jpeg)
        case .png: try DecoderProperties.check(input, format: .png)
        case .webp: try DecoderProperties.check(input, format: .webp)
        case .gif: try DecoderProperties.check(input, format: .gif)
        case .heif: try DecoderProperties.check(input, format: .heif)
        case .avif: try DecoderProperties.check(input, format: .avif)
        case .simulate: try SimulationProperties.check(input)
        case .clip: try ClipProperties.check(input)
        }
    }
}

/// A property that did not hold for an input: what was expected and what came.
public struct PropertyFailure: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

@inline(__always)
func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(PropertyFailure) {
    if !condition { throw PropertyFailure(message()) }
}

/// Lines as the parsers count them: split on newline characters ("\r\n" is one).
func lineCount(_ text: String) -> Int {
    text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).count
}

/// An error meant for one log line must be one line: a newline in it would
/// let a file's contents forge further log lines.
func requireOneLine(_ text: String, _ what: String) throws(PropertyFailure) {
    try require(!text.contains(where: \.isNewline), "\(what) spans several lines: \(text.debugDescription)")
}
