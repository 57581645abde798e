import CarouselCore
import CarouselImaging
import CarouselVideo
import Foundation
import XCTest

/// The `carouseld` executable built next to this test bundle, or `$CAROUSELD_BIN`.
let helperBinary: String? = {
    let fm = FileManager.default
    if let env = ProcessInfo.processInfo.environment["CAROUSELD_BIN"], fm.isExecutableFile(atPath: env) { return env }
    guard let exe = try? fm.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
    var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = dir.appendingPathComponent("carouseld").path
        if fm.isExecutableFile(atPath: candidate) { return candidate }
        dir = dir.deletingLastPathComponent()
    }
    return nil
}()

/// Clips decoded by carouseld's helper process (`carouseld decode-clip`),
/// the real binary: the frames are FFmpeg's as in this process, and a
/// helper that dies, hangs, lies or tries to leave its sandbox costs the
/// clip one error, never the caller.
final class ClipProcessTests: XCTestCase {
    func process(timeout: Int = 10_000) throws -> ClipProcess {
        let binary = try XCTUnwrap(helperBinary, "carouseld is not built next to the tests; set CAROUSELD_BIN")
        return ClipProcess(executable: binary, arguments: ["carouseld", "decode-clip"], timeoutMilliseconds: timeout)
    }

    /// Runs `body` with the helper's test fault set (the helper inherits this process's environment).
    func withFault<R>(_ fault: String, _ body: () throws -> R) rethrows -> R {
        setenv("CAROUSELD_TEST_CLIP_FAULT", fault, 1)
        defer { unsetenv("CAROUSELD_TEST_CLIP_FAULT") }
        return try body()
    }

    func testFramesFromTheHelperAreFFmpegsIntoSharedAndPrivateMemory() throws {
        let clip = try Clips.landscape()
        let decoder = try VideoDecoder(path: clip, hardware: false, maxPixels: maxPixels, process: try process())
        XCTAssertTrue(decoder.isRemote)
        XCTAssertEqual(decoder.info.codedSize, PixelSize(width: 320, height: 180))
        XCTAssertEqual(decoder.info.decoder, "h264")
        // A frame's buffer shared with the helper: it writes there itself.
        let shared = try DecodedImage(width: 320, height: 180, format: .xrgb8888) { _, _ in }
        try decoder.share(shared)
        var times: [Double] = []
        while let time = try decoder.next() {
            if times.count == 7 {
                try shared.withUnsafeMutableBytes { pixels in
                    try decoder.draw(into: pixels.baseAddress!, width: 320, height: 180, stride: shared.stride,
                                     rect: PixelRect(x: 0, y: 0, width: 320, height: 180))
                }
                let reference = try Tools.referenceFrame(clip, index: 7)
                XCTAssertGreaterThan(psnr(canvas(shared), x: 0, y: 0, width: 320, height: 180, reference: reference), threshold)
                // Memory it does not share: through its scratch memory, and
                // only the rectangle's visible part written.
                var small = Canvas(width: 100, height: 60)
                let rect = PixelRect(x: -10, y: 7, width: 96, height: 54)
                try small.draw(decoder, rect: rect)
                XCTAssertNil(small.check(written: rect.intersection(PixelRect(x: 0, y: 0, width: 100, height: 60))))
            }
            times.append(time)
        }
        XCTAssertEqual(times.count, 60)
        let inProcess = try VideoDecoder(path: clip, hardware: false, maxPixels: maxPixels, process: nil)
        var localTimes: [Double] = []
        while let time = try inProcess.next() { localTimes.append(time) }
        XCTAssertEqual(times, localTimes)
        try decoder.rewind()
        XCTAssertEqual(try decoder.next(), 0)

        let poster = try VideoDecoder.poster(path: try Clips.rotated(90), maxPixels: maxPixels, maxSide: 160, process: try process())
        XCTAssertEqual(poster.size, PixelSize(width: 90, height: 160))
        // Turned and scaled as in this process, to the byte.
        let local = try VideoDecoder.poster(path: try Clips.rotated(90), maxPixels: maxPixels, maxSide: 160, process: nil)
        XCTAssertEqual(poster.withUnsafeBytes { Array($0) }, local.withUnsafeBytes { Array($0) })
    }

    func testRefusalsComeBackAsTheyWouldInProcess() throws {
        let picture = ["-f", "lavfi", "-i", "testsrc2=size=160x96:rate=10", "-t", "1"]
        let cinepak = try Clips.make("helper-cinepak.mov", picture + ["-c:v", "cinepak"])
        XCTAssertThrowsError(try VideoDecoder(path: cinepak, hardware: false, maxPixels: maxPixels, process: try process())) {
            XCTAssertEqual(($0 as? VideoError)?.reason,
                           "cinepak is not a codec phones or cameras record (only H.264, HEVC, VP8, VP9 and AV1 clips play)")
        }
        XCTAssertThrowsError(try VideoDecoder(path: try Clips.landscape(), hardware: false, maxPixels: 1000, process: try process())) {
            XCTAssertEqual(($0 as? VideoError)?.reason, "320x180 is larger than [video] max_pixels (1000)")
        }
        XCTAssertThrowsError(try VideoDecoder(path: Clips.folder + "/missing.mp4", hardware: false, maxPixels: maxPixels,
                                              process: try process())) {
            XCTAssertTrue(($0 as? VideoError)?.reason.hasPrefix("cannot open: ") == true)
        }
    }

    /// Past its filter the helper can open no file and no socket (the
    /// test fault tries both on its first frame and says what it got).
    func testTheHelperCannotOpenFilesOrSockets() throws {
        let decoder = try withFault("escape") {
            try VideoDecoder(path: try Clips.landscape(), hardware: false, maxPixels: maxPixels, process: try process())
        }
        XCTAssertThrowsError(try decoder.next()) {
            XCTAssertEqual(($0 as? VideoError)?.reason, "escape: openat refused (EPERM), socket refused (EPERM)")
        }
    }

    func testAHelperThatDiesIsOneReasonAndStaysDead() throws {
        let decoder = try withFault("SIGSEGV") {
            try VideoDecoder(path: try Clips.landscape(), hardware: false, maxPixels: maxPixels, process: try process())
        }
        var frames = 0
        let crash = "FFmpeg crashed on it (SIGSEGV in the process that decodes it; carouseld runs on)"
        do {
            while try decoder.next() != nil { frames += 1 }
            XCTFail("the clip ended although its helper died")
        } catch {
            XCTAssertEqual(error.reason, crash)
        }
        XCTAssertEqual(frames, 9)
        XCTAssertThrowsError(try decoder.rewind()) { XCTAssertEqual(($0 as? VideoError)?.reason, crash) }
    }

    /// The deadlines the decoder enforces ended the wait (no claim on how
    /// fast): 12 times the budget on the clock for a helper that waits for
    /// nothing, the budget of CPU time for one that loops.
    func testAHelperThatHangsOrLoopsIsStopped() throws {
        for (fault, reason) in [("hang", "its decoding process did not answer within 12 s; it was stopped"),
                                ("spin", "its decoding process did not answer within 1 s of work; it was stopped")] {
            let decoder = try withFault(fault) {
                try VideoDecoder(path: try Clips.landscape(), hardware: false, maxPixels: maxPixels, process: try process(timeout: 1000))
            }
            do {
                while try decoder.next() != nil {}
                XCTFail("the clip ended although its helper hung (\(fault))")
            } catch {
                XCTAssertEqual(error.reason, reason)
            }
        }
    }

    /// What the helper says of the clip is checked as a file's header is:
    /// a size past max_pixels is refused before anything is allocated for it.
    func testAHelperThatAnnouncesAnOversizeClipIsRefused() throws {
        XCTAssertThrowsError(try withFault("oversize") {
            try VideoDecoder(path: try Clips.landscape(), hardware: false, maxPixels: maxPixels, process: try process())
        }) {
            XCTAssertEqual(($0 as? VideoError)?.reason, "its decoding process announced a 1048576x180 clip it was not allowed to")
        }
    }

    func testAHelperThatDrawsWhatItWasNotAskedForIsRefused() throws {
        let decoder = try withFault("lie") {
            try VideoDecoder(path: try Clips.landscape(), hardware: false, maxPixels: maxPixels, process: try process())
        }
        let shared = try DecodedImage(width: 320, height: 180, format: .xrgb8888) { _, _ in }
        try decoder.share(shared)
        XCTAssertNotNil(try decoder.next())
        XCTAssertThrowsError(try shared.withUnsafeMutableBytes { pixels in
            try decoder.draw(into: pixels.baseAddress!, width: 320, height: 180, stride: shared.stride,
                             rect: PixelRect(x: 0, y: 0, width: 320, height: 180))
        }) {
            XCTAssertEqual(($0 as? VideoError)?.reason, "its decoding process drew a 321x180 frame it was not asked for (320x180)")
        }
        XCTAssertThrowsError(try decoder.next())
    }
}
