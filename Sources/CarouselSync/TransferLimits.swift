#if canImport(Glibc)
import Glibc
#endif

/// How much a peer may send and how long it may take: fixed before the
/// first byte arrives, so that a server (Immich, or what rclone talks to)
/// cannot hold a pass or the board's memory however it answers.
public struct TransferLimits: Equatable, Sendable {
    /// The largest JSON answer accepted, counted *decoded* (after gzip or
    /// deflate). Immich's largest answers are a page of 250 assets with
    /// their EXIF (under 1 MiB) and the album or people lists; 4 MiB is
    /// four times that. Parsed, JSON takes many times its size: a 60 MB
    /// answer took the sync to 996 MiB.
    public var jsonBytes = 4 << 20
    /// The slowest a transfer may average: 32 KiB/s, a poor mobile link.
    /// A picture at that rate still arrives; a server sending a byte a
    /// second (which the stall rule lets through) does not hold a pass.
    public var minimumRate = 32 << 10
    /// Seconds every transfer gets on top of its size's share (connecting,
    /// a server that thinks before it answers).
    public var floorSeconds = 30
    /// A download whose size nobody said beforehand (Immich's previews,
    /// about 0.5 MB) is given what this many bytes take.
    public var unknownSize = 16 << 20

    public init() {}

    /// The defaults, or the environment's `CAROUSELD_SYNC_MIN_RATE` (bytes
    /// a second) and `CAROUSELD_SYNC_DEADLINE_FLOOR` (seconds): set by the
    /// tests (Tests/Servers/sync_e2e.py) to see a deadline end a transfer in
    /// seconds rather than minutes.
    public static func fromEnvironment() -> TransferLimits {
        var limits = TransferLimits()
        if let rate = environmentInt("CAROUSELD_SYNC_MIN_RATE"), rate > 0 { limits.minimumRate = rate }
        if let floor = environmentInt("CAROUSELD_SYNC_DEADLINE_FLOOR"), floor > 0 { limits.floorSeconds = floor }
        return limits
    }

    /// The whole time a transfer of `bytes` (nil: not said beforehand) may take, in seconds.
    public func deadline(forBytes bytes: Int?) -> Int {
        let size = max(0, bytes ?? unknownSize)
        return floorSeconds + (size + minimumRate - 1) / minimumRate
    }

    /// How the deadline was made, for the line that says a transfer took too long.
    public func explainDeadline(forBytes bytes: Int?) -> String {
        let said = bytes.map { "\(Self.size($0))" } ?? "an unsaid size, taken as \(Self.size(unknownSize))"
        return "\(deadline(forBytes: bytes)) s, the time \(said) takes at \(minimumRate >> 10) KiB/s plus \(floorSeconds) s"
    }

    static func size(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? "\(bytes >> 20) MiB" : bytes >= 1 << 10 ? "\(bytes >> 10) KiB" : "\(bytes) bytes"
    }

    private static func environmentInt(_ name: String) -> Int? {
        getenv(name).flatMap { Int(String(cString: $0)) }
    }
}
