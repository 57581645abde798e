import CarouselCore
import CarouselImaging
import CarouselVideo
#if canImport(Glibc)
import Glibc
#endif

/// A video clip through `VideoDecoder` (CVideoLoader's C around FFmpeg's
/// libavformat, libavcodec and libswscale), as the clip player and the
/// decode cache use it. The first four input bytes choose how it is asked;
/// the rest is the clip, written to a temporary file whose extension (mp4,
/// mov, mkv, webm) the first byte picks: FFmpeg's probe and the album's rule
/// both look at the name.
///
/// * Opening, decoding, drawing, rewinding and the poster either succeed or
///   throw a `VideoError` that names the clip's path and is one line.
/// * `info`: the coded size positive and within `maxPixels`, the upright
///   size the coded size turned by the rotation, a duration nil or finite
///   and not negative, a frame rate nil or finite and positive.
/// * At most `maxFrames` frames are decoded, each with a finite time, and
///   `framesDecoded` counts them (0 again after a rewind).
/// * Every frame is drawn into a small destination (its size, stride and
///   the rectangle chosen from the input: inside, over one or two edges,
///   beyond every side, or wholly outside) with a guard band before and
///   after it: the band, the row padding and every pixel of the destination
///   outside the rectangle keep their sentinel bytes; every pixel inside
///   the rectangle's visible part is written and opaque (alpha 0xFF).
/// * After one rewind the first frame decodes and draws again.
/// * The poster fits `maxSide`, is never larger than the upright size (and
///   is exactly it when that fits), and is opaque.
///
/// One input's work is bounded: inputs longer than `maxInputSize` are
/// skipped, at most `maxFrames` frames are asked for, and `maxPixels` is
/// small (at most 256x256), so neither a decoder's frames nor a draw can
/// grow with what the file declares.
///
/// The seeds (Fuzz/corpus/clip) are tiny clips made by Debian 12's ffmpeg
/// from `testsrc2`, with these four bytes in front.
enum ClipProperties {
    /// Larger inputs are not tried: scripts/fuzz.sh's -max_len is below it.
    static let maxInputSize = 1 << 16
    static let maxFrames = 8
    static let extensions = ["mp4", "mov", "mkv", "webm"]
    static let maxPixelsChoices = [1024, 4096, 16384, 65536]
    static let headerSize = 4
    /// Bytes around the destination that no draw may touch.
    static let guardBytes = 64
    /// What every byte outside a draw's rectangle keeps, and every pixel
    /// inside starts as: its alpha byte (the last, little-endian) is not 0xFF.
    static let sentinel: [UInt8] = [0x5A, 0xA5, 0x3C, 0x00]

    static func check(_ input: [UInt8]) throws(PropertyFailure) {
        guard input.count > headerSize, input.count <= maxInputSize else { return }
        let ext = extensions[Int(input[0] & 3)]
        let maxPixels = maxPixelsChoices[Int(input[0] >> 2 & 3)]
        let scaler = VideoScaler.allCases[Int(input[0] >> 4 & 3)]
        let accurate = input[0] & 0x40 != 0
        let maxSide = 1 + Int(input[1] & 31)
        var geometry = Geometry(seed: UInt32(input[1]) << 16 | UInt32(input[2]) << 8 | UInt32(input[3]))

        let path = try writeTemporary(input[headerSize...], extension: ext)
        defer { unlink(path) }

        var opened: VideoInfo?
        switch attempt({ () throws(VideoError) in try VideoDecoder(path: path, hardware: false, maxPixels: maxPixels) }) {
        case .failure(let error): try checkError(error, path: path)
        case .success(let decoder):
            decoder.scaler = scaler
            decoder.accurateRounding = accurate
            opened = decoder.info
            try checkInfo(decoder.info, maxPixels: maxPixels)
            var frames = 0
            decoding: while frames < maxFrames {
                switch attempt({ () throws(VideoError) in try decoder.next() }) {
                case .failure(let error):
                    try checkError(error, path: path)
                    break decoding
                case .success(nil): break decoding
                case .success(let time?):
                    frames += 1
                    try require(decoder.framesDecoded == frames, "framesDecoded \(decoder.framesDecoded) after \(frames) frames")
                    try require(time.isFinite, "frame \(frames) at \(time) s")
                    try draw(decoder, geometry.next(), path: path)
                }
            }
            try require(decoder.framesDecoded <= maxFrames, "\(decoder.framesDecoded) frames decoded, asked for \(maxFrames)")

            if case .failure(let error) = attempt({ () throws(VideoError) in try decoder.rewind() }) {
                try checkError(error, path: path)
            } else {
                try require(decoder.framesDecoded == 0, "framesDecoded \(decoder.framesDecoded) after a rewind")
                switch attempt({ () throws(VideoError) in try decoder.next() }) {
                case .failure(let error): try checkError(error, path: path)
                case .success(nil): break
                case .success(let time?):
                    try require(decoder.framesDecoded == 1, "framesDecoded \(decoder.framesDecoded) after a rewind and a frame")
                    try require(time.isFinite, "the first frame again at \(time) s")
                    try draw(decoder, geometry.next(), path: path)
                }
            }
        }

        switch attempt({ () throws(VideoError) in try VideoDecoder.poster(path: path, maxPixels: maxPixels, maxSide: maxSide) }) {
        case .failure(let error): try checkError(error, path: path)
        case .success(let poster):
            try require(poster.width > 0 && poster.height > 0 && poster.width <= maxSide && poster.height <= maxSide,
                        "a \(poster.size) poster for a longest side of \(maxSide)")
            if let upright = opened?.uprightSize {
                try require(poster.width <= upright.width && poster.height <= upright.height,
                            "a \(poster.size) poster of a \(upright) clip")
                if upright.width <= maxSide && upright.height <= maxSide {
                    try require(poster.size == upright, "a \(poster.size) poster of a \(upright) clip that fits \(maxSide)")
                }
            }
            let opaque = poster.withUnsafeBytes { bytes in
                (0..<poster.height).allSatisfy { y in
                    (0..<poster.width).allSatisfy { x in bytes[y * poster.stride + x * 4 + 3] == 0xFF }
                }
            }
            try require(opaque, "the \(poster.size) poster has pixels that are not opaque")
        }
    }

    /// A call into the video room, its value or its error.
    static func attempt<T>(_ body: () throws(VideoError) -> T) -> Result<T, VideoError> {
        do {
            return .success(try body())
        } catch {
            return .failure(error)
        }
    }

    static func checkInfo(_ info: VideoInfo, maxPixels: Int) throws(PropertyFailure) {
        let coded = info.codedSize
        try require(coded.width > 0 && coded.height > 0 && coded.width * coded.height <= maxPixels,
                    "coded size \(coded) with max_pixels \(maxPixels)")
        let turned = info.rotation == .clockwise90 || info.rotation == .clockwise270 ? coded.transposed : coded
        try require(info.uprightSize == turned, "upright size \(info.uprightSize) for \(coded) turned \(info.rotation)")
        if let duration = info.duration {
            try require(duration.isFinite && duration >= 0, "duration \(duration)")
        }
        if let rate = info.frameRate {
            try require(rate.isFinite && rate > 0, "frame rate \(rate)")
        }
    }

    static func checkError(_ error: VideoError, path: String) throws(PropertyFailure) {
        try require(error.path == path && error.description.hasPrefix(path + ": "), "an error that does not name the clip: \(error)")
        try require(!error.reason.isEmpty, "an error without a reason: \(error)")
        try requireOneLine(error.description, "the error")
    }

    /// A destination and the rectangle drawn into it.
    struct Draw {
        var width: Int, height: Int, stride: Int
        var rect: PixelRect
    }

    /// Destinations and rectangles from the input's bytes: a small
    /// generator (xorshift32), so that eight frames get eight different draws.
    struct Geometry {
        var state: UInt32
        init(seed: UInt32) { state = seed | 1 }

        mutating func number(_ bound: Int) -> Int {
            state ^= state << 13
            state ^= state >> 17
            state ^= state << 5
            return Int(state % UInt32(bound))
        }

        mutating func next() -> Draw {
            let width = 1 + number(24), height = 1 + number(16)
            let stride = (width + number(3)) * 4
            let rect: PixelRect
            switch number(4) {
            case 0:  // inside
                let w = 1 + number(width), h = 1 + number(height)
                rect = PixelRect(x: number(width - w + 1), y: number(height - h + 1), width: w, height: h)
            case 1:  // over one or two edges
                let w = 1 + number(2 * width), h = 1 + number(2 * height)
                rect = PixelRect(x: number(width + w) - w + 1, y: number(height + h) - h + 1, width: w, height: h)
            case 2:  // beyond every side, as a cover crop
                let left = 1 + number(16), top = 1 + number(16)
                rect = PixelRect(x: -left, y: -top, width: left + width + 1 + number(16), height: top + height + 1 + number(16))
            default:  // wholly outside, or empty
                let w = number(8), h = number(8)
                rect = [PixelRect(x: width + number(4), y: 0, width: w, height: h),
                        PixelRect(x: 0, y: -h - number(4), width: w, height: h),
                        PixelRect(x: number(width), y: number(height), width: 0, height: h)][number(3)]
            }
            return Draw(width: width, height: height, stride: stride, rect: rect)
        }
    }

    /// Draws the current frame with the guard band around the destination,
    /// then checks every byte.
    static func draw(_ decoder: VideoDecoder, _ d: Draw, path: String) throws(PropertyFailure) {
        let size = guardBytes + d.stride * d.height + guardBytes
        var buffer = (0..<size).map { sentinel[$0 % 4] }
        let result = buffer.withUnsafeMutableBytes { bytes in
            attempt { () throws(VideoError) in
                try decoder.draw(into: bytes.baseAddress! + guardBytes, width: d.width, height: d.height, stride: d.stride, rect: d.rect)
            }
        }
        var failed = false
        if case .failure(let error) = result {
            try checkError(error, path: path)
            failed = true
        }
        let visible = d.rect.intersection(PixelRect(x: 0, y: 0, width: d.width, height: d.height))
        let drawn = !failed && visible.width > 0 && visible.height > 0
        for i in 0..<size {
            let offset = i - guardBytes
            let (y, column) = (offset / d.stride, offset % d.stride / 4)
            let inside = drawn && offset >= 0 && offset < d.stride * d.height && offset % d.stride < d.width * 4
                && visible.x <= column && column < visible.x + visible.width && visible.y <= y && y < visible.y + visible.height
            if inside {
                // Its alpha byte (native-endian 0xAARRGGBB: the last on little-endian machines).
                if offset % 4 == 3 {
                    try require(buffer[i] == 0xFF, "pixel (\(column), \(y)) of \(d.rect) on \(d.width)x\(d.height) is "
                                + "not written opaque: alpha \(buffer[i])")
                }
            } else if !failed || offset < 0 || offset >= d.stride * d.height || offset % d.stride >= d.width * 4 {
                try require(buffer[i] == sentinel[i % 4], "drawing \(d.rect) on \(d.width)x\(d.height) stride \(d.stride) "
                            + "wrote byte \(offset) (\(buffer[i]) for \(sentinel[i % 4]))")
            }
        }
    }

    /// The clip's bytes in a new file of the temporary folder named *.EXT (mkstemps).
    static func writeTemporary(_ bytes: ArraySlice<UInt8>, extension ext: String) throws(PropertyFailure) -> String {
        let folder = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(folder)/carousel-fuzz-clip-XXXXXX.\(ext)".utf8CString)
        let fd = mkstemps(&template, Int32(ext.utf8.count + 1))
        try require(fd >= 0, "cannot make a temporary file in \(folder): errno \(errno)")
        let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        if written != bytes.count {
            unlink(path)
            try require(false, "cannot write \(bytes.count) bytes to \(path): errno \(errno)")
        }
        return path
    }
}
