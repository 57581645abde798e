import CDRM
import CarouselDisplay
import CarouselImaging
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

// DRMBackend's start: choosing the card, connector and CRTC, and waiting for a display.
extension DRMBackend {
    // MARK: choosing the card, connector and CRTC

    /// Opens `path`, or else the first card with a connected display (named
    /// `connector`, if given), and picks the connector.
    static func openCard(_ path: String?, connector name: String?) throws(DisplayError) -> (DRMDevice, DRMDevice.Connector) {
        let paths: [String]
        if let path {
            paths = [path]
        } else {
            paths = DRMDevice.cardPaths()
            guard !paths.isEmpty else { throw DRMErrors.noDevice(DRMDevice.directory) }
        }
        var seen: [String] = []  // "card0 HDMI-A-1 (disconnected)" for the error
        var namedButDisconnected = false
        for p in paths {
            let device = try DRMDevice(path: p)
            guard let resources = try? device.resources() else {
                if path != nil {
                    throw DisplayError("\(p) (\(device.driver.name)) has no display outputs",
                                       hint: "a render-only device: 'carouseld probe' lists the cards with outputs")
                }
                continue
            }
            let card = String(p.split(separator: "/").last ?? Substring(p))
            var connectors: [DRMDevice.Connector] = []
            for id in resources.connectors {
                if let c = try? device.connector(id) { connectors.append(c) }
            }
            for c in connectors { seen.append("\(card) \(c.name) (\(c.status.rawValue))") }
            if let name {
                if let c = connectors.first(where: { DRMConnectorName.matches(name, $0.name) }) {
                    // A connector named in the configuration is taken unless
                    // known to be unplugged (some panels report "unknown").
                    if c.status != .disconnected { return (device, c) }
                    namedButDisconnected = true
                }
            } else if let c = connectors.first(where: { $0.status == .connected }) {
                return (device, c)
            }
        }
        let place = path ?? DRMDevice.directory
        if let name, !namedButDisconnected {
            throw DisplayError("no connector named \(name) on \(place)",
                               hint: seen.isEmpty ? "no connectors at all" : "connectors: \(seen.joined(separator: ", "))")
        }
        throw DRMErrors.noDisplayConnected(name.map { "\($0) on \(place)" } ?? place, connectors: seen)
    }

    /// The CRTC to drive `connector`: the one driving it now (fbcon's, so
    /// that restoring is exact), else the first its encoders can use.
    static func findCRTC(_ device: DRMDevice, _ resources: DRMDevice.Resources,
                                 _ connector: DRMDevice.Connector) -> (UInt32, Int)? {
        if connector.encoder != 0, let e = device.encoder(connector.encoder), e.crtc != 0,
           let i = resources.crtcs.firstIndex(of: e.crtc) {
            return (e.crtc, i)
        }
        for id in connector.possibleEncoders {
            guard let e = device.encoder(id) else { continue }
            for (i, crtc) in resources.crtcs.enumerated() where i < 32 && e.possibleCRTCs & (1 << UInt32(i)) != 0 {
                return (crtc, i)
            }
        }
        return nil
    }

    static func makeInterface(_ requested: DRMAPI, device: DRMDevice, pipe: Pipe,
                                      warnings: inout [String]) throws(DisplayError) -> KMSInterface {
        if requested == .legacy { return LegacyInterface(device: device, pipe: pipe) }
        // Atomic needs universal planes (the primary plane as an object) first.
        let atomic = device.setClientCapability(DRM_CLIENT_CAP_UNIVERSAL_PLANES)
            && device.setClientCapability(DRM_CLIENT_CAP_ATOMIC)
        if requested == .atomic {
            guard atomic else {
                throw DisplayError("\(device.path) (\(device.driver.name)) does not support atomic modesetting",
                                   hint: "use [display] api = legacy or auto")
            }
            return try AtomicInterface(device: device, pipe: pipe)
        }
        guard atomic else { return LegacyInterface(device: device, pipe: pipe) }
        do {
            return try AtomicInterface(device: device, pipe: pipe)
        } catch {
            warnings.append("\(error); using the legacy interface")
            return LegacyInterface(device: device, pipe: pipe)
        }
    }

    // MARK: waiting for a display

    /// Whether waiting can cure `error` from `init`: no DRM device yet (the
    /// driver loads after carouseld at boot) or no display connected. The
    /// daemon then logs once and retries on the next udev "drm" event (or
    /// with `waitForConnector`) instead of exiting into a restart loop.
    public static func isWorthWaiting(_ error: DisplayError) -> Bool {
        switch error.reason {
        case .noDevice, .notConnected: return true
        case .permission, .busy, .gone, .windowRefused, .other: return false
        }
    }

    /// Blocks until a display is connected (to `device`/`connector` if
    /// given), checking every `interval` seconds: for startup, before the
    /// event loop runs. Returns the card and connector found ("/dev/dri/card0
    /// HDMI-A-1"), or `nil` once `shouldStop` returns `true` (checked each
    /// round, e.g. a signalfd with a pending SIGTERM).
    public static func waitForConnector(device: String? = nil, connector: String? = nil, interval: Double = 2,
                                        shouldStop: () -> Bool = { false }) -> String? {
        while !shouldStop() {
            if let found = DRMProbe.connectedDisplay(device: device, connector: connector) { return found }
            // A signal restarts the pause (the helper retries EINTR): harmless here.
            _ = try? systemCall("poll") { poll(nil, 0, Int32(clamping: Int(interval * 1000))) }
        }
        return nil
    }

    /// Waits (blocking, for tools) for the frame in flight as the daemon's
    /// loop would: poll the descriptor, then `dispatch` until it reports the flip.
    public func waitForFlip(timeoutMilliseconds: Int32) throws(DisplayError) {
        // Nothing in flight (a flip in the commit is on screen already).
        guard let fd = fileDescriptor, pending != nil else { return }
        while true {
            var request = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready: Int32
            do {
                ready = try systemCall("poll") { poll(&request, 1, timeoutMilliseconds) }
            } catch {
                throw DisplayError("waiting for a page flip on \(devicePath): \(error)")
            }
            guard ready > 0 else {
                throw DisplayError("no page-flip event within \(timeoutMilliseconds) ms on \(devicePath)",
                                   hint: "the driver did not complete the flip; try --api legacy")
            }
            if try dispatch() { return }
        }
    }
}
