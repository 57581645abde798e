import CarouselCore
import CarouselImaging
import CarouselVideo
#if canImport(Glibc)
import Glibc
#endif

/// Issue 29's figures: decoding a clip's frames, and drawing one frame into a
/// 1920x1080 XRGB8888 destination with each of libswscale's algorithms (with
/// and without SWS_ACCURATE_RND), each as a ratio to a memcpy of the
/// destination frame in the same run, and its quality: PSNR against bicubic
/// with accurate rounding, the best libswscale gives. Clips are made with the
/// `ffmpeg` CLI; figures, never assertions.
struct VideoBenchmarks {
    let folder: String
    let destination = PixelSize(width: 1920, height: 1080)

    func run() -> [String] {
        var lines: [String] = []
        func make(_ name: String, _ size: String) -> String? {
            let path = folder + "/" + name
            let args = "-f lavfi -i testsrc2=size=\(size):rate=30 -t 2 -c:v libx264 -preset veryfast -pix_fmt yuv420p"
            return shell("ffmpeg -nostdin -v error -y \(args) \(path)") ? path : nil
        }
        guard let full = make("1080.mp4", "1920x1080"), let small = make("720.mp4", "1280x720"),
              shell("ffmpeg -nostdin -v error -y -i \(small) -c copy -metadata:s:v:0 rotate=90 \(folder)/portrait.mp4")
        else { return ["  (skipped: the ffmpeg CLI is needed to make the clips)"] }
        let portrait = folder + "/portrait.mp4"

        let bytes = destination.width * destination.height * 4
        let target = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        let copySource = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        defer { target.deallocate(); copySource.deallocate() }
        memset(copySource, 0x40, bytes)
        let draws = 30
        func memcpyOfTheFrame() -> Double {
            measure("memcpy", operations: draws) {
                for _ in 0..<draws { memcpy(target, copySource, bytes) }
                return Int(target.load(as: UInt8.self))
            }.perOperation[0]
        }

        for (clip, label) in [(full, "1920x1080"), (small, "1280x720")] {
            let r = measure("decode \(label) H.264 (60 frames, software, next() only)", operations: 60, rounds: 3) {
                let decoder = try! VideoDecoder(path: clip, hardware: false, maxPixels: 8_294_400)
                var n = 0
                while (try! decoder.next()) != nil { n += 1 }
                return n
            }
            lines.append(line(r) + " per frame")
        }

        struct Case {
            var name: String
            var clip: String
            var rect: PixelRect
        }
        let cases = [
            Case(name: "1920x1080 clip 1:1 (one sws_scale into dest)", clip: full,
                 rect: PixelRect(x: 0, y: 0, width: 1920, height: 1080)),
            Case(name: "1280x720 clip up to 1920x1080 (one sws_scale into dest)", clip: small,
                 rect: PixelRect(x: 0, y: 0, width: 1920, height: 1080)),
            Case(name: "1280x720 clip, cover crop 2400x1350 (scratch + rows)", clip: small,
                 rect: PixelRect(x: -240, y: -135, width: 2400, height: 1350)),
            Case(name: "720x1280 portrait (coded 1280x720, 90°) contain 608x1080 (scratch + turn)", clip: portrait,
                 rect: PixelRect(x: 656, y: 0, width: 608, height: 1080)),
        ]
        let settings: [(VideoScaler, Bool)] = [
            (.point, false), (.fastBilinear, false), (.bilinear, false), (.bilinear, true), (.bicubic, false), (.bicubic, true),
        ]
        for c in cases {
            let decoder = try! VideoDecoder(path: c.clip, hardware: false, maxPixels: 8_294_400)
            for _ in 0..<10 { _ = try! decoder.next() }
            decoder.scaler = .bicubic
            decoder.accurateRounding = true
            var reference = [UInt8](repeating: 0, count: bytes)
            reference.withUnsafeMutableBytes {
                try! decoder.draw(into: $0.baseAddress!, width: 1920, height: 1080, stride: 1920 * 4, rect: c.rect)
            }
            lines.append("  \(c.name):")
            for (scaler, accurate) in settings {
                decoder.scaler = scaler
                decoder.accurateRounding = accurate
                let r = measure("\(scaler)\(accurate ? " + accurate_rnd" : "")", operations: draws) {
                    for _ in 0..<draws {
                        try! decoder.draw(into: target, width: 1920, height: 1080, stride: 1920 * 4, rect: c.rect)
                    }
                    return Int(target.load(as: UInt8.self))
                }
                // Before the memcpy overwrites the destination.
                let quality = psnr(target, reference, rect: c.rect.intersection(PixelRect(x: 0, y: 0, width: 1920, height: 1080)))
                let floor = memcpyOfTheFrame()
                lines.append("  " + line(r) + " = \(format2(r.perOperation[0] / floor))x memcpy of the frame, "
                             + "PSNR \(quality.isInfinite ? "inf" : format2(quality)) dB against bicubic + accurate_rnd")
            }
        }
        return lines + inHelper(clip: small)
    }

    /// What decoding in the helper process (`carouseld decode-clip`) costs
    /// against this process: a clip's 60 frames decoded and drawn up to
    /// 1920x1080 into a buffer the helper shares (as the player's are),
    /// CPU per frame of this process and of the helper (getrusage: the
    /// helper's counts once the decoder let it go and it was reaped).
    func inHelper(clip: String) -> [String] {
        let directory = String(cString: realpath("/proc/self/exe", nil)).split(separator: "/").dropLast().joined(separator: "/")
        let carouseld = "/" + directory + "/carouseld"
        guard access(carouseld, X_OK) == 0 else {
            return ["  (skipped the clip helper: build carouseld next to carousel-bench: swift build -c release --product carouseld)"]
        }
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        func cpu(_ who: __rusage_who) -> Double {
            var usage = rusage()
            getrusage(who.rawValue, &usage)
            return seconds(usage.ru_utime) + seconds(usage.ru_stime)
        }
        var lines = ["  1280x720 H.264 decoded and drawn to 1920x1080 (60 frames, software), CPU per frame, best of 5:"]
        var figures: [String: (own: Double, helper: Double)] = [:]
        for (label, process) in [("in this process", nil as ClipProcess?),
                                 ("in the helper", ClipProcess(executable: carouseld, arguments: ["carouseld", "decode-clip"]))] {
            var best: (own: Double, helper: Double)?
            for _ in 0..<5 {
                let (self0, children0) = (cpu(RUSAGE_SELF), cpu(RUSAGE_CHILDREN))
                do {
                    let decoder = try! VideoDecoder(path: clip, hardware: false, maxPixels: 8_294_400, process: process)
                    let frame = try! DecodedImage(width: 1920, height: 1080, format: .xrgb8888) { _, _ in }
                    try! decoder.share(frame)
                    var n = 0
                    while (try! decoder.next()) != nil {
                        try! frame.withUnsafeMutableBytes { pixels in
                            try decoder.draw(into: pixels.baseAddress!, width: 1920, height: 1080, stride: frame.stride,
                                             rect: PixelRect(x: 0, y: 0, width: 1920, height: 1080))
                        }
                        n += 1
                    }
                    precondition(n == 60)
                }
                let run = (own: (cpu(RUSAGE_SELF) - self0) / 60, helper: (cpu(RUSAGE_CHILDREN) - children0) / 60)
                if best == nil || run.own + run.helper < best!.own + best!.helper { best = run }
            }
            figures[label] = best!
            lines.append("    \(label): this process \(format2(best!.own * 1000)) ms + helper \(format2(best!.helper * 1000)) ms"
                         + " = \(format2((best!.own + best!.helper) * 1000)) ms")
        }
        if let here = figures["in this process"], let there = figures["in the helper"], here.own + here.helper > 0 {
            lines.append("    helper / in process: \(format2((there.own + there.helper) / (here.own + here.helper)))x the CPU in all, "
                         + "this process \(format2(there.own / (here.own + here.helper)))x")
        }
        return lines
    }

    func line(_ r: Result) -> String {
        "  \(r.name): \(format(r.perOperation[0])) / \(format(r.perOperation[r.perOperation.count / 2]))"
    }

    func psnr(_ pixels: UnsafeMutableRawPointer, _ reference: [UInt8], rect: PixelRect) -> Double {
        var squared = 0.0
        for y in rect.y..<(rect.y + rect.height) {
            for x in rect.x..<(rect.x + rect.width) {
                let o = (y * 1920 + x) * 4
                for channel in 0..<3 {
                    let d = Double(Int(pixels.load(fromByteOffset: o + channel, as: UInt8.self)) - Int(reference[o + channel]))
                    squared += d * d
                }
            }
        }
        let mse = squared / Double(rect.width * rect.height * 3)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }
}
