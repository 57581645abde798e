import CarouselImaging
#if canImport(Glibc)
import Glibc
#endif

/// A display in memory, for machines without one, tests and previews: two
/// buffers like a DRM backend, where "presenting" makes a buffer the screen
/// at once. `screenshot` writes the screen as a PNG.
public final class OffscreenBackend: DisplayBackend {
    public let panelSize: PixelSize
    public let panelRotation = PanelOrientation.normal
    public var summary: String { "offscreen \(panelSize)" }
    public let connectorName = "offscreen"
    public var modeName: String { "\(panelSize)" }
    public let fileDescriptor: Int32? = nil
    /// A 60 Hz screen.
    public let framePeriodMicroseconds: Int64 = 16_667
    /// Frames presented so far.
    public private(set) var presented = 0

    private let buffers: [UnsafeMutableRawPointer]
    private let stride: Int
    private var front = 1

    public init(size: PixelSize) {
        panelSize = size
        stride = size.width * 4
        buffers = (0..<2).map { _ in
            guard let p = PixelMemory.allocate(size.width * 4 * size.height) else {
                fatalError("out of memory for a \(size) offscreen display")
            }
            return p
        }
    }

    deinit { for b in buffers { PixelMemory.release(b, stride * panelSize.height) } }

    public func acquire() -> ScanoutBuffer? {
        ScanoutBuffer(pixels: buffers[1 - front], stride: stride, size: panelSize, index: 1 - front)
    }

    public func present(_ buffer: ScanoutBuffer) throws(DisplayError) {
        front = buffer.index
        presented += 1
    }

    public func dispatch() throws(DisplayError) -> Bool { false }

    public func restore() {}

    /// Memory has no connectors: nothing to look at again.
    public func reprobe() throws(DisplayError) -> Bool { false }

    /// Writes what is on the screen as a PNG.
    public func screenshot(to path: String) throws(PNGWriteError) {
        try PNGWriter.write(path: path, pixels: UnsafeRawPointer(buffers[front]), width: panelSize.width,
                            height: panelSize.height, stride: stride)
    }

    /// The screen's pixel at (x, y), 0xFFRRGGBB.
    public func pixel(x: Int, y: Int) -> UInt32 {
        buffers[front].load(fromByteOffset: y * stride + x * 4, as: UInt32.self) | 0xFF00_0000
    }
}
