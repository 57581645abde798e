import CarouselCore
import CarouselImaging

/// A buffer the next frame is written into: `extent` pixels of XRGB8888,
/// `stride` bytes per row, of which a `size` (the panel's) window is shown.
/// For DRM it is scanout memory (often write-combined): write it in
/// sequential rows and never read it.
///
/// A buffer keeps what was written into it until the backend reallocates
/// its buffers, which changes `generation`: a renderer may then write only
/// what changed since it last wrote the same buffer (`index`) of the same
/// generation.
public struct ScanoutBuffer: @unchecked Sendable {
    public let pixels: UnsafeMutableRawPointer
    public let stride: Int
    /// The panel's size: the window of the buffer that is shown.
    public let size: PixelSize
    /// The whole buffer: `size`, or longer along one axis when the backend
    /// granted room for a moving window (`reserveWindowRoom`).
    public let extent: PixelSize
    /// Which of the backend's buffers this is.
    public let index: Int
    /// Changes whenever the backend's buffers are made anew (a new mode, new
    /// room): what was written into them before is gone.
    public let generation: Int

    public init(pixels: UnsafeMutableRawPointer, stride: Int, size: PixelSize, extent: PixelSize? = nil, index: Int,
                generation: Int = 0) {
        self.pixels = pixels
        self.stride = stride
        self.size = size
        self.extent = extent ?? size
        self.index = index
        self.generation = generation
    }
}

/// The axis along which a buffer may be longer than the panel, so that
/// moving the scan-out window over it slides the picture without copying.
public enum ScanoutAxis: String, Sendable {
    case horizontal, vertical
}

/// A pixel position: the top-left corner of the window a buffer shows.
public struct PixelPoint: Hashable, Sendable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public init(x: Int, y: Int) {
        self.x = x
        self.y = y
    }
    public static let zero = PixelPoint(x: 0, y: 0)
    public var description: String { "(\(x), \(y))" }
}

/// Where frames go: the kernel's DRM/KMS (a real panel) or memory (tests,
/// previews). The renderer never knows which: it composes straight into the
/// buffer `acquire` hands out, writing only what changed in that buffer.
///
/// Contract: at most one frame is in flight. After `present`, `acquire`
/// returns `nil` until the backend reports the previous frame done (DRM: the
/// page-flip event, read by `dispatch`). A buffer being scanned out is never
/// handed out.
public protocol DisplayBackend: AnyObject {
    /// The panel's size in pixels, in scanout orientation.
    var panelSize: PixelSize { get }
    /// The panel's own orientation (DRM "panel orientation" property), to be
    /// combined with the configured rotation.
    var panelRotation: PanelOrientation { get }
    /// One line for logs and `status`: "drm /dev/dri/card0 Virtual-1 1280x800@60 (atomic)".
    var summary: String { get }
    /// Connector name and mode text for `status` ("Virtual-1", "1280x800@60"); offscreen: "offscreen".
    var connectorName: String { get }
    var modeName: String { get }
    /// The panel's refresh period in microseconds: frames are never drawn
    /// more often than this, also on drivers whose flips complete at once
    /// (no vblank, like QEMU's bochs).
    var framePeriodMicroseconds: Int64 { get }
    /// A descriptor to poll for completion events, or `nil` if the backend has none.
    var fileDescriptor: Int32? { get }
    /// The panel's physical size, where the display reports one (EDID): the
    /// touch slop scales with the panel's density.
    var physicalSize: PhysicalSize? { get }
    /// How the pixels of a `ScanoutBuffer` are laid out. The renderer writes
    /// `.xrgb8888`; the daemon refuses a backend that wants another layout.
    var pixelFormat: PixelFormat { get }
    /// Whether a presented frame reaches the screen later, reported by
    /// `dispatch` (a page flip on vblank), rather than at once. If `true`,
    /// `fileDescriptor` is non-nil and frames are paced by the panel.
    var presentsAsynchronously: Bool { get }

    /// A free buffer for the next frame, or `nil` while a frame is in flight.
    func acquire() -> ScanoutBuffer?
    /// The buffer on screen and the window of it that shows, for a frame
    /// that writes only outside that window and then shows another window
    /// of the same buffer (a slide with nothing drawn over the pictures:
    /// the picture coming in is written beside the one on screen, once,
    /// rather than into both buffers). `nil` while a frame is in flight,
    /// after new buffers before one of them was presented,
    /// or where the display shows no windows (the default). Writing inside
    /// the window on screen tears: the daemon does it once, for its first
    /// frame, over the black a display shows from its modeset.
    func acquireShown() -> (buffer: ScanoutBuffer, window: PixelPoint)?
    /// Shows the panel-sized window of `buffer` (from `acquire`, or `acquireShown`) whose
    /// top-left corner is `window` (inside `buffer.extent`): a page flip on
    /// vblank for DRM. If this throws, the buffer is free again and the
    /// previous frame stays on screen; `.windowRefused` says the display
    /// cannot show that window (the room is withdrawn: present at `.zero`).
    func present(_ buffer: ScanoutBuffer, window: PixelPoint) throws(DisplayError)
    /// Whether the display could scan out a smaller window of a buffer
    /// scaled to the whole panel (a KMS plane whose SRC_W and SRC_H differ
    /// from its CRTC_W and CRTC_H): the seam for drawing Ken Burns's
    /// framings in hardware rather than by a scaled copy. No display says
    /// yes yet (bochs cannot scale, and no driver that can was at hand to
    /// test it), so the frame path scales on the CPU; a backend that can
    /// would answer here and take a scaled window in `present`.
    var scalesWindows: Bool { get }
    /// Asks for buffers `room` pixels longer than the panel along `axis`, so
    /// that `present` can show any panel-sized window of them (zero-copy
    /// slides: the scan-out window moves, the pixels stay). Returns the room
    /// granted: `room`, or 0 when the display cannot move its window or the
    /// memory is not there (buffers stay panel-sized). Takes effect from the
    /// next `acquire` with a new `generation`; 0 goes back to panel-sized
    /// buffers. A backend may keep a buffer that is on screen until it leaves.
    func reserveWindowRoom(_ room: Int, along axis: ScanoutAxis) -> Int
    /// Reads completion events after `fileDescriptor` became readable; returns
    /// `true` when a presented frame reached the screen (a buffer is free).
    func dispatch() throws(DisplayError) -> Bool
    /// Looks at the display again after a hotplug event: `true` when it was
    /// re-modeset (the panel size may have changed; draw a whole new frame).
    func reprobe() throws(DisplayError) -> Bool
    /// Switches to the mode `request` names (`nil`: the preferred one).
    /// Returns `true` when the display was set up anew (draw a whole new
    /// frame; the panel size may have changed), `false` when nothing changed.
    /// Throws, leaving the running mode, when the display has no such mode.
    func changeMode(to request: DisplayModeRequest?) throws(DisplayError) -> Bool

    /// Whether the display is lit (`setPower`); `true` from the start.
    var isPoweredOn: Bool { get }
    /// Switches the display off (DRM: the CRTC inactive, so the panel gets
    /// no signal and goes to standby; the mode is kept) or on again. Off,
    /// `acquire` returns `nil`: nothing is presented until it is on. On
    /// again, the buffers' contents may be lost (the driver may have moved
    /// or cleared them): draw and present a whole new frame. Asking for the
    /// state it is in does nothing. If this throws, the state did not change.
    func setPower(on: Bool) throws(DisplayError)

    /// Puts the display back as it was found (the saved CRTC, so the console
    /// returns), after waiting for a frame in flight. Safe to call twice.
    func restore()

    /// Lets go of a device that went away under the daemon (unplugged, its
    /// driver unbound): no waiting, no restoring, and its descriptors closed
    /// now (the loop forgets them). Default: `restore()`.
    func abandon()
    /// The device number (`st_rdev`) udev's hotplug events name for this
    /// display's device, if it follows them (DRM cards); nil: no hotplug.
    var hotplugDevice: UInt64? { get }
    /// Whether a display is there; false for the stand-in that keeps a
    /// vanished display's place (`AbsentDisplay`).
    var isPresent: Bool { get }
}

extension DisplayBackend {
    public var scalesWindows: Bool { false }
    public func abandon() { restore() }
    public func acquireShown() -> (buffer: ScanoutBuffer, window: PixelPoint)? { nil }
    public var hotplugDevice: UInt64? { nil }
    public var isPresent: Bool { true }

    /// Shows `buffer` from its top-left corner.
    public func present(_ buffer: ScanoutBuffer) throws(DisplayError) { try present(buffer, window: .zero) }
}

/// A panel's physical size as the display reports it (EDID, DRM connector).
public struct PhysicalSize: Equatable, Sendable, CustomStringConvertible {
    public var widthMillimetres: Int
    public var heightMillimetres: Int
    public init(widthMillimetres: Int, heightMillimetres: Int) {
        self.widthMillimetres = widthMillimetres
        self.heightMillimetres = heightMillimetres
    }
    public var description: String { "\(widthMillimetres)x\(heightMillimetres) mm" }
}

/// A display mode asked for: `width`x`height`, at `refresh` Hz if given.
public struct DisplayModeRequest: Equatable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    /// Vertical refresh in Hz, rounded as `modetest` and the kernel print it;
    /// `nil`: any (the preferred mode of that size, else the fastest).
    public var refresh: Int?

    public init(width: Int, height: Int, refresh: Int? = nil) {
        self.width = width
        self.height = height
        self.refresh = refresh
    }

    public var description: String { refresh.map { "\(width)x\(height)@\($0)" } ?? "\(width)x\(height)" }

    /// Reads what `description` writes (`ModeText`, the grammar `[display]
    /// mode` is read with too), for the tools that take a mode on their
    /// command line without a configuration; nil for anything else.
    public init?(_ text: String) {
        guard let mode = ModeText.parse(text) else { return nil }
        self.init(width: mode.width, height: mode.height, refresh: mode.refresh)
    }
}

/// The orientation a panel reports (DRM's "panel orientation" connector property).
public enum PanelOrientation: String, Sendable {
    case normal, upsideDown = "upside_down", leftSideUp = "left_side_up", rightSideUp = "right_side_up"
}

/// Why the display failed: what, on what, and what to do about it.
public struct DisplayError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of failure this is, for code that decides what to do about
    /// it (wait for a display, or exit). The message and hint are for people
    /// and may be reworded at any time; decide on this, never on their text.
    public enum Reason: Equatable, Sendable {
        /// No display device exists yet (the driver loads later at boot).
        case noDevice
        /// A device exists but no display is plugged into it.
        case notConnected
        /// The device cannot be opened or driven for lack of rights (EACCES, EPERM).
        case permission
        /// Another program owns the display (not DRM master, EBUSY).
        case busy
        /// The device went away under an open descriptor (ENODEV: its driver
        /// was unbound or unloaded, a USB display was unplugged). The
        /// descriptor is useless now; a new one must be opened when it returns.
        case gone
        /// The display cannot show the window asked for (its driver refused a
        /// framebuffer at that offset): present whole panel-sized frames.
        case windowRefused
        /// Anything else.
        case other
    }

    public var message: String
    public var hint: String?
    public var reason: Reason
    public init(_ message: String, hint: String? = nil, reason: Reason = .other) {
        self.message = message
        self.hint = hint
        self.reason = reason
    }
    public var description: String { hint.map { "\(message) (\($0))" } ?? message }
}
