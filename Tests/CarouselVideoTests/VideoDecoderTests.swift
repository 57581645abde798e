import CarouselCore
import CarouselImaging
import CarouselVideo
import Foundation
import XCTest

// Frames are compared with what `ffmpeg` itself extracts by PSNR over R, G
// and B, with a threshold of 35 dB. On Debian's FFmpeg 5.1 the frames come
// out bit-identical to ffmpeg's (the same libswscale conversion); the margin
// is for another FFmpeg build or CPU (libswscale's SIMD paths round
// differently: a few units of error measure 40 dB and up). Every mistake
// these tests are for falls below it, as measured by breaking the decoder on
// purpose: a neighbouring frame of testsrc2 ~26 dB, a turn the wrong way
// under 1 dB, BT.601 for BT.709 on SMPTE HD bars 29.8 dB, limited for full
// range 31.0 dB.
let threshold = 35.0
let maxPixels = 8_294_400

/// Clips made once per run in a temporary folder.
enum Clips {
    static let folder: String = {
        let path = NSTemporaryDirectory() + "carousel-video-tests-\(getpid())"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()
    nonisolated(unsafe) static var made: Set<String> = []

    /// The clip `name`, made with `ffmpeg ARGS name` the first time it is asked for.
    static func make(_ name: String, _ arguments: [String]) throws -> String {
        let path = folder + "/" + name
        if !made.contains(name) {
            try Tools.ffmpeg(arguments + [path])
            made.insert(name)
        }
        return path
    }

    /// testsrc2, 320x180 at 30 fps for 2 s, H.264 yuv420p.
    static func landscape() throws -> String {
        try make("landscape.mp4", ["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30", "-t", "2",
                                   "-c:v", "libx264", "-pix_fmt", "yuv420p", "-g", "30"])
    }

    /// A phone's portrait clip: landscape coded frames and a display matrix.
    /// ffmpeg 5.1 has no -display_rotation; the `rotate` tag is turned into a
    /// display matrix by the mov muxer on a stream copy.
    static func rotated(_ degrees: Int) throws -> String {
        let plain = try make("moving.mp4", ["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30", "-t", "1",
                                            "-c:v", "libx264", "-pix_fmt", "yuv420p"])
        return try make("rotate\(degrees).mp4", ["-i", plain, "-c", "copy", "-metadata:s:v:0", "rotate=\(degrees)"])
    }

    static func file(_ name: String, _ bytes: [UInt8]) -> String {
        let path = folder + "/" + name
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }
}

final class VideoDecoderTests: XCTestCase {
    override class func tearDown() {
        try? FileManager.default.removeItem(atPath: Clips.folder)
    }

    /// Draws the current frame of `decoder` at its upright size and compares it with ffmpeg's frame `index`.
    func assertFrame(_ decoder: VideoDecoder, matches clip: String, index: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        let size = decoder.info.uprightSize
        var canvas = Canvas(width: size.width, height: size.height)
        let rect = PixelRect(x: 0, y: 0, width: size.width, height: size.height)
        try canvas.draw(decoder, rect: rect)
        XCTAssertNil(canvas.check(written: rect), file: file, line: line)
        let reference = try Tools.referenceFrame(clip, index: index)
        let quality = psnr(canvas, x: 0, y: 0, width: size.width, height: size.height, reference: reference)
        XCTAssertGreaterThan(quality, threshold, "frame \(index) of \(clip)", file: file, line: line)
    }

    func testClipsAreKnownByExtension() {
        XCTAssertEqual(VideoFile.fileExtensions, ["mp4", "m4v", "mov", "mkv", "webm"])
        XCTAssertTrue(VideoFile.isClip("/album/Holiday.MP4"))
        XCTAssertTrue(VideoFile.isClip("clip.webm"))
        XCTAssertFalse(VideoFile.isClip("/album/mp4"))
        XCTAssertFalse(VideoFile.isClip("/album/.mkv"))
        XCTAssertFalse(VideoFile.isClip("/album.mp4/photo.jpg"))
        XCTAssertFalse(VideoFile.isClip("photo.jpeg"))
    }

    func testLandscapeH264InfoAndFrames() throws {
        let clip = try Clips.landscape()
        let decoder = try VideoDecoder(path: clip, hardware: false, maxPixels: maxPixels)
        XCTAssertEqual(decoder.info.codedSize, PixelSize(width: 320, height: 180))
        XCTAssertEqual(decoder.info.uprightSize, PixelSize(width: 320, height: 180))
        XCTAssertEqual(decoder.info.rotation, .none)
        XCTAssertEqual(decoder.info.codec, "h264")
        XCTAssertEqual(decoder.info.decoder, "h264")
        XCTAssertEqual(decoder.info.frameRate ?? 0, 30, accuracy: 0.001)
        XCTAssertEqual(decoder.info.duration ?? 0, 2, accuracy: 0.05)
        var times: [Double] = []
        while let time = try decoder.next() {
            times.append(time)
            if [0, 17, 59].contains(times.count - 1) { try assertFrame(decoder, matches: clip, index: times.count - 1) }
        }
        XCTAssertEqual(times.count, 60)
        XCTAssertEqual(decoder.framesDecoded, 60)
        for (i, t) in times.enumerated() { XCTAssertEqual(t, Double(i) / 30, accuracy: 1e-6) }
        XCTAssertNil(try decoder.next(), "the end stays the end")
    }

    /// A neighbouring frame must fail the comparison, or the threshold proves nothing.
    func testThresholdTellsNeighbouringFramesApart() throws {
        let clip = try Clips.landscape()
        let decoder = try VideoDecoder(path: clip, hardware: false, maxPixels: maxPixels)
        _ = try decoder.next()
        var canvas = Canvas(width: 320, height: 180)
        try canvas.draw(decoder, rect: PixelRect(x: 0, y: 0, width: 320, height: 180))
        let other = try Tools.referenceFrame(clip, index: 1)
        XCTAssertLessThan(psnr(canvas, x: 0, y: 0, width: 320, height: 180, reference: other), threshold)
    }

    func testHardwareFallsBackToSoftware() throws {
        let decoder = try VideoDecoder(path: try Clips.landscape(), hardware: true, maxPixels: maxPixels)
        // A board's V4L2 decoder where one opens, FFmpeg's own elsewhere.
        XCTAssertTrue(["h264", "h264_v4l2m2m"].contains(decoder.info.decoder), decoder.info.decoder)
        XCTAssertNotNil(try decoder.next())
    }

    func testPortraitClipsAreTurnedAsFFmpegTurnsThem() throws {
        for tag in [90, 270] {
            let clip = try Clips.rotated(tag)
            let decoder = try VideoDecoder(path: clip, hardware: false, maxPixels: maxPixels)
            // ffmpeg's autorotate turns clockwise by minus the matrix's counter-clockwise angle.
            let ccw = try Tools.probedRotation(clip)
            let clockwise = ((-Int(ccw.rounded()) % 360) + 360) % 360
            XCTAssertNotEqual(clockwise, 0, "the \(tag) tag made a display matrix")
            XCTAssertEqual(decoder.info.rotation.rawValue, clockwise, "rotate=\(tag)")
            XCTAssertEqual(decoder.info.codedSize, PixelSize(width: 320, height: 180))
            XCTAssertEqual(decoder.info.uprightSize, PixelSize(width: 180, height: 320))
            for index in 0..<6 {
                XCTAssertNotNil(try decoder.next())
                if index == 0 || index == 5 { try assertFrame(decoder, matches: clip, index: index) }
            }
            // Scaled and cropped while turned: the visible part of a rectangle
            // larger than the destination, against ffmpeg's turned and scaled frame.
            let rect = PixelRect(x: -20, y: -30, width: 270, height: 480)
            var canvas = Canvas(width: 200, height: 400)
            try canvas.draw(decoder, rect: rect)
            XCTAssertNil(canvas.check(written: PixelRect(x: 0, y: 0, width: 200, height: 400)))
            // Scaled in the coded orientation, then turned, as the decoder
            // does: ffmpeg's turn-then-scale differs from its own
            // scale-then-turn by ~31 dB at this 1.5x (bilinear filters are
            // not symmetric in x and y), so the reference is built in our order.
            let full = try Tools.run(Tools.ffmpeg, [
                "-nostdin", "-v", "error", "-noautorotate", "-i", clip, "-vf",
                "select=eq(n\\,5),scale=480:270:flags=bilinear,transpose=\(clockwise == 90 ? "clock" : "cclock"),format=bgra",
                "-vsync", "0", "-frames:v", "1", "-f", "rawvideo", "-"])
            let visible = crop(full, width: 270, x: 20, y: 30, cropWidth: 200, cropHeight: 400)
            XCTAssertGreaterThan(psnr(canvas, x: 0, y: 0, width: 200, height: 400, reference: visible), threshold, "rotate=\(tag)")
        }
    }

    /// Upside down: the size stays, every pixel moves.
    func testUpsideDownClip() throws {
        let clip = try Clips.rotated(180)
        let decoder = try VideoDecoder(path: clip, hardware: false, maxPixels: maxPixels)
        XCTAssertEqual(decoder.info.rotation, .upsideDown)
        XCTAssertEqual(decoder.info.uprightSize, PixelSize(width: 320, height: 180))
        for _ in 0..<3 { XCTAssertNotNil(try decoder.next()) }
        try assertFrame(decoder, matches: clip, index: 2)
        // Cropped on the left and top only.
        var canvas = Canvas(width: 150, height: 100)
        try canvas.draw(decoder, rect: PixelRect(x: -10, y: -6, width: 160, height: 90))
        XCTAssertNil(canvas.check(written: PixelRect(x: 0, y: 0, width: 150, height: 84)))
        let full = try Tools.run(Tools.ffmpeg, [
            "-nostdin", "-v", "error", "-noautorotate", "-i", clip, "-vf",
            "select=eq(n\\,2),scale=160:90:flags=bilinear,hflip,vflip,format=bgra",
            "-vsync", "0", "-frames:v", "1", "-f", "rawvideo", "-"])
        XCTAssertGreaterThan(psnr(canvas, x: 0, y: 0, width: 150, height: 84,
                                  reference: crop(full, width: 160, x: 10, y: 6, cropWidth: 150, cropHeight: 84)), threshold)
    }

    func testOddSizesRectsAndStrides() throws {
        let clip = try Clips.make("odd.mp4", ["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25", "-t", "0.4",
                                              "-vf", "scale=321:181", "-c:v", "libx264", "-pix_fmt", "yuv444p"])
        let decoder = try VideoDecoder(path: clip, hardware: false, maxPixels: maxPixels)
        XCTAssertEqual(decoder.info.codedSize, PixelSize(width: 321, height: 181))
        XCTAssertNotNil(try decoder.next())
        try assertFrame(decoder, matches: clip, index: 0)
        // An odd rectangle inside a destination whose stride has 3 spare pixels a row.
        let rect = PixelRect(x: 3, y: 5, width: 161, height: 91)
        var canvas = Canvas(width: 171, height: 101, stride: 174 * 4)
        try canvas.draw(decoder, rect: rect)
        XCTAssertNil(canvas.check(written: rect))
        let reference = try Tools.referenceFrame(clip, index: 0, scale: (161, 91, "bilinear"))
        XCTAssertGreaterThan(psnr(canvas, x: 3, y: 5, width: 161, height: 91, reference: reference), threshold)
    }

    /// libswscale writes a row in blocks of 8 pixels (x86) or 16 (aarch64's
    /// yuv2rgb): a rectangle of another width must still leave the pixels
    /// right of it alone, and the bytes past a destination's last row (the
    /// clip fuzz target found a 4-pixel rectangle writing 4 more).
    func testNarrowRectanglesLeaveTheirNeighboursAlone() throws {
        let clip = try Clips.landscape()
        let decoder = try VideoDecoder(path: clip, hardware: false, maxPixels: maxPixels)
        XCTAssertNotNil(try decoder.next())
        for width in [1, 4, 5, 12, 17, 33, 100, 320] {
            let rect = PixelRect(x: 4, y: 2, width: width, height: 6)
            var canvas = Canvas(width: width + 24, height: 10)
            try canvas.draw(decoder, rect: rect)
            XCTAssertNil(canvas.check(written: rect), "\(rect)")
            // In the bottom-right corner of a destination without spare
            // stride, followed by 64 bytes that are not the destination's.
            let (w, h) = (width + 4, 10)
            var bytes = [UInt8](repeating: 0xA5, count: w * 4 * h + 64)
            try bytes.withUnsafeMutableBytes {
                try decoder.draw(into: $0.baseAddress!, width: w, height: h, stride: w * 4,
                                 rect: PixelRect(x: 4, y: h - 3, width: width, height: 3))
            }
            XCTAssertEqual(Array(bytes.suffix(64)), [UInt8](repeating: 0xA5, count: 64), "past the last row, \(width) wide")
        }
    }

    func testCoverCropAndMargins() throws {
        let clip = try Clips.landscape()
        let decoder = try VideoDecoder(path: clip, hardware: false, maxPixels: maxPixels)
        for _ in 0..<4 { _ = try decoder.next() }
        // Beyond the destination on every side.
        let cover = PixelRect(x: -40, y: -25, width: 480, height: 270)
        var canvas = Canvas(width: 400, height: 220)
        try canvas.draw(decoder, rect: cover)
        XCTAssertNil(canvas.check(written: PixelRect(x: 0, y: 0, width: 400, height: 220)))
        let full = try Tools.referenceFrame(clip, index: 3, scale: (480, 270, "bilinear"))
        XCTAssertGreaterThan(psnr(canvas, x: 0, y: 0, width: 400, height: 220,
                                  reference: crop(full, width: 480, x: 40, y: 25, cropWidth: 400, cropHeight: 220)), threshold)
        // Beyond the right and bottom edges only.
        var corner = Canvas(width: 300, height: 200)
        try corner.draw(decoder, rect: PixelRect(x: 100, y: 60, width: 480, height: 270))
        XCTAssertNil(corner.check(written: PixelRect(x: 100, y: 60, width: 200, height: 140)))
        XCTAssertGreaterThan(psnr(corner, x: 100, y: 60, width: 200, height: 140,
                                  reference: crop(full, width: 480, x: 0, y: 0, cropWidth: 200, cropHeight: 140)), threshold)
        // Inside with a margin: the margin keeps its marker.
        let inside = PixelRect(x: 17, y: 9, width: 240, height: 135)
        var framed = Canvas(width: 280, height: 160)
        try framed.draw(decoder, rect: inside)
        XCTAssertNil(framed.check(written: inside))
        let scaled = try Tools.referenceFrame(clip, index: 3, scale: (240, 135, "bilinear"))
        XCTAssertGreaterThan(psnr(framed, x: 17, y: 9, width: 240, height: 135, reference: scaled), threshold)
        // A stride shorter than a row is the caller's mistake, said so.
        var narrow = [UInt8](repeating: 0, count: 64 * 8)
        XCTAssertThrowsError(try narrow.withUnsafeMutableBytes {
            try decoder.draw(into: $0.baseAddress!, width: 64, height: 8, stride: 63 * 4, rect: PixelRect(x: 0, y: 0, width: 64, height: 8))
        }) { XCTAssertTrue(($0 as? VideoError)?.reason.contains("stride") == true, "\($0)") }
        // Wholly outside: nothing written.
        var untouched = Canvas(width: 50, height: 50)
        try untouched.draw(decoder, rect: PixelRect(x: 50, y: 0, width: 100, height: 50))
        XCTAssertNil(untouched.check(written: PixelRect(x: 0, y: 0, width: 0, height: 0)))
    }

    /// SMPTE bars tagged BT.709 (limited) and BT.601 full range: the matrix
    /// and range the stream says, as ffmpeg converts them.
    func testColourMatrixAndRange() throws {
        let bt709 = try Clips.make("bars709.mp4", ["-f", "lavfi", "-i", "smptehdbars=size=320x180:rate=25", "-t", "0.2",
                                                   "-vf", "scale=out_color_matrix=bt709", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                                                   "-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709",
                                                   "-color_range", "tv"])
        // VP9: its decoder hands out yuv420p frames marked full range (H.264's
        // gives yuvj420p, whose range libswscale knows from the format alone).
        let full = try Clips.make("barsfull.webm", ["-f", "lavfi", "-i", "smptebars=size=320x180:rate=25", "-t", "0.2",
                                                    "-vf", "scale=out_range=full", "-c:v", "libvpx-vp9", "-deadline", "realtime",
                                                    "-pix_fmt", "yuv420p", "-colorspace", "smpte170m", "-color_range", "pc"])
        let fullH264 = try Clips.make("barsfull.mkv", ["-f", "lavfi", "-i", "smptebars=size=320x180:rate=25", "-t", "0.2",
                                                       "-vf", "scale=out_range=full", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                                                       "-colorspace", "smpte170m", "-color_range", "pc"])
        for clip in [bt709, full, fullH264] {
            let decoder = try VideoDecoder(path: clip, hardware: false, maxPixels: maxPixels)
            XCTAssertNotNil(try decoder.next())
            try assertFrame(decoder, matches: clip, index: 0)
        }
    }

    func testBFramesAndVariableFrameRateTimes() throws {
        let bframes = try Clips.make("bframes.mp4", ["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30", "-t", "1",
                                                     "-c:v", "libx264", "-bf", "3", "-pix_fmt", "yuv420p"])
        // Two frames of every five dropped and the rest keeping their times: 1/30, 2/30, then a gap.
        let vfr = try Clips.make("vfr.mkv", ["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30", "-t", "1",
                                             "-vf", "select='not(eq(mod(n\\,5)\\,2)+eq(mod(n\\,5)\\,3))'", "-vsync", "vfr",
                                             "-c:v", "libx264", "-bf", "3", "-pix_fmt", "yuv420p"])
        for clip in [bframes, vfr] {
            let decoder = try VideoDecoder(path: clip, hardware: false, maxPixels: maxPixels)
            var times: [Double] = []
            while let time = try decoder.next() {
                times.append(time)
                if times.count == 8 { try assertFrame(decoder, matches: clip, index: 7) }
            }
            let expected = try Tools.probedTimes(clip)
            XCTAssertEqual(times.count, expected.count, clip)
            for (ours, theirs) in zip(times, expected) { XCTAssertEqual(ours, theirs, accuracy: 0.0015, clip) }
            XCTAssertTrue(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "strictly increasing: \(times)")
        }
        // The variable one really is: gaps of 1/30 and of 3/30.
        let decoder = try VideoDecoder(path: vfr, hardware: false, maxPixels: maxPixels)
        var times: [Double] = []
        while let time = try decoder.next() { times.append(time) }
        let gaps = Set(zip(times, times.dropFirst()).map { (($1 - $0) * 30).rounded() })
        XCTAssertEqual(gaps, [1, 3])
    }

    func testOtherCodecsAndContainers() throws {
        let source = ["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25", "-t", "0.4", "-pix_fmt", "yuv420p"]
        var clips: [(String, String)] = [
            (try Clips.make("vp9.webm", source + ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8"]), "vp9"),
            (try Clips.make("h264.mkv", source + ["-c:v", "libx264"]), "h264"),
            (try Clips.make("hevc.mkv", source + ["-c:v", "libx265", "-x265-params", "log-level=error"]), "hevc"),
            (try Clips.make("hevc.mov", source + ["-c:v", "libx265", "-tag:v", "hvc1", "-x265-params", "log-level=error"]), "hevc"),
        ]
        clips.append((try Clips.make("av1.mkv", source + ["-c:v", "libaom-av1", "-cpu-used", "8", "-row-mt", "1"]), "av1"))
        for (clip, codec) in clips {
            let decoder = try VideoDecoder(path: clip, hardware: false, maxPixels: maxPixels)
            XCTAssertEqual(decoder.info.codec, codec, clip)
            XCTAssertEqual(decoder.info.codedSize, PixelSize(width: 320, height: 180), clip)
            var count = 0
            while try decoder.next() != nil {
                if count == 3 { try assertFrame(decoder, matches: clip, index: 3) }
                count += 1
            }
            XCTAssertEqual(count, 10, clip)
        }
    }

    func testRewindAndPoster() throws {
        let clip = try Clips.landscape()
        let decoder = try VideoDecoder(path: clip, hardware: false, maxPixels: maxPixels)
        for _ in 0..<45 { _ = try decoder.next() }
        try decoder.rewind()
        XCTAssertEqual(decoder.framesDecoded, 0)
        XCTAssertEqual(try decoder.next(), 0)
        XCTAssertEqual(decoder.framesDecoded, 1)
        try assertFrame(decoder, matches: clip, index: 0)
        XCTAssertEqual(try decoder.next() ?? 0, 1.0 / 30, accuracy: 1e-6)
        // Rewinding at the end, as a loop does.
        while try decoder.next() != nil {}
        try decoder.rewind()
        XCTAssertEqual(try decoder.next(), 0)

        let poster = try VideoDecoder.poster(path: clip, maxPixels: maxPixels, maxSide: 1000)
        XCTAssertEqual(poster.size, PixelSize(width: 320, height: 180))
        let reference = try Tools.referenceFrame(clip, index: 0)
        XCTAssertGreaterThan(psnr(canvas(poster), x: 0, y: 0, width: 320, height: 180, reference: reference), threshold)
        XCTAssertTrue(poster.withUnsafeBytes { $0.bindMemory(to: UInt32.self).allSatisfy { $0 >> 24 == 0xFF } })

        let small = try VideoDecoder.poster(path: clip, maxPixels: maxPixels, maxSide: 160)
        XCTAssertEqual(small.size, PixelSize(width: 160, height: 90))
        let scaled = try Tools.referenceFrame(clip, index: 0, scale: (160, 90, "bilinear"))
        XCTAssertGreaterThan(psnr(canvas(small), x: 0, y: 0, width: 160, height: 90, reference: scaled), threshold)

        let portrait = try VideoDecoder.poster(path: try Clips.rotated(90), maxPixels: maxPixels, maxSide: 160)
        XCTAssertEqual(portrait.size, PixelSize(width: 90, height: 160))
    }

    // MARK: damaged inputs: each a VideoError with a useful reason, never a crash

    func assertRefused(_ path: String, maxPixels: Int = maxPixels, containing phrase: String,
                       file: StaticString = #filePath, line: UInt = #line) {
        do {
            _ = try VideoDecoder(path: path, hardware: false, maxPixels: maxPixels)
            XCTFail("\(path) opened", file: file, line: line)
        } catch {
            XCTAssertEqual(error.path, path, file: file, line: line)
            XCTAssertTrue(error.reason.contains(phrase), "\(error.reason) lacks \"\(phrase)\"", file: file, line: line)
            XCTAssertEqual(error.description, "\(path): \(error.reason)", file: file, line: line)
        }
    }

    func testEmptyGarbageMissingAndAudioOnly() throws {
        assertRefused(Clips.file("empty.mp4", []), containing: "empty file")
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let garbage = (0..<65536).map { _ -> UInt8 in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
        assertRefused(Clips.file("garbage.mp4", garbage), containing: "not a clip FFmpeg can read")
        assertRefused(Clips.folder + "/missing.mp4", containing: "No such file")
        let audio = try Clips.make("audio.mp4", ["-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-c:a", "aac"])
        assertRefused(audio, containing: "no video stream (audio)")
    }

    /// Only the codecs a phone or a camera records are decoded: a Cinepak
    /// clip with ms-adpcm audio in a .mov and an msvideo1 one in a .mkv
    /// (both played before) are refused naming their codec, while H.264
    /// beside the same audio still plays (the audio decoder is never
    /// opened, and its refusal while probing costs the clip nothing).
    func testOnlyThePhonesCodecsAreDecoded() throws {
        let picture = ["-f", "lavfi", "-i", "testsrc2=size=160x96:rate=10", "-f", "lavfi", "-i", "sine=duration=1",
                       "-t", "1", "-c:a", "adpcm_ms"]
        let cinepak = try Clips.make("cinepak.mov", picture + ["-c:v", "cinepak"])
        assertRefused(cinepak, containing: "cinepak is not a codec phones or cameras record (only H.264, HEVC, VP8, VP9 and AV1")
        let msvideo1 = try Clips.make("msvideo1.mkv", picture + ["-c:v", "msvideo1"])
        assertRefused(msvideo1, containing: "msvideo1 is not a codec phones or cameras record")
        let h264 = try Clips.make("h264-adpcm.mov", picture + ["-c:v", "libx264", "-pix_fmt", "yuv420p"])
        let decoder = try VideoDecoder(path: h264, hardware: false, maxPixels: maxPixels)
        XCTAssertEqual(decoder.info.decoder, "h264")
        var frames = 0
        while try decoder.next() != nil { frames += 1 }
        XCTAssertEqual(frames, 10)
        XCTAssertThrowsError(try VideoDecoder.poster(path: cinepak, maxPixels: maxPixels, maxSide: 100))
    }

    func testLargerThanMaxPixelsIsRefusedBeforeDecoding() throws {
        let clip = try Clips.make("640.mp4", ["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25", "-t", "0.2",
                                              "-c:v", "libx264", "-pix_fmt", "yuv420p"])
        assertRefused(clip, maxPixels: 100_000, containing: "640x360 is larger than [video] max_pixels (100000)")
        XCTAssertNoThrow(try VideoDecoder(path: clip, hardware: false, maxPixels: 640 * 360))
    }

    /// FFmpeg's decoders check a frame's size with its width rounded up to
    /// their stride alignment: a clip exactly at max_pixels whose width is
    /// not a multiple of 64 still plays (it was refused as truncated).
    func testClipAtMaxPixelsWithAnUnalignedWidthPlays() throws {
        let clip = try Clips.make("330.mp4", ["-f", "lavfi", "-i", "testsrc2=size=330x186:rate=25", "-t", "0.2",
                                              "-c:v", "libx264", "-pix_fmt", "yuv420p"])
        let decoder = try VideoDecoder(path: clip, hardware: false, maxPixels: 330 * 186)
        var frames = 0
        while try decoder.next() != nil { frames += 1 }
        XCTAssertEqual(frames, 5)
        assertRefused(clip, maxPixels: 330 * 186 - 1, containing: "330x186 is larger than [video] max_pixels")
    }

    /// A valid Matroska file whose CodecID is patched to one FFmpeg does not
    /// know: the stream is there, its decoder is not.
    func testUnknownCodec() throws {
        let clip = try Clips.make("known.mkv", ["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25", "-t", "0.2",
                                                "-c:v", "libx264", "-pix_fmt", "yuv420p"])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: clip)))
        let id = Array("V_MPEG4/ISO/AVC".utf8)
        let at = try XCTUnwrap((0...(bytes.count - id.count)).first { bytes[$0..<($0 + id.count)].elementsEqual(id) })
        bytes.replaceSubrange(at..<(at + id.count), with: Array("V_FOOBAR_FOOBAR".utf8))
        assertRefused(Clips.file("unknown.mkv", bytes), containing: "no decoder")
    }

    /// A Matroska file whose only Cluster is empty: the video track is
    /// declared, no frame follows. (Written to a pipe, so the segment's size
    /// is unknown and a cluster can be appended; a file simply cut before its
    /// first cluster is refused as truncated.)
    func testZeroFrameClip() throws {
        let bytes = [UInt8](try Tools.run(Tools.ffmpeg, ["-nostdin", "-v", "error", "-f", "lavfi", "-i",
                                                         "testsrc2=size=320x180:rate=25", "-frames:v", "1",
                                                         "-c:v", "libx264", "-pix_fmt", "yuv420p", "-f", "matroska", "-"]))
        let cluster: [UInt8] = [0x1F, 0x43, 0xB6, 0x75]
        let at = try XCTUnwrap((0...(bytes.count - 4)).first { bytes[$0..<($0 + 4)].elementsEqual(cluster) })
        // A Cluster holding only its Timecode (0).
        let empty = Array(bytes[..<at]) + cluster + [0x83, 0xE7, 0x81, 0x00]
        assertRefused(Clips.file("zero.mkv", empty), containing: "the video stream has no frames")
        assertRefused(Clips.file("header-only.mkv", Array(bytes[..<at])), containing: "truncated")
    }

    /// Cut at 30%. With the index first (faststart) the frames before the cut
    /// decode and then the clip ends (nil: FFmpeg's demuxer reports the short
    /// read as the end); with the index last (ffmpeg's default) nothing can be
    /// read and opening fails.
    func testTruncatedClips() throws {
        let source = ["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30", "-t", "2", "-c:v", "libx264", "-pix_fmt", "yuv420p"]
        let faststart = try Clips.make("faststart.mp4", source + ["-movflags", "+faststart"])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: faststart)))
        let cut = Clips.file("cut-faststart.mp4", Array(bytes[..<(bytes.count * 3 / 10)]))
        let decoder = try VideoDecoder(path: cut, hardware: false, maxPixels: maxPixels)
        var count = 0
        while try decoder.next() != nil {
            if count == 2 { try assertFrame(decoder, matches: faststart, index: 2) }
            count += 1
        }
        XCTAssertGreaterThan(count, 2)
        XCTAssertLessThan(count, 60)

        let plain = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try Clips.landscape())))
        assertRefused(Clips.file("cut-plain.mp4", Array(plain[..<(plain.count * 3 / 10)])), containing: "not a clip FFmpeg can read")
    }

    /// Garbage over the middle third of the frames' bytes (the index intact):
    /// frames before it match ffmpeg's, and the decoder either conceals the
    /// rest or throws; it never crashes.
    func testCorruptMiddle() throws {
        let source = ["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30", "-t", "2", "-c:v", "libx264", "-pix_fmt", "yuv420p"]
        let faststart = try Clips.make("faststart.mp4", source + ["-movflags", "+faststart"])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: faststart)))
        for i in (bytes.count * 5 / 10)..<(bytes.count * 7 / 10) { bytes[i] = UInt8(truncatingIfNeeded: i &* 2_654_435_761 >> 13) }
        let clip = Clips.file("corrupt.mp4", bytes)
        let decoder = try VideoDecoder(path: clip, hardware: false, maxPixels: maxPixels)
        XCTAssertNotNil(try decoder.next())
        try assertFrame(decoder, matches: faststart, index: 0)
        var frames = 1
        do {
            while try decoder.next() != nil { frames += 1 }
        } catch {
            XCTAssertFalse(error.reason.isEmpty)
        }
        XCTAssertGreaterThan(frames, 20)
    }

    /// Garbage from 40% of the file to its end: the frames before it come
    /// out, then a run of packets that do not decode is an error.
    func testStreamThatBreaksMidwayThrows() throws {
        let source = ["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30", "-t", "4", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                      "-g", "300"]
        let clip = try Clips.make("long-faststart.mp4", source + ["-movflags", "+faststart"])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: clip)))
        for i in (bytes.count * 4 / 10)..<bytes.count { bytes[i] = UInt8(truncatingIfNeeded: i &* 2_654_435_761 >> 13) }
        let broken = Clips.file("broken.mp4", bytes)
        let decoder = try VideoDecoder(path: broken, hardware: false, maxPixels: maxPixels)
        var frames = 0
        do {
            while try decoder.next() != nil {
                if frames == 10 { try assertFrame(decoder, matches: clip, index: 10) }
                frames += 1
            }
            XCTFail("\(frames) frames, then the end: the garbage was not noticed")
        } catch let error as VideoError {
            XCTAssertTrue(error.reason.contains("corrupt stream"), error.reason)
        }
        // About 40% of 120 frames decode (46 with Debian's x264 and FFmpeg 5.1).
        XCTAssertGreaterThan(frames, 20)
        XCTAssertLessThan(frames, 100)
    }
}

/// A region of tightly packed BGRA rows.
func crop(_ data: Data, width: Int, x: Int, y: Int, cropWidth: Int, cropHeight: Int) -> Data {
    var out = Data(capacity: cropWidth * cropHeight * 4)
    for row in y..<(y + cropHeight) {
        let start = (row * width + x) * 4
        out.append(data[(data.startIndex + start)..<(data.startIndex + start + cropWidth * 4)])
    }
    return out
}

func canvas(_ image: DecodedImage) -> Canvas {
    var c = Canvas(width: image.width, height: image.height, stride: image.stride)
    image.withUnsafeBytes { c.bytes = Array($0) }
    return c
}
