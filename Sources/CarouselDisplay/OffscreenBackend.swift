import CarouselImaging
#if canImport(Glibc)
import Glibc
#endif

/// A display in memory, for machines without one, tests and previews: two
/// buffers like a DRM backend, where "presenting" makes a buffer the screen
/// at once. `screenshot` writes the screen as a PNG.
public final class OffscreenBackend: DisplayBackend {
    public private(set) var panelSize: PixelSize
    public let panelRotation: PanelOrientation
    /// nil unless given: memory has no EDID (tests give one to check density scaling).
    public let physicalSize: PhysicalSize?
    public let pixelFormat = PixelFormat.xrgb8888
    /// Presenting makes a buffer the screen at once.
    public let presentsAsynchronously = false
    public var summary: String { "offscreen \(panelSize)" }
    public let connectorName = "offscreen"
    public var modeName: String { "\(panelSize)" }
    public let fileDescriptor: Int32? = nil
    /// A 60 Hz screen.
    public let framePeriodMicroseconds: Int64 = 16_667
    /// Frames presented so far.
    public private(set) var presented = 0

    private var buffers: [UnsafeMutableRawPointer]
    private var stride: Int
    private var front = 1

    public init(size: PixelSize, physicalSize: PhysicalSize? = nil, panelRotation: PanelOrientation = .normal) {
        panelSize = size
        self.physicalSize = physicalSize
        self.panelRotation = panelRotation
        stride = size.width * 4
        buffers = Self.allocate(size)
    }

    private static func allocate(_ size: PixelSize) -> [UnsafeMutableRawPointer] {
        (0..<2).map { _ in
            guard let p = PixelMemory.allocate(size.width * 4 * size.height) else {
                fatalError("out of memory for a \(size) offscreen display")
            }
            return p
        }
    }

    deinit { for b in buffers { PixelMemory.release(b, stride * panelSize.height) } }

    /// Memory takes any size: a request of another size reallocates the
    /// screen (as a DRM modeset to a new mode does); `nil` keeps it.
    public func changeMode(to request: DisplayModeRequest?) throws(DisplayError) -> Bool {
        guard let request else { return false }
        guard request.width > 0, request.height > 0 else {
            throw DisplayError("offscreen display cannot be \(request)")
        }
        let size = PixelSize(width: request.width, height: request.height)
        guard size != panelSize else { return false }
        for b in buffers { PixelMemory.release(b, stride * panelSize.height) }
        panelSize = size
        stride = size.width * 4
        buffers = Self.allocate(size)
        front = 1
        return true
    }

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
