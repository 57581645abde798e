// Helpers for the renderer's reference-image tests (STYLE.md, tier 2).
//
// The renderer's output is produced by the real binary (`carouseld render`,
// `carouseld simulate ... frame`) or the real `ItemCache`; everything it is
// compared with is made here by ImageMagick from geometry computed in this
// folder (Reference.swift) from SPEC.md's formulas. No pixel of a reference
// comes from the code under test, and the PNGs the renderer writes are read
// back with ImageMagick, not with the project's own decoder.

import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

// MARK: - Tools

enum Tools {
    /// ImageMagick's `convert` (Debian's `imagemagick`, installed by
    /// scripts/setup.sh), or nil when the real one is not installed. The
    /// machine may have a stand-in `convert` on PATH that only converts PNG to
    /// PPM; `-version` tells them apart.
    static let convert: String? = {
        var candidates = ["/usr/bin/convert", "/usr/bin/magick", "/usr/local/bin/magick"]
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            candidates.append("\(dir)/convert")
        }
        for path in candidates where FileManager.default.isExecutableFile(atPath: path) {
            if let r = try? run(path, ["-version"]), r.status == 0, r.text.contains("ImageMagick") {
                return path
            }
        }
        return nil
    }()

    static var imageMagickAvailable: Bool { convert != nil }

    /// The `carouseld` executable built next to this test bundle
    /// (`<scratch>/debug/carouseld`), or `$CAROUSELD_BIN`.
    static let carouseld: String? = {
        let fm = FileManager.default
        if let env = ProcessInfo.processInfo.environment["CAROUSELD_BIN"], fm.isExecutableFile(atPath: env) {
            return env
        }
        var candidates: [String] = []
        for start in [(try? fm.destinationOfSymbolicLink(atPath: "/proc/self/exe")), CommandLine.arguments.first] {
            guard let start else { continue }
            var dir = URL(fileURLWithPath: start).deletingLastPathComponent()
            // The test executable may sit inside a bundle directory (…/debug/X.xctest/…).
            for _ in 0..<4 {
                candidates.append(dir.appendingPathComponent("carouseld").path)
                dir = dir.deletingLastPathComponent()
            }
        }
        return candidates.first { fm.isExecutableFile(atPath: $0) && !$0.hasSuffix(".xctest") }
    }()

    /// The binary, or a recorded failure: `swift test` builds it with the tests,
    /// so a missing binary is a broken build, not a reason to skip.
    static func requireCarouseld(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        guard let path = carouseld else {
            Issue.record("carouseld binary not found next to the test bundle (build it, or set CAROUSELD_BIN)",
                         sourceLocation: sourceLocation)
            throw Skip()
        }
        return path
    }

    struct Skip: Error {}

    struct Result {
        var status: Int32
        var stdout: Data
        var stderr: String
        var text: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// Runs a program to completion. stderr goes to a file so that reading
    /// stdout to its end cannot deadlock on a full stderr pipe.
    static func run(_ program: String, _ arguments: [String]) throws -> Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: program)
        p.arguments = arguments
        let errPath = NSTemporaryDirectory() + "carousel-render-stderr-\(UUID().uuidString)"
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
        let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        return Result(status: p.terminationStatus, stdout: data, stderr: err)
    }

    /// Runs ImageMagick's convert; a failure is an error carrying its stderr.
    @discardableResult
    static func magick(_ arguments: [String]) throws -> Data {
        guard let convert else { throw ToolError(message: "ImageMagick is not installed") }
        let r = try run(convert, arguments)
        guard r.status == 0 else {
            throw ToolError(message: "convert \(arguments.joined(separator: " ")) exited \(r.status): \(r.stderr)")
        }
        return r.stdout
    }
}

struct ToolError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// The suites that need ImageMagick: skipped, with this message, only where it is not installed.
let imageMagickMissing = "ImageMagick not installed (scripts/setup.sh installs Debian's imagemagick): reference images cannot be built"

// MARK: - Scratch space

/// A fresh directory for one test's files. Removed when dropped, unless
/// `keep()` was called (a failing comparison keeps its PNGs for a look).
final class Scratch: @unchecked Sendable {
    let path: String
    private var kept = false

    init(_ label: String = "case") throws {
        path = NSTemporaryDirectory() + "carousel-render-\(label)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        try Data(text.utf8).write(to: URL(fileURLWithPath: file(name)))
        return file(name)
    }

    @discardableResult
    func write(_ name: String, bytes: [UInt8]) throws -> String {
        try Data(bytes).write(to: URL(fileURLWithPath: file(name)))
        return file(name)
    }

    func keep() { kept = true }

    deinit {
        if !kept { try? FileManager.default.removeItem(atPath: path) }
    }
}

// MARK: - Pixels

/// An 8-bit RGB picture read back through ImageMagick (as binary PPM).
struct RGBImage {
    let width: Int
    let height: Int
    let bytes: [UInt8]

    /// Reads any image file ImageMagick knows, flattened to 8-bit RGB.
    init(file: String) throws {
        let ppm = try Tools.magick([file, "-alpha", "off", "-depth", "8", "ppm:-"])
        try self.init(ppm: [UInt8](ppm))
    }

    /// Parses binary PPM (P6, maxval 255).
    init(ppm: [UInt8]) throws {
        var fields: [String] = []
        var i = 0
        while fields.count < 4 {
            while i < ppm.count, ppm[i] == 0x20 || ppm[i] == 0x0A || ppm[i] == 0x0D || ppm[i] == 0x09 { i += 1 }
            if i < ppm.count, ppm[i] == UInt8(ascii: "#") {
                while i < ppm.count, ppm[i] != 0x0A { i += 1 }
                continue
            }
            var word = ""
            while i < ppm.count, ppm[i] > 0x20 {
                word.append(Character(UnicodeScalar(ppm[i])))
                i += 1
            }
            guard !word.isEmpty else { throw ToolError(message: "truncated PPM header") }
            fields.append(word)
        }
        i += 1  // the single whitespace byte after maxval
        guard fields[0] == "P6", let w = Int(fields[1]), let h = Int(fields[2]), fields[3] == "255",
              ppm.count - i >= w * h * 3
        else { throw ToolError(message: "unexpected PPM header \(fields)") }
        width = w
        height = h
        bytes = Array(ppm[i..<(i + w * h * 3)])
    }

    func pixel(_ x: Int, _ y: Int) -> RGB {
        let o = (y * width + x) * 3
        return RGB(bytes[o], bytes[o + 1], bytes[o + 2])
    }

    /// Peak signal-to-noise ratio over all channels of all pixels, in dB
    /// (+infinity for identical pictures).
    func psnr(against other: RGBImage) -> Double {
        precondition(width == other.width && height == other.height)
        var sum = 0.0
        for i in 0..<bytes.count {
            let d = Double(Int(bytes[i]) - Int(other.bytes[i]))
            sum += d * d
        }
        if sum == 0 { return .infinity }
        let mse = sum / Double(bytes.count)
        return 10 * log10(255.0 * 255.0 / mse)
    }

    /// Pixels that differ at all, for exact comparisons.
    func differingPixels(from other: RGBImage) -> Int {
        precondition(width == other.width && height == other.height)
        var n = 0
        for p in 0..<(width * height) {
            let o = p * 3
            if bytes[o] != other.bytes[o] || bytes[o + 1] != other.bytes[o + 1] || bytes[o + 2] != other.bytes[o + 2] { n += 1 }
        }
        return n
    }

    /// How many pixels are exactly `color`.
    func count(of color: RGB) -> Int {
        var n = 0
        for p in 0..<(width * height) {
            let o = p * 3
            if bytes[o] == color.r, bytes[o + 1] == color.g, bytes[o + 2] == color.b { n += 1 }
        }
        return n
    }
}

struct RGB: Equatable, CustomStringConvertible, Sendable {
    var r: UInt8, g: UInt8, b: UInt8
    init(_ r: UInt8, _ g: UInt8, _ b: UInt8) { self.r = r; self.g = g; self.b = b }

    /// `#RRGGBB`.
    init(hex: String) {
        let v = UInt32(hex.dropFirst().prefix(6), radix: 16)!
        self.init(UInt8(v >> 16), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF))
    }

    var hex: String { String(format: "#%02X%02X%02X", r, g, b) }
    var description: String { hex }

    func distance(to o: RGB) -> Int {
        max(abs(Int(r) - Int(o.r)), abs(Int(g) - Int(o.g)), abs(Int(b) - Int(o.b)))
    }

    /// `top` with opacity `alpha` over this colour, rounded (how a
    /// translucent dot looks on a flat colour).
    func under(_ top: RGB, alpha: Double) -> RGB {
        func c(_ s: UInt8, _ d: UInt8) -> UInt8 { UInt8((Double(s) * alpha + Double(d) * (1 - alpha)).rounded()) }
        return RGB(c(top.r, r), c(top.g, g), c(top.b, b))
    }
}
