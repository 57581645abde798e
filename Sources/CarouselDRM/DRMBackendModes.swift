import CDRM
import CarouselDisplay
import CarouselImaging
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

// DRMBackend's hotplug and mode changes: the connector looked at again, a new mode set.
extension DRMBackend {
    // MARK: hotplug

    /// Looks at the connector again after a hotplug event (udev "drm"
    /// change). Re-modesets when the display came back after being
    /// unplugged, when the mode to use changed (another monitor, another
    /// preferred mode) or when the link went bad; buffers are reallocated
    /// at the new size.
    ///
    /// Returns `true` if it re-modeset: `panelSize` may have changed, a frame
    /// in flight was completed or dropped, the screen is black (new size) or
    /// shows the last frame, and a new frame should be drawn in full.
    /// Returns `false` when nothing needs doing, including while the display
    /// is unplugged (`isConnected` is then `false`).
    public func reprobe() throws(DisplayError) -> Bool {
        // Off, a re-modeset would light the display up: the mode is kept,
        // and the caller looks again once it is on.
        guard !restored, isPoweredOn else { return false }
        let c = try device.connector(pipe.connector, probe: true)
        guard c.status != .disconnected else {
            isConnected = false
            return false
        }
        let cameBack = !isConnected
        isConnected = true
        panelRotation = c.properties.panelOrientation ?? .normal
        physicalSize = Self.physicalSize(c)
        guard !c.modes.isEmpty else { return false }  // no EDID yet: keep what we have
        var wanted = DRMMode.choose(modeRequest, from: c.modes)
        if wanted == nil, let modeRequest {
            wanted = DRMMode.choose(nil, from: c.modes)
            warn("connector \(connectorName) has no mode \(modeRequest) any more; using \(wanted!.name)")
        }
        guard let wanted else { return false }
        // DRM_MODE_LINK_STATUS_BAD: the kernel asks for a modeset to retrain the link.
        let linkBad = c.properties["link-status"]?.value == 1
        guard cameBack || wanted != mode || linkBad else { return false }
        try remodeset(wanted)
        return true
    }

    static func physicalSize(_ c: DRMDevice.Connector) -> PhysicalSize? {
        c.widthMM > 0 && c.heightMM > 0 ? PhysicalSize(widthMillimetres: c.widthMM, heightMillimetres: c.heightMM) : nil
    }

    /// Switches to the mode `request` names (`nil`: the preferred one), as a
    /// configuration reload asks; it also becomes the mode `reprobe` keeps.
    /// Returns `true` if it re-modeset (see `reprobe`), `false` if the mode
    /// is already on screen. Throws, changing nothing, if the connector has
    /// no such mode.
    public func changeMode(to request: DRMModeRequest?) throws(DisplayError) -> Bool {
        guard !restored else { return false }
        let c = try device.connector(pipe.connector, probe: false)
        guard let wanted = DRMMode.choose(request, from: c.modes) else {
            throw DisplayError("connector \(connectorName) on \(devicePath) has no mode \(request.map { "\($0)" } ?? "at all")",
                               hint: "modes: \(DRMMode.listing(c.modes).joined(separator: " "))")
        }
        modeRequest = request
        // Off, it becomes the mode `reprobe` sets once the display is on again.
        guard wanted != mode, isPoweredOn else { return false }
        try remodeset(wanted)
        return true
    }

    /// A mode of the same size keeps the buffers, their window room and
    /// their generation (a refresh rate or a retrained link changes no
    /// pixel); another size makes panel-sized buffers, a new generation with
    /// no room (the renderer asks again for the new size).
    func remodeset(_ newMode: DRMMode) throws(DisplayError) {
        _ = waitForPendingFlip()
        let size = PixelSize(width: newMode.width, height: newMode.height)
        if buffers.count == 2, size == buffers[0].size {
            // What is on screen stays there: its window, or, when the buffers
            // were just made anew (room for slides) and no frame went to
            // them yet, the earlier buffer still showing. New buffers are not
            // cleared: one nothing was written into must not be shown.
            try interface.modeset(shownFramebuffer, mode: newMode)
            // The modeset took every other framebuffer off the screen.
            retired.removeAll { r in
                if r.owns(shownFramebuffer) { return false }
                r.release()
                return true
            }
        } else {
            var fresh: [DumbBuffer] = []
            do {
                for i in 0..<2 { fresh.append(try DumbBuffer(device: device, size: size, cleared: i == 0)) }
            } catch {
                // Video memory may not hold both sizes: give the old buffers
                // up first (the screen goes dark until the modeset).
                fresh = []
                for b in buffers { b.release() }
                buffers = []
                for r in retired { r.release() }
                retired = []
                generation += 1
                for i in 0..<2 { fresh.append(try DumbBuffer(device: device, size: size, cleared: i == 0)) }
            }
            try interface.modeset(fresh[0].framebuffer, mode: newMode)
            let old = buffers + retired
            buffers = fresh
            front = 0
            retired = []
            shownFramebuffer = fresh[0].framebuffer
            generation += 1
            for b in old { b.release() }  // no longer shown
        }
        mode = newMode
    }
}
