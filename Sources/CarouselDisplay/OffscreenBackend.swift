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
    /// Off, the screen is black, nothing is handed out or presented, and the
    /// buffers are cleared (on again, draw a whole frame).
    public private(set) var isPoweredOn = true
    /// How often the power was switched (off and on each count): tests see
    /// a switch that should not have happened.
    public private(set) var powerSwitches = 0
    /// The next `setPower` throws this (once), as a DRM commit can fail.
    public var failNextPowerSwitch: DisplayError?

    private var buffers: [UnsafeMutableRawPointer]
    /// The buffers' whole size: the panel, or longer along one axis when room was reserved.
    private var extent: PixelSize
    private var stride: Int { extent.width * 4 }
    private var front = 1
    /// The window of the front buffer on screen.
    public private(set) var window = PixelPoint.zero
    /// Which buffer is on screen (1 from the start, black).
    public var frontIndex: Int { front }
    private var generation = 0
    /// The front buffer is on screen (`acquireShown` hands it out): from the
    /// start, black, as a DRM display shows its modeset's buffer; after new
    /// buffers, once one was presented.
    private var frontPresented = true

    public init(size: PixelSize, physicalSize: PhysicalSize? = nil, panelRotation: PanelOrientation = .normal) {
        panelSize = size
        self.physicalSize = physicalSize
        self.panelRotation = panelRotation
        extent = size
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

    private func reallocate(panel: PixelSize, extent newExtent: PixelSize) {
        for b in buffers { PixelMemory.release(b, stride * extent.height) }
        panelSize = panel
        extent = newExtent
        buffers = Self.allocate(newExtent)
        front = 1
        frontPresented = false
        window = .zero
        generation += 1
    }

    deinit { for b in buffers { PixelMemory.release(b, stride * extent.height) } }

    /// Memory takes any size: a request of another size reallocates the
    /// screen (as a DRM modeset to a new mode does, dropping any window
    /// room); `nil` keeps it.
    public func changeMode(to request: DisplayModeRequest?) throws(DisplayError) -> Bool {
        guard let request else { return false }
        guard request.width > 0, request.height > 0 else {
            throw DisplayError("offscreen display cannot be \(request)")
        }
        let size = PixelSize(width: request.width, height: request.height)
        guard size != panelSize else { return false }
        reallocate(panel: size, extent: size)
        return true
    }

    /// Memory can show any window: the buffers grow by `room` along `axis`.
    /// The screen keeps showing what it showed (as a DRM display keeps the
    /// buffer on screen until the next flip).
    public func reserveWindowRoom(_ room: Int, along axis: ScanoutAxis) -> Int {
        let room = max(0, room)
        let wanted = axis == .horizontal
            ? PixelSize(width: panelSize.width + room, height: panelSize.height)
            : PixelSize(width: panelSize.width, height: panelSize.height + room)
        guard wanted != extent else { return room }
        let shownBefore = shown, strideBefore = stride
        let old = buffers, oldBytes = stride * extent.height
        buffers = Self.allocate(wanted)
        extent = wanted
        for y in 0..<panelSize.height {
            memcpy(buffers[1] + y * stride, shownBefore + y * strideBefore, panelSize.width * 4)
        }
        for b in old { PixelMemory.release(b, oldBytes) }
        front = 1
        frontPresented = false
        window = .zero
        generation += 1
        return room
    }

    public func setPower(on: Bool) throws(DisplayError) {
        if let failure = failNextPowerSwitch {
            failNextPowerSwitch = nil
            throw failure
        }
        guard on != isPoweredOn else { return }
        isPoweredOn = on
        powerSwitches += 1
        // A dark screen shows black, and what the buffers held is gone as
        // far as the contract goes (a driver may have moved or cleared them
        // meanwhile, with no new generation): the worst case, so that a
        // renderer writing only what changed shows it.
        if !on { for b in buffers { memset(b, 0, stride * extent.height) } }
    }

    public func acquire() -> ScanoutBuffer? {
        guard isPoweredOn else { return nil }
        return ScanoutBuffer(pixels: buffers[1 - front], stride: stride, size: panelSize, extent: extent, index: 1 - front,
                      generation: generation)
    }

    /// The buffer on screen, for writes beside its window (see `DisplayBackend.acquireShown`).
    public func acquireShown() -> (buffer: ScanoutBuffer, window: PixelPoint)? {
        guard isPoweredOn, frontPresented else { return nil }
        return (ScanoutBuffer(pixels: buffers[front], stride: stride, size: panelSize, extent: extent, index: front,
                              generation: generation), window)
    }

    public func present(_ buffer: ScanoutBuffer, window: PixelPoint) throws(DisplayError) {
        guard isPoweredOn else {
            throw DisplayError("offscreen: present while the display is off", hint: "a bug: switch it on first")
        }
        guard buffer.generation == generation, window.x >= 0, window.y >= 0,
              window.x + panelSize.width <= extent.width, window.y + panelSize.height <= extent.height else {
            throw DisplayError("offscreen: window \(window) of a \(panelSize) panel does not lie in a \(extent) buffer of generation \(generation)",
                               hint: "a bug in the renderer")
        }
        front = buffer.index
        self.window = window
        frontPresented = true
        presented += 1
    }

    public func dispatch() throws(DisplayError) -> Bool { false }

    public func restore() {}

    /// Memory has no connectors: nothing to look at again.
    public func reprobe() throws(DisplayError) -> Bool { false }

    /// Writes what is on the screen as a PNG.
    public func screenshot(to path: String) throws(PNGWriteError) {
        try PNGWriter.write(path: path, pixels: UnsafeRawPointer(shown), width: panelSize.width,
                            height: panelSize.height, stride: stride)
    }

    /// The screen's pixel at (x, y), 0xFFRRGGBB.
    public func pixel(x: Int, y: Int) -> UInt32 {
        shown.load(fromByteOffset: y * stride + x * 4, as: UInt32.self) | 0xFF00_0000
    }

    /// The first pixel of the window on screen.
    private var shown: UnsafeMutableRawPointer { buffers[front] + window.y * stride + window.x * 4 }
}
