import CVideoLoader
import CarouselCore
import CarouselImaging

/// Which files are clips: the album's rule (`ClipName`, in the imaging room).
public enum VideoFile {
    /// Lower-case extensions of clips the album shows: mp4, m4v, mov, mkv, webm.
    public static let fileExtensions = Set(ClipName.fileExtensions)

    /// Whether `path` names a clip (by extension, case-insensitive).
    public static func isClip(_ path: String) -> Bool { ClipName.isClip(path) }
}

/// Why a clip cannot be opened, decoded or drawn: one phrase for a log line.
public struct VideoError: Error, Equatable, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): \(reason)" }
}

/// What a clip is, as its container and first frame say.
public struct VideoInfo: Equatable, Sendable {
    /// The stream's frames as decoded.
    public var codedSize: PixelSize
    /// The clockwise turn that makes the frames upright (the container's
    /// display matrix, e.g. a phone's portrait clip).
    public var rotation: Rotation
    /// `codedSize` after `rotation`.
    public var uprightSize: PixelSize
    /// Seconds; nil when the container does not say.
    public var duration: Double?
    /// Average frames per second; nil when unknown.
    public var frameRate: Double?
    /// The stream's codec, e.g. "h264".
    public var codec: String
    /// The decoder used, e.g. "h264" or "h264_v4l2m2m".
    public var decoder: String

    /// For fakes and tests in other rooms; `VideoDecoder` fills its own.
    public init(codedSize: PixelSize, rotation: Rotation, uprightSize: PixelSize, duration: Double?, frameRate: Double?,
                codec: String, decoder: String) {
        self.codedSize = codedSize
        self.rotation = rotation
        self.uprightSize = uprightSize
        self.duration = duration
        self.frameRate = frameRate
        self.codec = codec
        self.decoder = decoder
    }
}

/// How frames are scaled: libswscale's algorithms. `VideoDecoder.scaler`.
public enum VideoScaler: Sendable, CaseIterable {
    case point, fastBilinear, bilinear, bicubic
}

/// A clip's frames, decoded in order by FFmpeg (CVideoLoader: libavformat,
/// libavcodec and libswscale, opened with dlopen by the first clip).
///
/// Blocking: the caller runs it on a thread of its own, never on the loop.
/// Used by one thread at a time (`@unchecked Sendable` so that it can be
/// handed to one). Opening decodes the first frame, so a clip that opens has
/// one to show. Memory is bounded by `maxPixels`: the decoder's frames (one
/// per decoder thread, at most 4, plus the references the codec keeps) and,
/// when a frame is turned or cropped, one scratch buffer of the drawn
/// rectangle's size, reused from frame to frame.
public final class VideoDecoder: @unchecked Sendable {
    public let info: VideoInfo
    /// Frames returned by next() since opening (or the last rewind).
    public private(set) var framesDecoded: Int = 0
    /// The scaling algorithm of `draw`. The default, bilinear, is what
    /// `carousel-bench --video` measured as the best trade (see the commit
    /// that chose it); `accurateRounding` adds SWS_ACCURATE_RND.
    public var scaler: VideoScaler = .bilinear { didSet { applyScaler() } }
    public var accurateRounding = false { didSet { applyScaler() } }

    private let clip: OpaquePointer
    private let path: String
    /// Where the C side writes why a call failed: allocated once, so that a
    /// frame costs no allocation on our side.
    private let message = UnsafeMutablePointer<CChar>.allocate(capacity: VideoDecoder.messageSize)
    private static let messageSize = 512

    /// Opens `path`, finds the best video stream and its decoder, and decodes
    /// the first frame. `hardware`: FFmpeg's V4L2 memory-to-memory decoder for
    /// the codec first ("h264_v4l2m2m"), when a /dev/video* node exists and it
    /// opens; software otherwise, silently. Clips with more than `maxPixels`
    /// coded pixels are refused before a decoder is opened.
    /// The corresponding C function is `cvideo_open` (avformat_open_input,
    /// av_find_best_stream, avcodec_open2).
    public init(path: String, hardware: Bool, maxPixels: Int, scaler: VideoScaler = .bilinear) throws(VideoError) {
        self.path = path
        var raw = cvideo_info()
        message[0] = 0
        guard let clip = cvideo_open(path, hardware ? 1 : 0, Int64(maxPixels), &raw, message, Self.messageSize) else {
            let error = Self.error(path, message)
            message.deallocate()
            throw error
        }
        self.clip = clip
        let coded = PixelSize(width: Int(raw.coded_width), height: Int(raw.coded_height))
        let rotation = Rotation(rawValue: Int(raw.rotation)) ?? .none
        info = VideoInfo(
            codedSize: coded, rotation: rotation,
            uprightSize: rotation == .clockwise90 || rotation == .clockwise270 ? coded.transposed : coded,
            duration: raw.duration >= 0 ? raw.duration : nil,
            frameRate: raw.frame_rate > 0 ? raw.frame_rate : nil,
            codec: Self.string(raw.codec), decoder: Self.string(raw.decoder))
        self.scaler = scaler
        applyScaler()
    }

    deinit {
        cvideo_close(clip)
        message.deallocate()
    }

    /// Decodes the next frame in presentation order and returns its time in
    /// seconds from the stream's start (the frame's best-effort timestamp less
    /// the stream's start time; a frame without one gets the previous time
    /// plus one frame at the average rate), or nil at the end of the stream.
    /// A file cut short ends early (nil after the frames before the cut), as
    /// FFmpeg's demuxers report a short read as the end. A run of packets that
    /// do not decode throws, after the frames that decoded; a few corrupt
    /// packets that FFmpeg conceals do not.
    /// The corresponding C function is `cvideo_next` (av_read_frame,
    /// avcodec_send_packet, avcodec_receive_frame).
    public func next() throws(VideoError) -> Double? {
        var time = 0.0
        switch cvideo_next(clip, &time, message, Self.messageSize) {
        case 1:
            framesDecoded += 1
            return time
        case 0: return nil
        default: throw Self.error(path, message)
        }
    }

    /// Writes the frame `next()` returned last, turned upright and scaled to
    /// `rect` (upright destination coordinates, possibly beyond the
    /// destination on any side: only its part inside [0, width) x [0,
    /// height) is written, the rest of `dest` is left untouched) into `dest`:
    /// `height` rows of `stride` bytes of native-endian 0xFFRRGGBB words.
    /// Upright with the rectangle inside and a multiple of 16 pixels wide,
    /// one sws_scale writes straight into `dest` (libswscale writes rows in
    /// blocks of up to 16 pixels); otherwise the rectangle is scaled into a
    /// scratch buffer in the coded orientation and its visible part turned
    /// into place.
    /// The corresponding C function is `cvideo_draw` (sws_scale).
    public func draw(into dest: UnsafeMutableRawPointer, width: Int, height: Int, stride: Int, rect: PixelRect) throws(VideoError) {
        guard stride >= width * 4 else {
            throw VideoError(path: path, reason: "cannot draw: a stride of \(stride) bytes is less than \(width) pixels")
        }
        guard width > 0, height > 0, rect.width > 0, rect.height > 0 else { return }
        guard let x = Int32(exactly: rect.x), let y = Int32(exactly: rect.y),
              let w = Int32(exactly: rect.width), let h = Int32(exactly: rect.height),
              let dw = Int32(exactly: width), let dh = Int32(exactly: height)
        else { throw VideoError(path: path, reason: "cannot draw into \(rect) on \(width)x\(height): too large") }
        if cvideo_draw(clip, dest, dw, dh, stride, x, y, w, h, message, Self.messageSize) != 0 { throw Self.error(path, message) }
    }

    /// Back to the first frame (a clip that loops); the next `next()` returns it.
    /// The corresponding C function is `cvideo_rewind` (avformat_seek_file, avcodec_flush_buffers).
    public func rewind() throws(VideoError) {
        if cvideo_rewind(clip, message, Self.messageSize) != 0 { throw Self.error(path, message) }
        framesDecoded = 0
    }

    /// The first frame upright at its own size, or scaled down to fit
    /// `maxSide` on its longer side keeping its aspect: what stands for the
    /// clip in the carousel while it does not play.
    public static func poster(path: String, hardware: Bool = false, maxPixels: Int, maxSide: Int) throws(VideoError) -> DecodedImage {
        let decoder = try VideoDecoder(path: path, hardware: hardware, maxPixels: maxPixels)
        guard try decoder.next() != nil else { throw VideoError(path: path, reason: "no frame to show") }
        let size = fitted(decoder.info.uprightSize, maxSide: maxSide)
        var failure: VideoError?
        let image: DecodedImage
        do {
            image = try DecodedImage(width: size.width, height: size.height, format: .xrgb8888) { pixels, stride in
                do throws(VideoError) {
                    try decoder.draw(into: pixels.baseAddress!, width: size.width, height: size.height, stride: stride,
                                     rect: PixelRect(x: 0, y: 0, width: size.width, height: size.height))
                } catch {
                    failure = error
                }
            }
        } catch {
            throw VideoError(path: path, reason: "no memory for a \(size) poster")
        }
        if let failure { throw failure }
        return image
    }

    /// `size` scaled down to fit `maxSide` on its longer side (never up), at least 1x1.
    static func fitted(_ size: PixelSize, maxSide: Int) -> PixelSize {
        let longer = max(size.width, size.height)
        guard maxSide > 0, longer > maxSide else { return size }
        func side(_ s: Int) -> Int { max(1, (s * maxSide + longer / 2) / longer) }
        return PixelSize(width: side(size.width), height: side(size.height))
    }

    private func applyScaler() {
        let method: cvideo_scaler = switch scaler {
        case .point: cvideo_scaler_point
        case .fastBilinear: cvideo_scaler_fast_bilinear
        case .bilinear: cvideo_scaler_bilinear
        case .bicubic: cvideo_scaler_bicubic
        }
        cvideo_set_scaler(clip, method, accurateRounding ? 1 : 0)
    }

    /// The error for `path` from the C side's message.
    private static func error(_ path: String, _ message: UnsafePointer<CChar>) -> VideoError {
        let reason = String(cString: message)
        return VideoError(path: path, reason: reason.isEmpty ? "unknown error" : reason)
    }

    private static func string<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}
