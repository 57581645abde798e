import CarouselDisplay
import CDRM

/// Which KMS interface commits frames: `auto` takes atomic where the driver
/// offers it, legacy otherwise.
public enum DRMAPI: String, Sendable, CaseIterable {
    case auto, atomic, legacy
}

/// The kernel's names for connectors, as in /sys/class/drm and in `modetest`.
public enum DRMConnectorName {
    /// `drm_connector_enum_list` in the kernel's drivers/gpu/drm/drm_connector.c,
    /// indexed by `DRM_MODE_CONNECTOR_*`. The kernel names a connector
    /// "<type name>-<type id>" (`HDMI-A-1`, `DSI-1`, `Virtual-1`).
    static let typeNames = [
        "Unknown", "VGA", "DVI-I", "DVI-D", "DVI-A", "Composite", "SVIDEO", "LVDS", "Component",
        "DIN", "DP", "HDMI-A", "HDMI-B", "TV", "eDP", "Virtual", "DSI", "DPI", "Writeback", "SPI", "USB",
    ]

    /// "HDMI-A-1" for connector type `DRM_MODE_CONNECTOR_HDMIA` with type id 1.
    /// A type newer than this table is named "Unknown<type>-<id>", never dropped.
    public static func name(type: UInt32, typeID: UInt32) -> String {
        let typeName = Int(type) < typeNames.count ? typeNames[Int(type)] : "Unknown\(type)"
        return "\(typeName)-\(typeID)"
    }

    /// Whether `requested` (from the configuration) names the connector
    /// `actual`. Case does not matter: "hdmi-a-1" finds "HDMI-A-1".
    public static func matches(_ requested: String, _ actual: String) -> Bool {
        requested.lowercased() == actual.lowercased()
    }
}

/// A display mode asked for by name: the display room's request.
public typealias DRMModeRequest = DisplayModeRequest

/// One mode a connector offers: a copy of libdrm's `drmModeModeInfo`.
public struct DRMMode: Sendable, Equatable, CustomStringConvertible {
    /// The kernel's mode, as handed to `drmModeSetCrtc` or a MODE_ID blob.
    let info: drmModeModeInfo

    public var width: Int { Int(info.hdisplay) }
    public var height: Int { Int(info.vdisplay) }
    /// The mode the connector (its EDID) prefers: `DRM_MODE_TYPE_PREFERRED`.
    public var isPreferred: Bool { info.type & UInt32(DRM_MODE_TYPE_PREFERRED) != 0 }
    public var isInterlaced: Bool { info.flags & UInt32(DRM_MODE_FLAG_INTERLACE) != 0 }

    /// Refresh in mHz from the timings, as the kernel's `drm_mode_vrefresh`
    /// computes it (59940 for a 59.94 Hz mode); `vrefresh * 1000` when the
    /// timings are missing.
    public var refreshMillihertz: Int {
        var numerator = Int(info.clock) * 1_000_000
        var denominator = Int(info.htotal) * Int(info.vtotal)
        guard denominator > 0 else { return Int(info.vrefresh) * 1000 }
        if isInterlaced { numerator *= 2 }
        if info.flags & UInt32(DRM_MODE_FLAG_DBLSCAN) != 0 { denominator *= 2 }
        if info.vscan > 1 { denominator *= Int(info.vscan) }
        return (numerator + denominator / 2) / denominator
    }

    /// Refresh rounded to Hz: what `WxH@Hz` names.
    public var refresh: Int { (refreshMillihertz + 500) / 1000 }

    /// "1920x1080@60", with an "i" for interlaced modes ("1920x1080i@60").
    public var name: String { "\(width)x\(height)\(isInterlaced ? "i" : "")@\(refresh)" }
    public var description: String { name }

    init(_ info: drmModeModeInfo) { self.info = info }

    /// A mode with made-up timings (tests, the offscreen world): a 60 Hz-like
    /// mode whose refresh is `refreshMillihertz`.
    public init(width: Int, height: Int, refreshMillihertz: Int = 60000, preferred: Bool = false,
                interlaced: Bool = false) {
        var m = drmModeModeInfo()
        m.hdisplay = UInt16(width)
        m.vdisplay = UInt16(height)
        m.htotal = UInt16(width + 160)
        m.vtotal = UInt16(height + 40)
        // clock in kHz such that clock * 1e6 / (htotal * vtotal) == refresh in mHz.
        let totalPixels = Int(m.htotal) * Int(m.vtotal)
        m.clock = UInt32((totalPixels * refreshMillihertz / (interlaced ? 2 : 1) + 500_000) / 1_000_000)
        m.vrefresh = UInt32((refreshMillihertz + 500) / 1000)
        m.type = UInt32(DRM_MODE_TYPE_DRIVER) | (preferred ? UInt32(DRM_MODE_TYPE_PREFERRED) : 0)
        m.flags = interlaced ? UInt32(DRM_MODE_FLAG_INTERLACE) : 0
        withUnsafeMutableBytes(of: &m.name) { bytes in
            let text = Array("\(width)x\(height)\(interlaced ? "i" : "")".utf8.prefix(bytes.count - 1))
            for (i, b) in text.enumerated() { bytes[i] = b }
        }
        info = m
    }

    /// Same timings (the type bits, such as "preferred", do not count: a
    /// re-probed connector may mark another mode preferred without the
    /// timings of this one changing).
    public static func == (a: DRMMode, b: DRMMode) -> Bool {
        let x = a.info, y = b.info
        return x.clock == y.clock && x.hdisplay == y.hdisplay && x.hsync_start == y.hsync_start
            && x.hsync_end == y.hsync_end && x.htotal == y.htotal && x.hskew == y.hskew
            && x.vdisplay == y.vdisplay && x.vsync_start == y.vsync_start && x.vsync_end == y.vsync_end
            && x.vtotal == y.vtotal && x.vscan == y.vscan && x.flags == y.flags
    }

    /// The mode to light up: the one `request` names, else the connector's
    /// preferred mode, else its first (the kernel sorts the preferred mode
    /// first, then by size and refresh). `nil` if `request` names no mode
    /// there is.
    ///
    /// Several modes can share a size (and even a rounded refresh): prefer
    /// progressive, then the preferred one, then the fastest.
    public static func choose(_ request: DRMModeRequest?, from modes: [DRMMode]) -> DRMMode? {
        guard let request else { return modes.first(where: \.isPreferred) ?? modes.first }
        let candidates = modes.filter { m in
            m.width == request.width && m.height == request.height
                && (request.refresh == nil || m.refresh == request.refresh || Int(m.info.vrefresh) == request.refresh)
        }
        return candidates.min { a, b in
            if a.isInterlaced != b.isInterlaced { return !a.isInterlaced }
            if a.isPreferred != b.isPreferred { return a.isPreferred }
            return a.refreshMillihertz > b.refreshMillihertz
        }
    }

    /// Mode names without repeats, in the connector's order, the preferred
    /// one marked with "*": for error hints and `carouseld probe`.
    public static func listing(_ modes: [DRMMode], markPreferred: Bool = true) -> [String] {
        var seen = Set<String>()
        var names: [String] = []
        for m in modes {
            let name = m.name + (markPreferred && m.isPreferred ? "*" : "")
            if seen.insert(m.name).inserted { names.append(name) }
        }
        return names
    }
}

/// A C `char[N]` (imported as a tuple) up to its first NUL, as UTF-8.
func string<T>(fromCCharTuple tuple: T) -> String {
    withUnsafeBytes(of: tuple) { bytes in
        let end = bytes.firstIndex(of: 0) ?? bytes.count
        return String(decoding: bytes[..<end], as: UTF8.self)
    }
}
