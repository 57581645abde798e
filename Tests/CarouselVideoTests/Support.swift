import CarouselImaging
import CarouselVideo
import Foundation
import XCTest

/// Clips made at test time with Debian's `ffmpeg`, and the frames `ffmpeg`
/// itself extracts from them: the references are never our own decoder's.
enum Tools {
    static let ffmpeg = "/usr/bin/ffmpeg"
    static let ffprobe = "/usr/bin/ffprobe"

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs a program to completion; stderr goes to a file so that reading
    /// stdout to its end cannot deadlock on a full stderr pipe.
    static func run(_ program: String, _ arguments: [String]) throws -> Data {
        guard FileManager.default.isExecutableFile(atPath: program) else {
            throw Failure(description: "\(program) is not installed (scripts/setup.sh installs Debian's ffmpeg)")
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: program)
        p.arguments = arguments
        let errPath = NSTemporaryDirectory() + "carousel-video-stderr-\(UUID().uuidString)"
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: errPath) }
        let errHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        let out = Pipe()
        p.standardOutput = out
        p.standardError = errHandle
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        try errHandle.close()
        guard p.terminationStatus == 0 else {
            let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
            throw Failure(description: "\(program) \(arguments.joined(separator: " ")) exited \(p.terminationStatus): \(err)")
        }
        return data
    }

    /// `ffmpeg -v error -y ARGS`.
    static func ffmpeg(_ arguments: [String]) throws {
        _ = try run(ffmpeg, ["-nostdin", "-v", "error", "-y"] + arguments)
    }

    /// Frame `index` (decode order after ffmpeg's own autorotation, i.e.
    /// presentation order) as ffmpeg extracts it, optionally scaled by
    /// libswscale with `flags`: BGRA bytes, `width * 4` a row.
    static func referenceFrame(_ clip: String, index: Int, scale: (width: Int, height: Int, flags: String)? = nil) throws -> Data {
        var filter = "select=eq(n\\,\(index))"
        if let scale { filter += ",scale=\(scale.width):\(scale.height):flags=\(scale.flags)" }
        filter += ",format=bgra"
        return try run(ffmpeg, ["-nostdin", "-v", "error", "-i", clip, "-vf", filter, "-vsync", "0", "-frames:v", "1",
                                "-f", "rawvideo", "-"])
    }

    /// The frames' best-effort times as ffprobe reports them, less the stream's start time.
    static func probedTimes(_ clip: String) throws -> [Double] {
        let start = try run(ffprobe, ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=start_time",
                                      "-of", "csv=p=0", clip])
        let startTime = Double(String(decoding: start, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        let out = try run(ffprobe, ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                    "frame=best_effort_timestamp_time", "-of", "csv=p=0", clip])
        return String(decoding: out, as: UTF8.self).split(whereSeparator: \.isNewline).compactMap {
            Double($0.trimmingCharacters(in: CharacterSet(charactersIn: ", "))).map { $0 - startTime }
        }
    }

    /// The display matrix's angle as ffprobe prints it ("rotation of -90.00 degrees"), or 0.
    static func probedRotation(_ clip: String) throws -> Double {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: ffprobe)
        p.arguments = ["-v", "info", clip]
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        guard let range = text.range(of: "rotation of ") else { return 0 }
        return Double(text[range.upperBound...].prefix { $0 != " " }) ?? 0
    }
}

/// Pixels in memory as the decoder writes them: `height` rows of `stride` bytes.
struct Canvas {
    var width: Int
    var height: Int
    var stride: Int
    var bytes: [UInt8]

    init(width: Int, height: Int, stride: Int? = nil, marker: UInt32 = 0x1234_5678) {
        self.width = width
        self.height = height
        self.stride = stride ?? width * 4
        bytes = [UInt8](repeating: 0, count: self.stride * height)
        for y in 0..<height {
            for x in 0..<width { set(x, y, marker) }
        }
    }

    func pixel(_ x: Int, _ y: Int) -> UInt32 {
        let o = y * stride + x * 4
        return UInt32(bytes[o]) | UInt32(bytes[o + 1]) << 8 | UInt32(bytes[o + 2]) << 16 | UInt32(bytes[o + 3]) << 24
    }

    mutating func set(_ x: Int, _ y: Int, _ value: UInt32) {
        let o = y * stride + x * 4
        bytes[o] = UInt8(truncatingIfNeeded: value)
        bytes[o + 1] = UInt8(truncatingIfNeeded: value >> 8)
        bytes[o + 2] = UInt8(truncatingIfNeeded: value >> 16)
        bytes[o + 3] = UInt8(truncatingIfNeeded: value >> 24)
    }

    mutating func draw(_ decoder: VideoDecoder, rect: PixelRect) throws {
        let (w, h, s) = (width, height, stride)
        try bytes.withUnsafeMutableBytes { try decoder.draw(into: $0.baseAddress!, width: w, height: h, stride: s, rect: rect) }
    }

    /// Whether every pixel inside `rect` has alpha 0xFF and every one outside still holds `marker`.
    func check(written rect: PixelRect, marker: UInt32 = 0x1234_5678) -> String? {
        for y in 0..<height {
            for x in 0..<width {
                let inside = x >= rect.x && x < rect.x + rect.width && y >= rect.y && y < rect.y + rect.height
                let p = pixel(x, y)
                if inside, p >> 24 != 0xFF { return "pixel (\(x), \(y)) = \(String(p, radix: 16)): alpha is not 0xFF" }
                if !inside, p != marker { return "pixel (\(x), \(y)) outside \(rect) was written" }
            }
        }
        return nil
    }
}

/// Peak signal-to-noise ratio in dB over R, G and B between a region of
/// `canvas` (from (x, y), `width` x `height`) and tightly packed BGRA
/// `reference` bytes; infinity when identical.
func psnr(_ canvas: Canvas, x: Int, y: Int, width: Int, height: Int, reference: Data) -> Double {
    precondition(reference.count == width * height * 4, "reference is \(reference.count) bytes, not \(width)x\(height) BGRA")
    var squared = 0.0
    reference.withUnsafeBytes { ref in
        for row in 0..<height {
            for col in 0..<width {
                let p = canvas.pixel(x + col, y + row)
                let r = (row * width + col) * 4
                for channel in 0..<3 {
                    let d = Double(Int((p >> (8 * UInt32(channel))) & 0xFF) - Int(ref[r + channel]))
                    squared += d * d
                }
            }
        }
    }
    let mse = squared / Double(width * height * 3)
    return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
}
