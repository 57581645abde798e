import CarouselCore
import CarouselImaging
import CarouselRender
#if canImport(Glibc)
import Glibc
#endif

/// `--prepare FOLDER [WIDTHxHEIGHT]`: what a picture costs the decode cache
/// (issue 31, item 2), per picture of the folder, against a memcpy of the
/// item's frame in the same run: the file's decode at 4 bytes a pixel, the
/// same straight to 3 where it can be, and the cache's whole preparation
/// (decode, scaling, fill, caption, turn, packing). Run it under
/// `perf record` to see where a step goes.
struct PrepareBenchmarks {
    let paths: [String]
    let item: PixelSize

    init?(arguments: [String]) {
        guard let folder = arguments.first, let dir = opendir(folder) else { return nil }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            let ext = name.split(separator: ".").last.map { $0.lowercased() } ?? ""
            if ["jpg", "jpeg", "png", "webp", "gif", "heic", "heif", "avif"].contains(ext) { names.append(name) }
        }
        closedir(dir)
        paths = names.sorted().map { folder + "/" + $0 }
        let size = arguments.dropFirst().first?.split(separator: "x").compactMap { Int($0) } ?? []
        item = size.count == 2 ? PixelSize(width: size[0], height: size[1]) : PixelSize(width: 1920, height: 1080)
        if paths.isEmpty { return nil }
    }

    func run() -> [String] {
        let settings = ItemCache.Settings(itemSize: item, fit: .contain, background: .black, maxPixels: 64_000_000,
                                          budgetBytes: 64 << 20)
        let n = paths.count
        let bytes = item.width * item.height * 4
        let from = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        let to = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        from.initializeMemory(as: UInt8.self, repeating: 7, count: bytes)
        to.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
        defer { from.deallocate(); to.deallocate() }
        let copy = measure("memcpy of a \(item.width)x\(item.height) frame", operations: 20) {
            for _ in 0..<20 { memcpy(to, from, bytes) }
            return Int(to.load(as: UInt8.self))
        }
        let decode = measure("decode at 4 bytes a pixel (ImageDecoder)", operations: n, rounds: 3) {
            paths.reduce(0) { $0 &+ ((try? ImageDecoder.decode(path: $1, targetSize: item, fit: .contain))?.width ?? 0) }
        }
        let packed = measure("decode at 3 bytes a pixel where it can (a JPEG of the item's size)", operations: n, rounds: 3) {
            paths.reduce(0) {
                $0 &+ ((try? ImageDecoder.decode(path: $1, targetSize: item, fit: .contain, packedAt: item))?.width ?? 0)
            }
        }
        let prepare = measure("the cache's preparation (ItemCache.prepare)", operations: n, rounds: 3) {
            paths.reduce(0) { $0 &+ ((try? ItemCache.prepare(PageKey($1), settings: settings))?.width ?? 0) }
        }
        let c = copy.perOperation[0]
        func line(_ r: Result) -> String {
            "  \(r.name): \(format(r.perOperation[0])) best, \(format(r.perOperation[r.perOperation.count / 2])) median"
                + ", \(format2(r.perOperation[0] / c))x the memcpy"
        }
        return ["  \(n) pictures, item \(item.width)x\(item.height)", line(copy), line(decode), line(packed), line(prepare)]
    }
}
