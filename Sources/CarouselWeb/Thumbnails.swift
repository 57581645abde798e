import CarouselImaging
import CWebP
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The Photos page's thumbnails: each picture or clip made once into a
/// small WebP (at most `side` pixels a side, the middle of it), by this
/// executable as a helper (`carouseld-web thumbnail`, the decoders in a
/// process of their own, as an upload's check), kept in the web's state
/// folder under a name its file's name, size and time make (a changed file
/// gets a new one; old ones are left for the next `prune`).
public struct Thumbnails: Sendable {
    public let folder: String
    public let executable: String
    public let maxPixels: Int
    public static let side = 240

    public init(folder: String, executable: String = "/proc/self/exe", maxPixels: Int) {
        self.folder = folder
        self.executable = executable
        self.maxPixels = maxPixels
        mkdir(folder, 0o750)
    }

    /// The thumbnail of the file at `path`; nil when it is no picture the
    /// decoders take. Made in a helper when one is free (`Helpers`).
    public func thumbnail(of path: String) async -> [UInt8]? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let key = Self.key("\(name)\0\(info.st_size)\0\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)")
        let file = folder + "/" + key + ".webp"
        if let cached = FileManager.default.contents(atPath: file), !cached.isEmpty { return Array(cached) }
        let argv = ["carouseld-web", "thumbnail", "--max-pixels", String(maxPixels), "--name", name]
        let executable = executable
        guard let run = await Helpers.run({ HelperRun(executable: executable, arguments: argv, input: path, timeoutMilliseconds: 60_000) }),
              run.status.map({ ($0 >> 8) & 0xFF == 0 && $0 & 0x7F == 0 }) == true, run.output.count > 12,
              run.output.starts(with: Array("RIFF".utf8)) else { return nil }
        try? WebState.writeAtomically(run.output, to: file, mode: 0o640)
        return run.output
    }

    /// FNV-1a, 64 bits, in hex: a file name for the key.
    static func key(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return String(hash, radix: 16)
    }

    /// `image`, cut to its middle square and scaled to at most `side`, as WebP (quality 70).
    public static func encode(_ image: DecodedImage, side: Int = Thumbnails.side) -> [UInt8]? {
        // The decode is already at about the size; the middle square of it.
        let edge = min(image.width, image.height)
        let x0 = (image.width - edge) / 2, y0 = (image.height - edge) / 2
        let out = min(edge, side)
        var bgr = [UInt8](repeating: 0, count: out * out * 3)
        image.withUnsafeBytes { pixels in
            let bpp = image.format.bytesPerPixel
            for y in 0..<out {
                let sy = y0 + y * edge / out
                for x in 0..<out {
                    let sx = x0 + x * edge / out
                    let p = sy * image.stride + sx * bpp
                    // B, G, R first in memory in every format the decoders give (little-endian).
                    bgr[(y * out + x) * 3] = pixels[p]
                    bgr[(y * out + x) * 3 + 1] = pixels[p + 1]
                    bgr[(y * out + x) * 3 + 2] = pixels[p + 2]
                }
            }
        }
        var output: UnsafeMutablePointer<UInt8>?
        let size = WebPEncodeBGR(bgr, Int32(out), Int32(out), Int32(out * 3), 70, &output)
        guard size > 0, let output else { return nil }
        defer { WebPFree(output) }
        return Array(UnsafeBufferPointer(start: output, count: size))
    }
}
