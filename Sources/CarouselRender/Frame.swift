import CarouselCore
import CarouselImaging
#if canImport(Glibc)
import Glibc
#endif

/// A 32-bit XRGB8888 picture in ordinary memory: the shadow buffer frames are
/// composed into, and what `render`, `frame` and screenshots write out.
///
/// Composition happens here rather than in scanout memory because dumb
/// buffers are often write-combined: reading them back is very slow, and
/// blending needs reads.
public final class Frame: @unchecked Sendable {
    public let width: Int
    public let height: Int
    /// Bytes per row.
    public let stride: Int
    public let pixels: UnsafeMutablePointer<UInt32>

    /// A frame filled with `color`. Traps only if memory runs out, which a
    /// frame (allocated once at start-up) makes a start-up failure.
    public init(width: Int, height: Int, color: UInt32 = 0xFF00_0000) {
        precondition(width > 0 && height > 0, "a frame needs a positive size")
        self.width = width
        self.height = height
        stride = width * 4
        guard let memory = PixelMemory.allocate(stride * height) else {
            fatalError("out of memory allocating a \(width)x\(height) frame")
        }
        pixels = memory.bindMemory(to: UInt32.self, capacity: width * height)
        pixels.initialize(repeating: color, count: width * height)
    }

    deinit { PixelMemory.release(pixels, stride * height) }

    public func row(_ y: Int) -> UnsafeMutablePointer<UInt32> { pixels + y * width }

    /// The pixel at (x, y) as 0xFFRRGGBB.
    public func pixel(x: Int, y: Int) -> UInt32 { pixels[y * width + x] | 0xFF00_0000 }

    /// Writes the frame as a PNG file.
    public func writePNG(to path: String) throws(PNGWriteError) {
        try PNGWriter.write(path: path, pixels: UnsafeRawPointer(pixels), width: width, height: height, stride: stride)
    }

    /// Writes the frame as a PNG into an open file (which stays open).
    public func writePNG(toDescriptor descriptor: Int32) throws(PNGWriteError) {
        try PNGWriter.write(descriptor: descriptor, pixels: UnsafeRawPointer(pixels), width: width, height: height,
                            stride: stride)
    }
}

extension Frame {
    /// This panel-oriented frame turned back upright, as the logical picture
    /// `rotation` turned onto the panel (screenshots show what people see).
    public func upright(from rotation: Rotation) -> Frame {
        guard rotation != .none else { return self }
        let inverse = Rotation(rawValue: (360 - rotation.rawValue) % 360)!
        let size = rotation.logicalSize(panelWidth: width, panelHeight: height)
        let result = Frame(width: size.width, height: size.height)
        Scanout.write(self, rotation: inverse, to: UnsafeMutableRawPointer(result.pixels), stride: result.stride,
                      panelWidth: result.width, panelHeight: result.height)
        return result
    }
}

extension PixelColor {
    /// Opaque 0xFFRRGGBB (alpha ignored): the background of an XRGB frame.
    var opaqueWord: UInt32 { 0xFF00_0000 | UInt32(red) << 16 | UInt32(green) << 8 | UInt32(blue) }
}
