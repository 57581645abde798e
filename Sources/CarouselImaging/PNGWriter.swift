import CImageCodecs

/// Why a PNG could not be written, with the file and the library's or the system's reason.
public struct PNGWriteError: Error, Equatable, Sendable, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "cannot write PNG \(path): \(reason)" }
}

/// Writes XRGB8888 pixels as PNG files (screenshots, `carouseld render`).
public enum PNGWriter {
    /// Writes `height` rows of `stride` bytes at `pixels` to `path`, atomically.
    /// The corresponding C function is `cic_png_write_file` (libpng's `png_write_row`).
    public static func write(path: String, pixels: UnsafeRawPointer, width: Int, height: Int,
                             stride: Int) throws(PNGWriteError) {
        var err = cic_error()
        let rc = cic_png_write_file(path, pixels.assumingMemoryBound(to: UInt8.self),
                                    UInt32(width), UInt32(height), stride, &err)
        if rc != 0 { throw PNGWriteError(path: path, reason: message(err)) }
    }

    /// Writes the same PNG at the current position of the open file `descriptor`.
    public static func write(descriptor: Int32, pixels: UnsafeRawPointer, width: Int, height: Int,
                             stride: Int) throws(PNGWriteError) {
        var err = cic_error()
        let rc = cic_png_write_descriptor(descriptor, pixels.assumingMemoryBound(to: UInt8.self),
                                          UInt32(width), UInt32(height), stride, &err)
        if rc != 0 { throw PNGWriteError(path: "the file passed", reason: message(err)) }
    }

    private static func message(_ err: cic_error) -> String {
        withUnsafeBytes(of: err.message) { raw in String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self) }
    }

    /// Writes a decoded image (its colour channels; alpha is dropped).
    public static func write(_ image: DecodedImage, to path: String) throws(PNGWriteError) {
        try image.withUnsafeBytes { (raw) throws(PNGWriteError) in
            try write(path: path, pixels: raw.baseAddress!, width: image.width, height: image.height, stride: image.stride)
        }
    }
}
