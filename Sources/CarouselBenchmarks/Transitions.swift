import CarouselCore
import CarouselDisplay
import CarouselImaging
import CarouselRender
#if canImport(Glibc)
import Glibc
#endif

/// Issue 13's figures: a crossfade frame against a memcpy of the frame
/// (target: within 2x), and `fit = blur`'s fill against the decode it
/// follows (made once per picture, on the decoder thread).
struct TransitionBenchmarks {
    /// The panel (`--transitions WIDTHxHEIGHT`; 4K is issue 31's item 4).
    var panel = PixelSize(width: 1920, height: 1080)

    func run(folder: String) -> [String] {
        var lines: [String] = []
        let display = OffscreenBackend(size: panel)
        let source = Frame(width: panel.width, height: panel.height, color: 0xFF33_4455)
        let frames = 60
        func memcpyOfTheFrame() -> Result { measureMemcpy("memcpy", of: source, into: display, frames: frames) }
        let paths = FramePathBenchmarks(panel: panel)
        // Pictures at 4 bytes a pixel, and packed at 3 as the decode cache keeps them (each widened once
        // per crossfade: a new writer per round, so that every round pays for it).
        for (rotation, packed) in [(Rotation.none, false), (.none, true), (.clockwise90, false), (.clockwise90, true)] {
            let (compositor, images) = paths.carousel(rotation, packed: packed)
            // A whole 0.5 s crossfade at 60 Hz from one full-screen picture to the next, dots on.
            let fade = measure("crossfade frame \(panel), rotation \(rotation.rawValue), pictures at \(packed ? 3 : 4) bytes a pixel",
                               operations: frames) {
                let writer = ScreenWriter(compositor: compositor)
                var sum = 0
                for k in 0..<frames {
                    compositor.layOut(&writer.scene, offset: 0, count: 10, wrap: true, page: 0, pageCount: 10) { images[$0 % 3] }
                    compositor.layOut(&writer.incoming, offset: 1, count: 10, wrap: true, page: 0, pageCount: 10) { images[$0 % 3] }
                    writer.fade = Double(k) / Double(frames)
                    let b = display.acquire()!
                    let window = writer.draw(into: b)
                    try! display.present(b, window: window)
                    sum &+= writer.pixelsWritten
                }
                return sum
            }
            let floor = memcpyOfTheFrame()
            lines.append(paths.line(fade) + " = \(format2(fade.perOperation[0] / floor.perOperation[0]))x / "
                         + "\(format2(fade.median / floor.median))x memcpy of the frame, best / median (target: within 2x)")
        }

        let path = folder + "/portrait.jpg"
        guard shell("convert -size 3000x4000 plasma:fractal -quality 90 \(path) 2>/dev/null") else {
            return lines + ["  (skipped the blur fill: ImageMagick's convert is needed to make the 3000x4000 JPEG)"]
        }
        let box = panel
        let decode = measure("decode+scale 3000x4000 JPEG to \(box), fit = contain", operations: 1, rounds: 5) {
            let image = try! ImageDecoder.decode(path: path, targetSize: box, fit: .contain)
            return try! ImageScaler.scale(image, to: box, fit: .contain, background: .black).width
        }
        lines.append(paths.line(decode))
        for radius in [10.0, 40.0, 200.0] {
            let blurred = measure("the same with fit = blur, blur_radius \(Int(radius))", operations: 1, rounds: 5) {
                let image = try! ImageDecoder.decode(path: path, targetSize: box, fit: .blur)
                return try! ImageScaler.scale(image, to: box, fit: .blur, background: .black,
                                              blur: BlurStyle(radius: radius, dim: 0.4)).width
            }
            lines.append(paths.line(blurred) + " = \(format2(blurred.perOperation[0] / decode.perOperation[0]))x fit = contain")
        }
        return lines + heifInHelper(folder: folder, photo: path)
    }

    /// What decoding HEIF in a helper process (DecodingProcess) costs: a
    /// phone-sized HEIC decoded here and in `carouseld decode-picture`.
    func heifInHelper(folder: String, photo: String) -> [String] {
        let heic = folder + "/phone.heic"
        let helper = String(cString: realpath("/proc/self/exe", nil)).split(separator: "/").dropLast().joined(separator: "/")
        let carouseld = "/" + helper + "/carouseld"
        guard access(carouseld, X_OK) == 0 else {
            return ["  (skipped the HEIF helper: build carouseld next to carousel-bench: swift build -c release --product carouseld)"]
        }
        guard shell("convert \(photo) -resize 4032x3024! /tmp/carousel-bench-phone.png 2>/dev/null && heif-enc -q 80 -o \(heic) /tmp/carousel-bench-phone.png >/dev/null 2>&1") else {
            return ["  (skipped the HEIF helper: heif-enc, package libheif-examples, makes the HEIC)"]
        }
        let box = panel
        func decode(_ process: DecodingProcess?, _ name: String) -> Result {
            ImageDecoder.heifProcess = process
            defer { ImageDecoder.heifProcess = nil }
            return measure(name, operations: 1, rounds: 5) {
                let image = try! ImageDecoder.decode(path: heic, targetSize: box, fit: .contain)
                return try! ImageScaler.scale(image, to: box, fit: .contain, background: .black).width
            }
        }
        let here = decode(nil, "decode+scale 4032x3024 HEIC to \(box) in this process")
        let there = decode(DecodingProcess(executable: carouseld, arguments: ["carouseld", "decode-picture"]),
                           "the same, decoded in the helper process (carouseld decode-picture)")
        let paths = FramePathBenchmarks(panel: panel)
        return [paths.line(here), paths.line(there) + " = \(format2(there.perOperation[0] / here.perOperation[0]))x in this process"]
    }
}
