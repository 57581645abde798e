import CarouselCore
import CarouselImaging
import CarouselRender
#if canImport(Glibc)
import Glibc
#endif

// Issue 3's figures: composition against the memory-copy floor, DCT-scaled
// decoding against full decoding, and resident memory for 10 vs 10,000 images.

/// Runs a shell command (ImageMagick makes the test pictures); true on success.
func shell(_ command: String) -> Bool {
    fflush(nil)  // the child writes to the same stdout: keep the lines in order
    return system(command) == 0
}

/// Resident set size of this process, from /proc/self/status (kB).
func residentKB() -> Int {
    guard let f = fopen("/proc/self/status", "r") else { return -1 }
    defer { fclose(f) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, 256, f) != nil {
        let s = String(cString: line)
        if s.hasPrefix("VmRSS:") {
            return Int(s.split(separator: " ").dropFirst().first ?? "") ?? -1
        }
    }
    return -1
}

struct PixelBenchmarks {
    let folder: String

    init(folder: String) { self.folder = folder }

    init() {
        var template = Array("/tmp/carousel-bench-XXXXXX".utf8CString)
        folder = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    /// Compose a 1920x1080 frame mid-scroll (two items on screen) vs. copying
    /// the same two strips with memcpy: the CPU floor for this frame.
    func composeVersusMemcpy() -> [String] {
        var settings = CarouselSettings()
        settings.wrap = true
        let geometry = Geometry(viewport: Viewport(width: 1920, height: 1080), settings: settings)
        let compositor = Compositor(geometry: geometry, style: RenderStyle())
        let size = compositor.itemPixelSize
        let images = (0..<2).map { i in
            try! DecodedImage(width: size.width, height: size.height, format: .xrgb8888) { buffer, _ in
                buffer.bindMemory(to: UInt32.self).initialize(repeating: 0xFF10_2030 &+ UInt32(i))
            }
        }
        let frame = Frame(width: 1920, height: 1080)
        let frames = 200
        let compose = measure("compose 1920x1080 mid-scroll", operations: frames) {
            var sum = 0
            for k in 0..<frames {
                let offset = 0.3 + Double(k % 10) * 0.01
                compositor.compose(into: frame, offset: offset, count: 10, wrap: true, page: 0, pageCount: 10) { images[$0 % 2] }
                sum &+= Int(frame.pixels[k])
            }
            return sum
        }
        let split = 1920 * 7 / 10
        let copy = measure("memcpy two strips 1920x1080", operations: frames) {
            var sum = 0
            for k in 0..<frames {
                images[0].withUnsafeBytes { a in
                    images[1].withUnsafeBytes { b in
                        for y in 0..<1080 {
                            let row = frame.row(y)
                            memcpy(row, a.baseAddress! + y * images[0].stride + (1920 - split) * 4, split * 4)
                            memcpy(row + split, b.baseAddress! + y * images[1].stride, (1920 - split) * 4)
                        }
                    }
                }
                sum &+= Int(frame.pixels[k])
            }
            return sum
        }
        let ratio = compose.perOperation[0] / copy.perOperation[0]
        return [line(compose), line(copy), "  compose / memcpy: \(format2(ratio))x (target: within 1.5x)"]
    }

    /// Decode + scale a 6000x4000 JPEG to 1920x1080: DCT-scaled vs. full size then scaled.
    func dctVersusFullDecode() -> [String] {
        let path = folder + "/big.jpg"
        guard shell("convert -size 6000x4000 plasma:fractal -quality 90 \(path) 2>/dev/null") else {
            return ["  (skipped: ImageMagick's convert is needed to make the 6000x4000 JPEG)"]
        }
        let box = PixelSize(width: 1920, height: 1080)
        let dct = measure("decode+scale 6000x4000 JPEG, DCT scaling", operations: 1, rounds: 5) {
            let image = try! ImageDecoder.decode(path: path, targetSize: box, fit: .contain)
            return try! ImageScaler.scale(image, to: box, fit: .contain, background: .black).width
        }
        let full = measure("decode+scale 6000x4000 JPEG, full decode", operations: 1, rounds: 3) {
            let image = try! ImageDecoder.decode(path: path, targetSize: nil, fit: .contain)
            return try! ImageScaler.scale(image, to: box, fit: .contain, background: .black).width
        }
        return [line(dct), line(full), "  full / DCT: \(format2(full.perOperation[0] / dct.perOperation[0]))x"]
    }

    /// Scroll through `count` images (links to 10 distinct 1920x1080 JPEGs)
    /// with the cache as the daemon uses it, and report resident memory.
    func memory(count: Int) -> String {
        let sub = folder + "/album\(count)"
        _ = shell("mkdir -p \(sub)")
        for i in 0..<10 where access("\(folder)/src\(i).jpg", F_OK) != 0 {
            _ = shell("convert -size 1920x1080 plasma:fractal -quality 85 \(folder)/src\(i).jpg 2>/dev/null")
        }
        for i in 0..<count { symlink("\(folder)/src\(i % 10).jpg", "\(sub)/img\(i).jpg") }
        let paths = (0..<count).map { "\(sub)/img\($0).jpg" }
        let cache = ItemCache(settings: .init(itemSize: PixelSize(width: 1920, height: 1080), fit: .contain,
                                              background: .black, maxPixels: 64_000_000, budgetBytes: 64 << 20))
        var peak = 0
        let before = residentKB()
        for step in 0..<40 {
            let i = step * max(1, count / 40)
            cache.want([paths[i % count], paths[(i + 1) % count], paths[(i + 2) % count], paths[(i + count - 1) % count]])
            cache.waitUntilIdle()
            peak = max(peak, residentKB())
        }
        return "  scroll through \(count) images: RSS \(before / 1024) MiB before, peak \(peak / 1024) MiB; cache holds \(cache.residentBytes >> 20) MiB in \(cache.residentCount) pictures"
    }

    func line(_ r: Result) -> String {
        "  \(r.name): \(format(r.perOperation[0])) / \(format(r.perOperation[r.perOperation.count / 2]))"
    }

    func cleanUp() { _ = shell("rm -rf \(folder)") }
}

func format2(_ x: Double) -> String {
    let hundredths = Int((x * 100).rounded())
    return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
}
