import CPlatform
import CVideoLoader
import CarouselCore
import CarouselImaging
#if canImport(Glibc)
import Glibc
#endif

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

/// Where clips are decoded: carouseld's own executable started again as a
/// helper (`carouseld decode-clip`), so that FFmpeg's libraries, its
/// codecs and whatever a crafted clip makes of them stay out of the
/// process that holds the display and the input devices. See
/// CVideoLoader.h (`cvideo_remote_open`) for how the two talk.
public struct ClipProcess: Sendable {
    /// The program to start; `/proc/self/exe` is the running binary even
    /// after a package upgrade replaced the file.
    public var executable: String
    /// Its argv, program name first; `--max-pixels N` and `--hardware` are appended.
    public var arguments: [String]
    /// The CPU time the helper may spend on one request (open the clip,
    /// decode one frame, draw one) before it is killed and the clip skipped;
    /// 12 times that on the clock (a helper that waits for nothing). CPU
    /// time: a poster's helper may wait its turn for long on a board whose
    /// CPU a playing clip fills (the VM's video benchmark met 10 s).
    public var timeoutMilliseconds: Int

    public init(executable: String, arguments: [String], timeoutMilliseconds: Int = 10_000) {
        self.executable = executable
        self.arguments = arguments
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    /// The helper's address space beyond what it has mapped at its start:
    /// as a HEIF helper's for the same pixels (`DecodingProcess`), FFmpeg's
    /// frames (one per decoding thread, at most 4, and the references the
    /// codec keeps, 1.5 bytes a pixel each for 8-bit 4:2:0) coming well
    /// within its 24 bytes a pixel, plus 512 MiB for threads' stacks and
    /// malloc's arenas.
    public static func addressSpaceAllowance(maxPixels: Int) -> Int {
        DecodingProcess.addressSpaceAllowance(maxPixels: maxPixels)
    }

    /// The helper's side, run by `carouseld decode-clip`: the clip is on
    /// descriptor 3, the parent on descriptor 4. The exit status.
    /// The corresponding C function is `cvideo_serve`.
    public static func serveHelperRequest(maxPixels: Int, hardware: Bool) -> Int32 {
        _ = cplatform_helper_process_setup()
        // Before FFmpeg is loaded: its libraries, threads and frames all
        // come out of the allowance.
        _ = cplatform_limit_address_space(addressSpaceAllowance(maxPixels: maxPixels))
        return cvideo_serve(3, 4, hardware ? 1 : 0, Int64(maxPixels))
    }
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

    /// Where clips are decoded: nil in this process, else by a helper
    /// process. carouseld's commands set it once at start, before any clip
    /// is opened; tests and tools leave it nil.
    nonisolated(unsafe) public static var clipProcess: ClipProcess?

    /// The FFmpeg clip in this process, or the helper that decodes it.
    private enum Backend {
        case local(OpaquePointer)
        case remote(OpaquePointer)
    }
    private let backend: Backend
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
    /// With `process`, in that helper process (`cvideo_remote_open`).
    public init(path: String, hardware: Bool, maxPixels: Int, scaler: VideoScaler = .bilinear,
                process: ClipProcess? = VideoDecoder.clipProcess) throws(VideoError) {
        self.path = path
        var raw = cvideo_info()
        message[0] = 0
        if let process {
            var argv = process.arguments + ["--max-pixels", String(maxPixels)]
            if hardware { argv.append("--hardware") }
            let message = self.message
            let remote = DecodingProcess.withCStrings(argv) { cArgs in
                DecodingProcess.withCStrings(DecodingProcess.helperEnvironment) { cEnv in
                    cvideo_remote_open(process.executable, cArgs, cEnv, path, Int64(maxPixels),
                                       Int32(clamping: process.timeoutMilliseconds), &raw, message, Self.messageSize)
                }
            }
            guard let remote else {
                let error = Self.error(path, message)
                message.deallocate()
                throw error
            }
            backend = .remote(remote)
        } else {
            guard let clip = cvideo_open(path, hardware ? 1 : 0, Int64(maxPixels), &raw, message, Self.messageSize) else {
                let error = Self.error(path, message)
                message.deallocate()
                throw error
            }
            backend = .local(clip)
        }
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
        switch backend {
        case .local(let clip): cvideo_close(clip)
        case .remote(let remote): cvideo_remote_close(remote)
        }
        message.deallocate()
    }

    /// Whether frames are decoded by a helper process.
    public var isRemote: Bool { if case .remote = backend { true } else { false } }

    /// Makes `image`'s pixels memory the helper shares, so that `draw` into
    /// it is written there by the helper, with no copy on our side (a
    /// frame's buffer reused from frame to frame; at most 7 a decoder). The
    /// image's pixels are lost; it must outlive this decoder. Nothing to do
    /// in this process.
    /// The corresponding C function is `cvideo_remote_share`.
    public func share(_ image: DecodedImage) throws(VideoError) {
        guard case .remote(let remote) = backend else { return }
        let result = image.withUnsafeMutableBytes { pixels in
            cvideo_remote_share(remote, pixels.baseAddress!, pixels.count, message, Self.messageSize)
        }
        if result != 0 { throw Self.error(path, message) }
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
        let result = switch backend {
        case .local(let clip): cvideo_next(clip, &time, message, Self.messageSize)
        case .remote(let remote): cvideo_remote_next(remote, &time, message, Self.messageSize)
        }
        switch result {
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
        let result = switch backend {
        case .local(let clip): cvideo_draw(clip, dest, dw, dh, stride, x, y, w, h, message, Self.messageSize)
        case .remote(let remote): cvideo_remote_draw(remote, dest, dw, dh, stride, x, y, w, h, message, Self.messageSize)
        }
        if result != 0 { throw Self.error(path, message) }
    }

    /// Back to the first frame (a clip that loops); the next `next()` returns it.
    /// The corresponding C function is `cvideo_rewind` (avformat_seek_file, avcodec_flush_buffers).
    public func rewind() throws(VideoError) {
        let result = switch backend {
        case .local(let clip): cvideo_rewind(clip, message, Self.messageSize)
        case .remote(let remote): cvideo_remote_rewind(remote, message, Self.messageSize)
        }
        if result != 0 { throw Self.error(path, message) }
        framesDecoded = 0
    }

    /// The first frame upright at its own size, or scaled down to fit
    /// `maxSide` on its longer side keeping its aspect: what stands for the
    /// clip in the carousel while it does not play.
    /// A poster is a decode of a file from the album like any frame: with
    /// `process`, in the helper.
    public static func poster(path: String, hardware: Bool = false, maxPixels: Int, maxSide: Int,
                              process: ClipProcess? = VideoDecoder.clipProcess) throws(VideoError) -> DecodedImage {
        let decoder = try VideoDecoder(path: path, hardware: hardware, maxPixels: maxPixels, process: process)
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
        switch backend {
        case .local(let clip): cvideo_set_scaler(clip, method, accurateRounding ? 1 : 0)
        case .remote(let remote): cvideo_remote_set_scaler(remote, method, accurateRounding ? 1 : 0)
        }
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
