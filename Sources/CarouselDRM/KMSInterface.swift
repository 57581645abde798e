import CDRM
import CarouselDisplay
#if canImport(Glibc)
import Glibc
#endif

/// Where frames go: one connector, driven by one CRTC.
struct Pipe {
    var connector: UInt32
    var connectorName: String
    var crtc: UInt32
    /// The CRTC's index in the card's resources: the bit in `possible_crtcs`.
    var crtcIndex: Int
}

/// How a framebuffer reaches the screen: legacy (`drmModeSetCrtc`,
/// `drmModePageFlip`) or atomic commits. An inner detail of the DRM room,
/// as wlroots' `wlr_drm_interface` and kmscube's `init_drm_legacy` /
/// `init_drm_atomic`: the backend decides when, the interface how.
protocol KMSInterface: AnyObject {
    /// `.legacy` or `.atomic`.
    var api: DRMAPI { get }
    /// Lights the pipe up in `mode` showing `framebuffer`; returns once it
    /// is on screen, with no event to read.
    func modeset(_ framebuffer: UInt32, mode: DRMMode) throws(DisplayError)
    /// Queues `framebuffer` for the next vblank. If this returns, exactly one
    /// flip-complete event carrying `userData` follows (read by
    /// `drmHandleEvent`); if it throws, the screen did not change and no
    /// event comes.
    func flip(to framebuffer: UInt32, userData: UnsafeMutableRawPointer?) throws(DisplayError)
    /// Whether `show` works (atomic commits).
    var showsBlocking: Bool { get }
    /// Shows `framebuffer` and returns once it is on screen; no event
    /// follows. For a CRTC without vblank, whose flips complete at once: the
    /// commit does what a flip's event would have woken the caller for.
    /// If it throws, the screen did not change.
    func show(_ framebuffer: UInt32) throws(DisplayError)
    /// Switches the pipe's output off or on again, keeping its mode and
    /// framebuffer; blocks until done. No flip may be in flight. If this
    /// throws, the output is as it was.
    func setActive(_ active: Bool) throws(DisplayError)
}

/// The pre-atomic interface: every driver has it.
final class LegacyInterface: KMSInterface {
    let device: DRMDevice
    let pipe: Pipe
    var api: DRMAPI { .legacy }

    init(device: DRMDevice, pipe: Pipe) {
        self.device = device
        self.pipe = pipe
    }

    /// The corresponding C function is `drmModeSetCrtc`.
    func modeset(_ framebuffer: UInt32, mode: DRMMode) throws(DisplayError) {
        var connector = pipe.connector, info = mode.info
        let fd = device.fd, crtc = pipe.crtc
        try device.call("drmModeSetCrtc", "CRTC \(crtc) to \(pipe.connectorName) in \(mode)") {
            drmModeSetCrtc(fd, crtc, framebuffer, 0, 0, &connector, 1, &info)
        }
    }

    /// The corresponding C function is `drmModePageFlip`.
    func flip(to framebuffer: UInt32, userData: UnsafeMutableRawPointer?) throws(DisplayError) {
        let fd = device.fd, crtc = pipe.crtc
        try device.call("drmModePageFlip", "CRTC \(crtc)") {
            drmModePageFlip(fd, crtc, framebuffer, UInt32(DRM_MODE_PAGE_FLIP_EVENT), userData)
        }
    }

    var showsBlocking: Bool { false }

    /// Never called (`showsBlocking`): a legacy flip completes by its event.
    func show(_ framebuffer: UInt32) throws(DisplayError) {
        throw DisplayError("a blocking flip on \(device.path) through the legacy interface", hint: "a bug: legacy flips complete by their event")
    }

    /// The connector's "DPMS" property: off keeps the CRTC's mode and
    /// framebuffer (on atomic drivers the kernel turns this into ACTIVE).
    /// The corresponding C function is `drmModeConnectorSetProperty`.
    func setActive(_ active: Bool) throws(DisplayError) {
        guard let dpms = device.properties(of: pipe.connector, type: DRM_MODE_OBJECT_CONNECTOR)["DPMS"] else {
            throw DisplayError("connector \(pipe.connectorName) on \(device.path) has no DPMS property",
                               hint: "the driver cannot switch this display off; try [display] api = atomic")
        }
        let fd = device.fd, connector = pipe.connector
        let value = UInt64(active ? DRM_MODE_DPMS_ON : DRM_MODE_DPMS_OFF)
        try device.call("drmModeConnectorSetProperty", "DPMS \(active ? "on" : "off") on \(pipe.connectorName)") {
            drmModeConnectorSetProperty(fd, connector, dpms.id, value)
        }
    }
}

/// A property blob (the mode of an atomic modeset): destroyed exactly once.
/// The CRTC state keeps its own reference, so destroying a blob in use is safe.
final class PropertyBlob {
    let device: DRMDevice
    private(set) var id: UInt32 = 0

    /// The corresponding C function is `drmModeCreatePropertyBlob`.
    init<T: BitwiseCopyable>(device: DRMDevice, value: T, what: String) throws(DisplayError) {
        self.device = device
        var blob: UInt32 = 0
        let fd = device.fd
        try device.call("drmModeCreatePropertyBlob", what) {
            withUnsafeBytes(of: value) { drmModeCreatePropertyBlob(fd, $0.baseAddress, $0.count, &blob) }
        }
        id = blob
    }

    /// The corresponding C function is `drmModeDestroyPropertyBlob`.
    deinit {
        if id != 0 { _ = try? device.call("drmModeDestroyPropertyBlob") { drmModeDestroyPropertyBlob(device.fd, id) } }
    }
}

/// Atomic commits: the whole state of connector, CRTC and primary plane in
/// one request, checked by the kernel as a whole.
final class AtomicInterface: KMSInterface {
    let device: DRMDevice
    let pipe: Pipe
    let plane: UInt32
    var api: DRMAPI { .atomic }
    /// The mode blob of the last successful modeset.
    private var modeBlob: PropertyBlob?

    /// Property ids by name, per object: they differ between drivers.
    private let connectorProps: [String: UInt32]
    private let crtcProps: [String: UInt32]
    private let planeProps: [String: UInt32]

    /// Finds the CRTC's primary plane and the property ids a commit needs.
    /// Needs DRM_CLIENT_CAP_UNIVERSAL_PLANES and DRM_CLIENT_CAP_ATOMIC set.
    init(device: DRMDevice, pipe: Pipe) throws(DisplayError) {
        self.device = device
        self.pipe = pipe
        var primary: UInt32?
        for id in try device.planes() {
            guard let p = device.plane(id), p.possibleCRTCs & (1 << UInt32(pipe.crtcIndex)) != 0 else { continue }
            let props = device.properties(of: id, type: DRM_MODE_OBJECT_PLANE)
            guard props["type"]?.value == UInt64(DRM_PLANE_TYPE_PRIMARY) else { continue }
            // A primary plane already on this CRTC is the one to keep using.
            if primary == nil || p.crtc == pipe.crtc { primary = id }
        }
        guard let primary else {
            throw DisplayError("no primary plane for CRTC \(pipe.crtc) on \(device.path)",
                               hint: "the driver's atomic support is incomplete: use [display] api = legacy")
        }
        plane = primary
        func ids(_ object: UInt32, _ type: some BinaryInteger, _ names: [String], _ what: String) throws(DisplayError) -> [String: UInt32] {
            let table = device.properties(of: object, type: type)
            var found: [String: UInt32] = [:]
            for name in names {
                guard let p = table[name] else {
                    throw DisplayError("\(what) has no \(name) property on \(device.path)",
                                       hint: "the driver's atomic support is incomplete: use [display] api = legacy")
                }
                found[name] = p.id
            }
            return found
        }
        connectorProps = try ids(pipe.connector, DRM_MODE_OBJECT_CONNECTOR, ["CRTC_ID"], "connector \(pipe.connectorName)")
        crtcProps = try ids(pipe.crtc, DRM_MODE_OBJECT_CRTC, ["MODE_ID", "ACTIVE"], "CRTC \(pipe.crtc)")
        planeProps = try ids(plane, DRM_MODE_OBJECT_PLANE,
                             ["FB_ID", "CRTC_ID", "SRC_X", "SRC_Y", "SRC_W", "SRC_H", "CRTC_X", "CRTC_Y", "CRTC_W", "CRTC_H"],
                             "plane \(plane)")
    }

    /// One atomic request: the properties `build` adds, committed with `flags`.
    /// The corresponding C functions are `drmModeAtomicAlloc`,
    /// `drmModeAtomicAddProperty`, `drmModeAtomicCommit` and `drmModeAtomicFree`.
    private func commit(flags: Int32, userData: UnsafeMutableRawPointer?, what: @autoclosure () -> String,
                        _ build: (_ add: (UInt32, UInt32?, UInt64) -> Void) -> Void) throws(DisplayError) {
        let request = try device.fetch("drmModeAtomicAlloc") { drmModeAtomicAlloc() }
        defer { drmModeAtomicFree(request) }
        var addFailed: Int32 = 0
        build { object, property, value in
            // Ids were all found at init; a nil here would be a bug caught there.
            guard let property else { addFailed = -EINVAL; return }
            let r = drmModeAtomicAddProperty(request, object, property, value)
            if r < 0 && addFailed == 0 { addFailed = r }
        }
        if addFailed < 0 {
            try device.call("drmModeAtomicAddProperty", what()) { addFailed }
        }
        let fd = device.fd
        try device.call("drmModeAtomicCommit", what()) {
            drmModeAtomicCommit(fd, request, UInt32(flags), userData)
        }
    }

    /// A blocking commit with DRM_MODE_ATOMIC_ALLOW_MODESET: connector to
    /// CRTC, CRTC active in `mode`, the primary plane full-screen.
    func modeset(_ framebuffer: UInt32, mode: DRMMode) throws(DisplayError) {
        let blob = try PropertyBlob(device: device, value: mode.info, what: "mode \(mode)")
        let w = UInt64(mode.width), h = UInt64(mode.height)
        try commit(flags: DRM_MODE_ATOMIC_ALLOW_MODESET, userData: nil,
                   what: "modeset of CRTC \(pipe.crtc) to \(pipe.connectorName) in \(mode)") { add in
            add(pipe.connector, connectorProps["CRTC_ID"], UInt64(pipe.crtc))
            add(pipe.crtc, crtcProps["MODE_ID"], UInt64(blob.id))
            add(pipe.crtc, crtcProps["ACTIVE"], 1)
            add(plane, planeProps["FB_ID"], UInt64(framebuffer))
            add(plane, planeProps["CRTC_ID"], UInt64(pipe.crtc))
            // Source rectangle in 16.16 fixed point, destination in pixels.
            add(plane, planeProps["SRC_X"], 0)
            add(plane, planeProps["SRC_Y"], 0)
            add(plane, planeProps["SRC_W"], w << 16)
            add(plane, planeProps["SRC_H"], h << 16)
            add(plane, planeProps["CRTC_X"], 0)
            add(plane, planeProps["CRTC_Y"], 0)
            add(plane, planeProps["CRTC_W"], w)
            add(plane, planeProps["CRTC_H"], h)
        }
        modeBlob = blob  // the previous blob, if any, is destroyed now that it is no longer shown
    }

    /// A non-blocking commit of the plane's FB_ID with a page-flip event.
    func flip(to framebuffer: UInt32, userData: UnsafeMutableRawPointer?) throws(DisplayError) {
        try commit(flags: DRM_MODE_ATOMIC_NONBLOCK | DRM_MODE_PAGE_FLIP_EVENT, userData: userData,
                   what: "page flip on CRTC \(pipe.crtc)") { add in
            add(plane, planeProps["FB_ID"], UInt64(framebuffer))
        }
    }

    var showsBlocking: Bool { true }

    /// A blocking commit of the plane's FB_ID, without an event.
    func show(_ framebuffer: UInt32) throws(DisplayError) {
        try commit(flags: 0, userData: nil, what: "flip on CRTC \(pipe.crtc)") { add in
            add(plane, planeProps["FB_ID"], UInt64(framebuffer))
        }
    }

    /// A blocking commit with DRM_MODE_ATOMIC_ALLOW_MODESET of the CRTC's
    /// ACTIVE alone: MODE_ID stays (the CRTC stays enabled, only dark), and
    /// so do the connector's routing and the plane's framebuffer, which is
    /// what lights it up again.
    func setActive(_ active: Bool) throws(DisplayError) {
        try commit(flags: DRM_MODE_ATOMIC_ALLOW_MODESET, userData: nil,
                   what: "ACTIVE = \(active ? 1 : 0) on CRTC \(pipe.crtc) (\(pipe.connectorName))") { add in
            add(pipe.crtc, crtcProps["ACTIVE"], active ? 1 : 0)
        }
    }
}
