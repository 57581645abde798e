import CDRM
import CarouselDisplay
import CarouselImaging
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// The kernel's DRM/KMS display: one connector in one mode, two dumb
/// buffers flipped on vblank.
///
/// Page-flip discipline (dvdhrm's drm-howto): one flip in flight at most
/// (`acquire` returns `nil` meanwhile); the buffer being scanned out is never
/// handed out; `restore` waits for the flip in flight, puts the saved CRTC
/// back (the console returns), and only then frees the buffers.
///
/// Zero-copy slides: `reserveWindowRoom` makes both buffers longer than the
/// mode, and `present(_:window:)` shows a mode-sized window of one through a
/// framebuffer of its own whose `offsets[0]` points at the window's first
/// pixel, with the buffer's pitch (a few such framebuffers are kept per
/// buffer). That is the portable way: every driver scans a framebuffer out
/// from its offset (QEMU's bochs takes only that: its plane update reads the
/// framebuffer's pitch and offset and ignores the plane's SRC_X/SRC_Y), while
/// SRC_X/SRC_Y exist only on atomic drivers and not all of them honour them.
/// A driver that refuses a window (AddFB2 or the flip fails) loses the room
/// for good: `.windowRefused`, panel-sized buffers from then on; where the
/// buffers had more than one screen of room, only the room beyond one screen
/// is lost (video memory that held the longer pair only until their flip).
///
/// Not thread-safe: use it from the event loop's thread.
public final class DRMBackend: DisplayBackend {
    /// The card, such as "/dev/dri/card0", and its driver, such as "bochs-drm".
    public let devicePath: String
    public let driverName: String
    public let connectorName: String
    /// The mode on screen (it changes when `reprobe` re-modesets).
    public internal(set) var mode: DRMMode
    public internal(set) var panelRotation: PanelOrientation
    /// The panel's size in millimetres as the connector reports it (EDID);
    /// nil when it gives none.
    public internal(set) var physicalSize: PhysicalSize?
    /// Whether the connector had a display at the last look (`reprobe`).
    public internal(set) var isConnected = true
    /// Whether the CRTC is lit (`setPower`).
    public internal(set) var isPoweredOn = true
    /// The card's device number (`st_rdev`), which udev's events name
    /// (`udev_device_get_devnum`): whether a removed card is this one.
    public var deviceNumber: UInt64 {
        var status = stat()
        return fstat(device.fd, &status) == 0 ? UInt64(status.st_rdev) : 0
    }
    public var hotplugDevice: UInt64? { deviceNumber }

    public var panelSize: PixelSize { PixelSize(width: mode.width, height: mode.height) }
    public var modeName: String { mode.name }
    /// One refresh of the current mode (60 Hz if the mode gives no rate).
    public var framePeriodMicroseconds: Int64 {
        mode.refreshMillihertz > 0 ? Int64(1_000_000_000 / mode.refreshMillihertz) : 16_667
    }
    /// `.atomic` or `.legacy`: what `api: .auto` chose.
    public var api: DRMAPI { interface.api }
    public var summary: String {
        "drm \(devicePath) \(connectorName) \(mode.name) (\(api.rawValue))\(hasVblank ? "" : ", no vblank")"
    }
    public var fileDescriptor: Int32? { restored ? nil : device.fd }
    /// Dumb buffers with XRGB8888 framebuffers (`DumbBuffer`).
    public let pixelFormat = PixelFormat.xrgb8888
    /// Frames reach the screen on the page-flip event (`dispatch`), except
    /// where `flipsInCommit`: then they are on screen when `present` returns.
    public var presentsAsynchronously: Bool { fileDescriptor != nil && !flipsInCommit }

    /// Whether the CRTC has a vblank counter (`DRMDevice.hasVblank`). Without
    /// one (QEMU's bochs, SPI panels) a flip completes when its commit is done.
    public let hasVblank: Bool
    /// Whether `present` may flip with a blocking commit where the CRTC has
    /// no vblank (the default). Such a flip's event would come at once
    /// anyway; waiting for it costs a second wake-up of the loop, a kernel
    /// worker and an event read per frame. `drm-test` turns it off to
    /// exercise the events on any driver.
    public var flipsInCommitWithoutVblank = true
    /// Whether `present` flips with a blocking commit: atomic, no vblank, allowed.
    public var flipsInCommit: Bool { flipsInCommitWithoutVblank && !hasVblank && interface.showsBlocking }

    /// Frames that reached the screen, and when the last one did (the
    /// kernel's CLOCK_MONOTONIC timestamp of its vblank, microseconds).
    public var flipsCompleted: Int { flips.completed }
    public var lastFlipMicroseconds: Int64? { flips.lastMicroseconds }

    /// Where warnings go (a restore that failed, a mode that went away); the
    /// line has no priority prefix. Default: standard error with `<4>`.
    public var warn: (String) -> Void = { writeStandardError("<4>carouseld: \($0)") }

    let device: DRMDevice
    let pipe: Pipe
    var interface: KMSInterface
    var modeRequest: DRMModeRequest?
    /// The CRTC as we found it, put back by `restore`.
    let saved: DRMDevice.CRTCState
    /// The two buffers of this generation.
    var buffers: [DumbBuffer]
    /// The buffer on screen (`nil` while the screen still shows `retired`),
    /// and the one presented whose flip has not completed.
    var front: Int? = 0
    var pending: Int?
    /// The framebuffer on screen (a buffer's own or one of its windows), and
    /// the one the flip in flight shows: neither may be removed.
    var shownFramebuffer: UInt32
    var pendingFramebuffer: UInt32 = 0
    /// Buffers of an earlier generation that may still be on screen: freed
    /// by the first flip that takes them off (removing a framebuffer being
    /// scanned out turns the CRTC off). One, or two after a flip that did
    /// not complete in time (either may be on screen).
    var retired: [DumbBuffer] = []
    /// Changes whenever the buffers are made anew (`ScanoutBuffer.generation`).
    public internal(set) var generation = 0
    /// Set once the driver refused a window of buffers with one screen of
    /// room or less: no room is granted any more.
    public internal(set) var windowsRefused = false
    /// Set once the driver refused a window of buffers with more room than
    /// one screen (video memory that holds the longer pair only until their
    /// first flip): one screen of room at most from then on.
    public internal(set) var roomLimitedToOneScreen = false
    /// Whether `present` refuses windows outside the buffer itself (a bug in
    /// the caller) before the kernel sees them. `drm-test` turns it off to
    /// let the kernel's own check refuse one, as an unknown driver's would.
    public var checksWindowBounds = true
    var presented = 0
    let flips = FlipLog()
    var restored = false

    /// How long `restore` and a re-modeset wait for a flip in flight: a flip
    /// cannot be cancelled, and its buffer must not be freed before it is
    /// done (a vblank is 16 ms; a second means the driver is stuck).
    static let flipTimeoutMilliseconds = 1000
    /// Window framebuffers kept per buffer besides the one on screen: a
    /// slide makes one per frame and rarely shows the same window twice, so
    /// a few are enough for the windows a carousel comes back to (rest).
    static let windowFramebufferLimit = 4

    /// Opens the display and lights it up (black) in the chosen mode.
    ///
    /// - Parameters:
    ///   - device: a card such as "/dev/dri/card0"; `nil`: the first card
    ///     with a connected display (and `connector`, if named).
    ///   - connector: a connector name as the kernel gives it ("HDMI-A-1",
    ///     "DSI-1", "Virtual-1"); `nil`: the first connected.
    ///   - mode: `WxH[@Hz]`; `nil`: the connector's preferred mode.
    ///   - api: `.auto` takes atomic commits where the driver offers them.
    ///
    /// Errors say what failed, on what, and what to do. `isWorthWaiting`
    /// tells those that waiting cures (no driver yet, no display yet).
    public init(device path: String? = nil, connector name: String? = nil, mode request: DRMModeRequest? = nil,
                api requested: DRMAPI = .auto) throws(DisplayError) {
        let (device, connector) = try Self.openCard(path, connector: name)
        let driver = device.driver.name

        guard device.capability(DRM_CAP_DUMB_BUFFER) ?? 0 != 0 else {
            throw DisplayError("\(device.path) (\(driver)) has no dumb buffers",
                               hint: "carouseld draws with the CPU into dumb buffers; choose another card with [display] device")
        }
        guard device.becomeMaster() else { throw DRMErrors.notMaster(device.path) }

        guard let mode = DRMMode.choose(request, from: connector.modes) else {
            if let request {
                throw DisplayError("connector \(connector.name) on \(device.path) has no mode \(request)",
                                   hint: "modes: \(DRMMode.listing(connector.modes).joined(separator: " "))")
            }
            throw DisplayError("connector \(connector.name) on \(device.path) reports no modes",
                               hint: "check the cable; a display whose EDID cannot be read offers no modes")
        }
        let resources = try device.resources()
        guard let (crtc, crtcIndex) = Self.findCRTC(device, resources, connector) else {
            throw DisplayError("no CRTC can drive connector \(connector.name) on \(device.path)",
                               hint: "every display controller is busy: disconnect another display")
        }
        let pipe = Pipe(connector: connector.id, connectorName: connector.name, crtc: crtc, crtcIndex: crtcIndex)
        let saved = try device.crtc(crtc)

        var buffers: [DumbBuffer] = []
        // The first is shown by the modeset, before a frame is drawn: black.
        for i in 0..<2 {
            buffers.append(try DumbBuffer(device: device, size: PixelSize(width: mode.width, height: mode.height), cleared: i == 0))
        }

        var warnings: [String] = []
        var interface = try Self.makeInterface(requested, device: device, pipe: pipe, warnings: &warnings)
        do {
            try interface.modeset(buffers[0].framebuffer, mode: mode)
        } catch {
            // Some drivers' atomic support is younger than their legacy one.
            guard requested == .auto, interface.api == .atomic else { throw error }
            warnings.append("atomic modeset failed (\(error)); using the legacy interface")
            interface = LegacyInterface(device: device, pipe: pipe)
            try interface.modeset(buffers[0].framebuffer, mode: mode)
        }

        self.device = device
        self.devicePath = device.path
        self.driverName = driver
        self.connectorName = connector.name
        self.pipe = pipe
        self.mode = mode
        self.modeRequest = request
        self.panelRotation = connector.properties.panelOrientation ?? .normal
        self.physicalSize = Self.physicalSize(connector)
        self.saved = saved
        self.buffers = buffers
        self.shownFramebuffer = buffers[0].framebuffer
        self.interface = interface
        self.hasVblank = device.hasVblank(crtc: crtc)
        for w in warnings { warn(w) }
    }

    deinit { restore() }

    // MARK: DisplayBackend

    /// The buffer `acquire` hands out: the one not on screen.
    var freeIndex: Int { front.map { 1 - $0 } ?? 0 }

    public func acquire() -> ScanoutBuffer? {
        guard !restored, isPoweredOn, pending == nil, buffers.count == 2, let pixels = buffers[freeIndex].pixels else { return nil }
        let b = buffers[freeIndex]
        return ScanoutBuffer(pixels: pixels, stride: b.stride, size: b.size, extent: b.extent, index: freeIndex,
                             generation: generation)
    }

    /// The buffer on screen and its window, for writes beside the window
    /// (see `DisplayBackend.acquireShown`): none while a flip is in flight,
    /// nor before a frame of these buffers reached the screen.
    public func acquireShown() -> (buffer: ScanoutBuffer, window: PixelPoint)? {
        guard !restored, isPoweredOn, pending == nil, buffers.count == 2, let front,
              let pixels = buffers[front].pixels, let window = buffers[front].window(of: shownFramebuffer) else { return nil }
        let b = buffers[front]
        return (ScanoutBuffer(pixels: pixels, stride: b.stride, size: b.size, extent: b.extent, index: front,
                              generation: generation), window)
    }

    /// Makes both buffers `room` pixels longer than the mode along `axis`
    /// (a new generation). A flip in flight is waited for first (one
    /// vblank, on a working driver: its buffer is about to be freed), so the
    /// event loop should ask when `acquire` would hand out a buffer, and then
    /// this never blocks; the buffer on screen is kept until the first flip
    /// of the new ones takes it off.
    /// Returns 0, with panel-sized buffers, when the driver refused a window
    /// before (`windowsRefused`) or video memory does not hold the longer
    /// buffers; one screen's length (buffers of that room) when more was
    /// asked for and memory holds only that, or a window of longer ones was
    /// refused before (`roomLimitedToOneScreen`). A buffer longer than the
    /// mode may still fail at its first flip where the driver moves it into
    /// video memory only then (bochs' VRAM helper): `present` then throws
    /// `.windowRefused` and goes back to panel-sized buffers itself (ask
    /// again for one screen's room, where more was refused).
    public func reserveWindowRoom(_ room: Int, along axis: ScanoutAxis) -> Int {
        guard !restored else { return 0 }
        let panel = panelSize
        let screen = axis == .horizontal ? panel.width : panel.height
        var granted = windowsRefused ? 0 : min(max(0, room), roomLimitedToOneScreen ? screen : Int.max)
        // DRM sizes are 32-bit and no scanout engine reads a 64k-pixel line.
        if granted > 65_535 - max(panel.width, panel.height) {
            warn("no room of \(granted) pixels for a \(panel) panel on \(devicePath): too long a buffer; slides copy whole frames")
            granted = 0
        }
        let wanted = granted == 0 ? panel
            : axis == .horizontal ? PixelSize(width: panel.width + granted, height: panel.height)
            : PixelSize(width: panel.width, height: panel.height + granted)
        if buffers.count == 2, buffers[0].extent == wanted { return granted }
        if granted > screen {
            // More than one screen where memory may hold only one.
            let one = axis == .horizontal ? PixelSize(width: panel.width + screen, height: panel.height)
                : PixelSize(width: panel.width, height: panel.height + screen)
            if remake(extent: wanted, fallback: one) { return granted }
            return buffers.count == 2 && buffers[0].extent == one ? screen : 0
        }
        return remake(extent: wanted) ? granted : 0
    }

    /// Makes the two buffers anew at `extent`, a new generation; `false` when
    /// memory refused them and panel-sized ones (or, failing that, the old
    /// ones again) were made instead. Everything not on screen is freed
    /// first so that the new buffers fit where the old ones were.
    func remake(extent: PixelSize, fallback: PixelSize? = nil) -> Bool {
        let settled = waitForPendingFlip()
        var onScreen: DumbBuffer?
        retired = (buffers + retired).filter { b in
            if b.owns(shownFramebuffer) {
                onScreen = b
                return true
            }
            if !settled, b.owns(pendingFramebuffer) { return true }
            b.release()
            return false
        }
        buffers = []
        front = nil
        generation += 1
        let size = panelSize
        func pair(_ extent: PixelSize) throws(DisplayError) -> [DumbBuffer] {
            // All or nothing: a first buffer made is released with the array.
            [try DumbBuffer(device: device, size: size, extent: extent), try DumbBuffer(device: device, size: size, extent: extent)]
        }
        do {
            buffers = try pair(extent)
            return true
        } catch {
            if let fallback, let shorter = try? pair(fallback) {
                warn("no room for two \(extent) buffers on \(devicePath): \(error); \(fallback) ones instead")
                buffers = shorter
                return false
            }
            if extent != size { warn("no room for two \(extent) buffers on \(devicePath): \(error); slides copy whole frames") }
        }
        if extent != size, let panelSized = try? pair(size) {
            buffers = panelSized
            return false
        }
        // The buffer on screen again, with a partner in the memory just freed.
        if let onScreen, let partner = try? DumbBuffer(device: device, size: size, extent: onScreen.extent) {
            buffers = [onScreen, partner]
            front = 0
            retired.removeAll { $0 === onScreen }
            return false
        }
        warn("no video memory for two \(size) buffers on \(devicePath); nothing more is drawn until the mode changes")
        return false
    }

    /// Withdraws the room after the driver refused `window` (`error`): no
    /// room is granted any more, the buffers go back to the panel's size (a
    /// new generation), and the screen keeps the last frame.
    func refuseWindow(_ window: PixelPoint, _ error: DisplayError) -> DisplayError {
        let panel = panelSize
        let extent = buffers.first?.extent ?? panel
        let room = max(extent.width - panel.width, extent.height - panel.height)
        let screen = extent.width > panel.width ? panel.width : panel.height
        // Buffers longer than one screen of room may be what the driver
        // could not hold: one screen of room may still be asked for.
        let retry = room > screen
        if retry { roomLimitedToOneScreen = true } else { windowsRefused = true }
        if buffers.count != 2 || buffers[0].extent != panel { _ = remake(extent: panel) }
        return DisplayError("\(devicePath) (\(driverName)) cannot show a window at \(window) of a \(extent) buffer: \(error.message)",
                            hint: retry ? "one screen of room at most from now on"
                                : "slides copy whole frames from now on; [display] zero_copy = false stops asking",
                            reason: .windowRefused)
    }

    public func present(_ buffer: ScanoutBuffer, window: PixelPoint) throws(DisplayError) {
        guard !restored else {
            throw DisplayError("present on \(devicePath) after restore", hint: "a bug: the display was already given back")
        }
        guard isPoweredOn else {
            throw DisplayError("present on \(devicePath) while the display is off", hint: "a bug: switch it on first")
        }
        guard pending == nil else {
            throw DisplayError("present on \(devicePath) while a frame is in flight",
                               hint: "a bug: wait until dispatch() reports the previous frame done")
        }
        guard buffers.count == 2, buffer.generation == generation, buffer.index == freeIndex || buffer.index == front,
              buffers[buffer.index].pixels == buffer.pixels else {
            throw DisplayError("present on \(devicePath) of a buffer that is not the free one",
                               hint: "a bug, or a buffer from before a re-modeset or new room: acquire() a new one")
        }
        let b = buffers[buffer.index]
        if checksWindowBounds {
            guard window.x >= 0, window.y >= 0, window.x + b.size.width <= b.extent.width,
                  window.y + b.size.height <= b.extent.height else {
                throw DisplayError("present on \(devicePath): a window at \(window) of a \(b.size) panel does not lie in the \(b.extent) buffer",
                                   hint: "a bug in the renderer: windows lie within ScanoutBuffer.extent")
            }
        }
        let framebuffer: UInt32
        do {
            framebuffer = try b.framebuffer(at: window)
        } catch {
            guard error.reason == .other else { throw error }
            throw refuseWindow(window, error)
        }
        let inCommit = flipsInCommit
        do {
            if inCommit {
                try interface.show(framebuffer)
            } else {
                try interface.flip(to: framebuffer, userData: flips.userData)
            }
        } catch {
            // A driver that takes the framebuffer but not the flip (an offset
            // it cannot scan out from, a longer buffer its video memory does
            // not hold: EINVAL, ENOMEM, ENOSPC) refuses the room, not the
            // frame. Busy, gone and permission keep their meaning.
            guard error.reason == .other, window != .zero || b.extent != b.size else { throw error }
            throw refuseWindow(window, error)
        }
        pending = buffer.index
        pendingFramebuffer = framebuffer
        presented += 1
        if inCommit {
            // On screen already: what the event would have said, now.
            flips.recordShown(atMicroseconds: MonotonicClock.now())
            _ = completeFlip()
        }
    }

    /// Off: the atomic CRTC's ACTIVE = 0, or the connector's DPMS property
    /// off with the legacy interface; the mode, the buffers and the
    /// framebuffer on screen are kept, so on is the reverse. A flip in
    /// flight is waited for first (its event is read here: the caller's
    /// pacing starts anew when the display is on again).
    public func setPower(on: Bool) throws(DisplayError) {
        guard !restored else {
            throw DisplayError("display power on \(devicePath) after restore", hint: "a bug: the display was already given back")
        }
        guard on != isPoweredOn else { return }
        if !on { _ = waitForPendingFlip() }
        try interface.setActive(on)
        isPoweredOn = on
    }

    public func dispatch() throws(DisplayError) -> Bool {
        guard !restored else { return false }
        _ = try flips.read(from: device)
        return completeFlip()
    }

    /// Promotes the pending buffer to the screen once its event came.
    func completeFlip() -> Bool {
        guard let p = pending, flips.completed >= presented else { return false }
        front = p
        pending = nil
        shownFramebuffer = pendingFramebuffer
        // What left the screen may go now.
        retired = retired.filter { r in
            if r.owns(shownFramebuffer) { return true }
            r.release()
            return false
        }
        for b in buffers { b.evictWindows(keeping: [shownFramebuffer], limit: Self.windowFramebufferLimit) }
        return true
    }

    /// Waits (polling the descriptor) for the frame in flight, if any;
    /// `false` if it did not complete in time.
    func waitForPendingFlip() -> Bool {
        let deadline = MonotonicClock.now() + Int64(Self.flipTimeoutMilliseconds) * 1000
        while pending != nil {
            let left = Int((deadline - MonotonicClock.now()) / 1000)
            guard left > 0, waitReadable(device.fd, milliseconds: left) else { break }
            _ = try? flips.read(from: device)
            _ = completeFlip()
        }
        guard pending == nil else {
            warn("a page flip on \(devicePath) did not complete within \(Self.flipTimeoutMilliseconds) ms; going on")
            // Resynchronise: a late event must not count for the next flip.
            pending = nil
            presented = flips.completed
            return false
        }
        return true
    }

    public func restore() {
        guard !restored else { return }
        _ = waitForPendingFlip()
        restored = true
        // Lit first: a legacy modeset need not undo a DPMS off, and the
        // console must come back.
        if !isPoweredOn {
            do {
                try interface.setActive(true)
                isPoweredOn = true
            } catch {
                warn("cannot switch the display on again: \(error)")
            }
        }
        // The saved CRTC goes back with a legacy modeset whichever interface
        // drew: every driver takes it, and it is what fbcon had.
        var connector = pipe.connector
        let fd = device.fd
        do {
            if var mode = saved.mode, saved.framebuffer != 0 {
                try device.call("drmModeSetCrtc", "restoring CRTC \(saved.id)") {
                    drmModeSetCrtc(fd, saved.id, saved.framebuffer, saved.x, saved.y, &connector, 1, &mode)
                }
            } else {
                // The CRTC was off when we came (no console on it): off again.
                try device.call("drmModeSetCrtc", "turning CRTC \(saved.id) off") {
                    drmModeSetCrtc(fd, saved.id, 0, 0, 0, nil, 0, nil)
                }
            }
        } catch {
            warn("cannot restore the display as it was: \(error); the console comes back when carouseld exits")
        }
        // Only now that no CRTC shows them.
        for b in buffers { b.release() }
        buffers = []
        for r in retired { r.release() }
        retired = []
    }

    /// Gives up a card that went away (its driver unbound or unloaded):
    /// frees the buffers without waiting for a flip or putting the CRTC
    /// back, neither of which an unplugged device can do (every ioctl fails
    /// with ENODEV, and a pending flip's event may never come), and closes
    /// the card's descriptor now, whoever still holds the backend: the
    /// kernel frees an unplugged device only once its last descriptor is
    /// closed. Later calls behave as after `restore`; what still refers to
    /// the device (a mode blob) fails harmlessly on descriptor -1.
    public func abandon() {
        guard !restored else { return }
        restored = true
        pending = nil
        for b in buffers { b.release() }
        buffers = []
        for r in retired { r.release() }
        retired = []
        device.descriptor.close()
    }
}
