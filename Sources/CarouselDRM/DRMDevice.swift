import CDRM
import CarouselDisplay
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// An open DRM card (`/dev/dri/cardN`): the one owner of its descriptor,
/// which closes when the last thing made on it (buffers, blobs, the
/// backend) is gone. Queries return Swift copies; libdrm's structures are
/// freed before they return.
final class DRMDevice {
    let path: String
    let descriptor: FileDescriptor
    var fd: Int32 { descriptor.raw }

    /// Opens `path` read-write, close-on-exec and non-blocking (page-flip
    /// events are read by the event loop; `drmHandleEvent` must never block).
    /// The corresponding C function is `open`.
    init(path: String) throws(DisplayError) {
        self.path = path
        do throws(SystemCallError) {
            descriptor = FileDescriptor(try systemCall("open") { open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK) })
        } catch {
            if error.errno == ENOENT {
                let cards = DRMDevice.cardPaths()
                // With other cards there, the path is more likely a typo than a driver still loading.
                throw cards.isEmpty
                    ? DisplayError("no DRM device \(path)", hint: DRMErrors.noDeviceHint, reason: .noDevice)
                    : DisplayError("no DRM device \(path)", hint: "cards there are: \(cards.joined(separator: ", "))")
            }
            throw DRMErrors.failed(error, device: path)
        }
    }

    /// Runs a libdrm call through the one system call helper. libdrm's
    /// `drmMode*` calls return `-errno` (and leave errno set by the ioctl),
    /// some return -1 with errno: both become a `SystemCallError` named
    /// `name`. (`drmIoctl` itself already retries EINTR and EAGAIN.)
    @discardableResult
    func call<T: SignedInteger>(_ name: String, _ what: @autoclosure () -> String? = nil, _ body: () -> T) throws(DisplayError) -> T {
        do throws(SystemCallError) {
            return try systemCall(name) {
                let result = body()
                if result < -1, let code = Int32(exactly: -result) { errno = code }
                return result
            }
        } catch {
            // Only now: a frame's flip must not pay for the words of its error.
            throw DRMErrors.failed(error, what: what(), device: path)
        }
    }

    /// A libdrm call that returns a pointer, `nil` on failure with errno set.
    func fetch<T>(_ name: String, _ what: @autoclosure () -> String? = nil, _ body: () -> T?) throws(DisplayError) -> T {
        do throws(SystemCallError) {
            errno = 0
            guard let result = try attemptSystemCall(name, failed: { $0 == nil }, body), let value = result else {
                throw SystemCallError(call: name, errno: EAGAIN)
            }
            return value
        } catch {
            // libdrm returns NULL without errno for a failed allocation.
            let e = error.errno == 0 ? SystemCallError(call: name, errno: ENOMEM) : error
            throw DRMErrors.failed(e, what: what(), device: path)
        }
    }

    // MARK: queries

    /// Whether `crtc` has a vblank counter: false on drivers that complete
    /// flips at once, when the commit is done (QEMU's bochs and virtio-gpu,
    /// SPI panels), which the kernel answers with EOPNOTSUPP. Any other
    /// answer (a CRTC that is off: EINVAL) counts as having one.
    /// The corresponding C function is `drmCrtcGetSequence`.
    func hasVblank(crtc: UInt32) -> Bool {
        var sequence: UInt64 = 0, nanoseconds: UInt64 = 0
        let r = drmCrtcGetSequence(fd, crtc, &sequence, &nanoseconds)
        return !(r == -EOPNOTSUPP || (r == -1 && errno == EOPNOTSUPP))
    }

    /// The kernel driver's name ("bochs-drm", "vc4", "i915") and description.
    /// The corresponding C function is `drmGetVersion`.
    var driver: (name: String, description: String) {
        guard let v = try? fetch("drmGetVersion", nil, { drmGetVersion(fd) }) else { return ("unknown", "") }
        defer { drmFreeVersion(v) }
        let name = v.pointee.name.map { String(cString: $0) } ?? "unknown"
        let desc = v.pointee.desc.map { String(cString: $0) } ?? ""
        return (name, desc)
    }

    /// A device capability (`DRM_CAP_*`), `nil` if the kernel does not know it.
    /// The corresponding C function is `drmGetCap`.
    func capability(_ cap: Int32) -> UInt64? {
        var value: UInt64 = 0
        guard (try? call("drmGetCap") { drmGetCap(fd, UInt64(cap), &value) }) != nil else { return nil }
        return value
    }

    /// Asks for a client capability (`DRM_CLIENT_CAP_*`); `false` if refused.
    /// The corresponding C function is `drmSetClientCap`.
    func setClientCapability(_ cap: Int32, _ value: UInt64 = 1) -> Bool {
        (try? call("drmSetClientCap") { drmSetClientCap(fd, UInt64(cap), value) }) != nil
    }

    /// Whether this descriptor is the DRM master (may modeset), becoming it
    /// if nobody else is. Opening a card makes the opener master when there
    /// is none; a desktop, X or another kiosk holding it makes this `false`.
    /// The corresponding C functions are `drmIsMaster` and `drmSetMaster`.
    func becomeMaster() -> Bool {
        // drmIsMaster is a probe with no error to report (it asks the kernel
        // to authenticate magic 0 and reads the answer).
        if drmIsMaster(fd) != 0 { return true }
        return (try? call("drmSetMaster") { drmSetMaster(fd) }) != nil
    }

    struct Resources {
        var connectors: [UInt32] = []
        var encoders: [UInt32] = []
        var crtcs: [UInt32] = []
    }

    /// Connector, encoder and CRTC ids. Fails on a render-only node (no KMS).
    /// The corresponding C function is `drmModeGetResources`.
    func resources() throws(DisplayError) -> Resources {
        let res = try fetch("drmModeGetResources") { drmModeGetResources(fd) }
        defer { drmModeFreeResources(res) }
        let r = res.pointee
        func ids(_ p: UnsafeMutablePointer<UInt32>?, _ n: Int32) -> [UInt32] {
            guard let p, n > 0 else { return [] }
            return Array(UnsafeBufferPointer(start: p, count: Int(n)))
        }
        return Resources(connectors: ids(r.connectors, r.count_connectors), encoders: ids(r.encoders, r.count_encoders),
                         crtcs: ids(r.crtcs, r.count_crtcs))
    }

    struct Connector {
        enum Status: String { case connected, disconnected, unknown }
        var id: UInt32
        var name: String
        var status: Status
        var widthMM: Int
        var heightMM: Int
        var modes: [DRMMode]
        /// The encoder driving it now (0: none), and the ones that can.
        var encoder: UInt32
        var possibleEncoders: [UInt32]
        var properties: PropertyTable
    }

    /// A connector's state. `probe` asks the driver to detect the display and
    /// read its EDID again (slow: tens of ms; what hotplug needs); otherwise
    /// the kernel's last known state.
    /// The corresponding C functions are `drmModeGetConnector` and `drmModeGetConnectorCurrent`.
    func connector(_ id: UInt32, probe: Bool = true) throws(DisplayError) -> Connector {
        let c = try fetch(probe ? "drmModeGetConnector" : "drmModeGetConnectorCurrent", "connector \(id)") {
            probe ? drmModeGetConnector(fd, id) : drmModeGetConnectorCurrent(fd, id)
        }
        defer { drmModeFreeConnector(c) }
        let p = c.pointee
        let status: Connector.Status = p.connection == DRM_MODE_CONNECTED ? .connected
            : p.connection == DRM_MODE_DISCONNECTED ? .disconnected : .unknown
        let modes = p.modes.map { m in (0..<Int(max(p.count_modes, 0))).map { DRMMode(m[$0]) } } ?? []
        let encoders = p.encoders.map { e in Array(UnsafeBufferPointer(start: e, count: Int(max(p.count_encoders, 0)))) } ?? []
        return Connector(id: id, name: DRMConnectorName.name(type: p.connector_type, typeID: p.connector_type_id),
                         status: status, widthMM: Int(p.mmWidth), heightMM: Int(p.mmHeight), modes: modes,
                         encoder: p.encoder_id, possibleEncoders: encoders,
                         properties: properties(of: id, type: DRM_MODE_OBJECT_CONNECTOR))
    }

    /// An encoder's CRTC now (0: none) and the CRTCs it can drive, as a bit
    /// per index in `Resources.crtcs`.
    /// The corresponding C function is `drmModeGetEncoder`.
    func encoder(_ id: UInt32) -> (crtc: UInt32, possibleCRTCs: UInt32)? {
        guard let e = try? fetch("drmModeGetEncoder", nil, { drmModeGetEncoder(fd, id) }) else { return nil }
        defer { drmModeFreeEncoder(e) }
        return (e.pointee.crtc_id, e.pointee.possible_crtcs)
    }

    /// What a CRTC shows now, to put back on exit.
    struct CRTCState {
        var id: UInt32
        var framebuffer: UInt32
        var x: UInt32
        var y: UInt32
        var mode: drmModeModeInfo?
    }

    /// The corresponding C function is `drmModeGetCrtc`.
    func crtc(_ id: UInt32) throws(DisplayError) -> CRTCState {
        let c = try fetch("drmModeGetCrtc", "CRTC \(id)") { drmModeGetCrtc(fd, id) }
        defer { drmModeFreeCrtc(c) }
        let p = c.pointee
        return CRTCState(id: id, framebuffer: p.buffer_id, x: p.x, y: p.y, mode: p.mode_valid != 0 ? p.mode : nil)
    }

    /// Plane ids (all of them once DRM_CLIENT_CAP_UNIVERSAL_PLANES is set).
    /// The corresponding C function is `drmModeGetPlaneResources`.
    func planes() throws(DisplayError) -> [UInt32] {
        let r = try fetch("drmModeGetPlaneResources") { drmModeGetPlaneResources(fd) }
        defer { drmModeFreePlaneResources(r) }
        guard let p = r.pointee.planes else { return [] }
        return Array(UnsafeBufferPointer(start: p, count: Int(r.pointee.count_planes)))
    }

    /// A plane's CRTC now and the CRTCs it can show on (bit per CRTC index).
    /// The corresponding C function is `drmModeGetPlane`.
    func plane(_ id: UInt32) -> (crtc: UInt32, possibleCRTCs: UInt32)? {
        guard let p = try? fetch("drmModeGetPlane", nil, { drmModeGetPlane(fd, id) }) else { return nil }
        defer { drmModeFreePlane(p) }
        return (p.pointee.crtc_id, p.pointee.possible_crtcs)
    }

    /// An object's properties by name, with their ids and current values.
    /// Unreadable properties are left out (a table is for lookups; the caller
    /// reports what it misses).
    /// The corresponding C functions are `drmModeObjectGetProperties` and `drmModeGetProperty`.
    func properties(of object: UInt32, type: some BinaryInteger) -> PropertyTable {
        let objectType = UInt32(truncatingIfNeeded: type)
        guard let props = try? fetch("drmModeObjectGetProperties", nil, { drmModeObjectGetProperties(fd, object, objectType) })
        else { return PropertyTable(entries: []) }
        defer { drmModeFreeObjectProperties(props) }
        var entries: [PropertyTable.Property] = []
        for i in 0..<Int(props.pointee.count_props) {
            let id = props.pointee.props[i]
            guard let prop = try? fetch("drmModeGetProperty", nil, { drmModeGetProperty(fd, id) }) else { continue }
            defer { drmModeFreeProperty(prop) }
            var enumNames: [UInt64: String] = [:]
            if prop.pointee.flags & UInt32(DRM_MODE_PROP_ENUM) != 0, let e = prop.pointee.enums {
                for k in 0..<Int(prop.pointee.count_enums) {
                    enumNames[e[k].value] = string(fromCCharTuple: e[k].name)
                }
            }
            entries.append(.init(name: string(fromCCharTuple: prop.pointee.name), id: id,
                                 value: props.pointee.prop_values[i], enumNames: enumNames))
        }
        return PropertyTable(entries: entries)
    }

    // MARK: cards

    static let directory = "/dev/dri"

    /// `/dev/dri/card*` in number order (card2 before card10).
    /// The corresponding C functions are `opendir` and `readdir`.
    static func cardPaths(in directory: String = DRMDevice.directory) -> [String] {
        guard let dir = try? attemptSystemCall("opendir", failed: { $0 == nil }, { opendir(directory) }), let dir
        else { return [] }
        defer { closedir(dir) }
        var numbers: [Int] = []
        while let entry = readdir(dir) {
            let name = string(fromCCharTuple: entry.pointee.d_name)
            if name.hasPrefix("card"), let n = Int(name.dropFirst(4)) { numbers.append(n) }
        }
        return numbers.sorted().map { "\(directory)/card\($0)" }
    }
}

/// Properties of one KMS object, looked up by name (ids differ per driver).
struct PropertyTable {
    struct Property {
        var name: String
        var id: UInt32
        var value: UInt64
        /// Names of an enum property's values ("panel orientation": "Normal", ...).
        var enumNames: [UInt64: String]
    }

    var entries: [Property]

    subscript(name: String) -> Property? { entries.first { $0.name == name } }

    /// The DRM "panel orientation" property of a connector, if it has one.
    var panelOrientation: PanelOrientation? {
        guard let p = self["panel orientation"], let name = p.enumNames[p.value] else { return nil }
        return PanelOrientation(drmName: name)
    }
}

extension PanelOrientation {
    /// From the kernel's enum names (drm_connector.c): "Normal", "Upside
    /// Down", "Left Side Up", "Right Side Up".
    init?(drmName: String) {
        switch drmName {
        case "Normal": self = .normal
        case "Upside Down": self = .upsideDown
        case "Left Side Up": self = .leftSideUp
        case "Right Side Up": self = .rightSideUp
        default: return nil
        }
    }
}
