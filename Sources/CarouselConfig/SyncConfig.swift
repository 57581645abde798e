/// Where `carouseld sync` fetches pictures from.
public enum SyncSource: Equatable, Sendable {
    /// An Immich server (`server`, `api_key_file` and what to show).
    case immich
    /// Any rclone remote: `rclone:REMOTE:PATH`, as `rclone lsjson` takes it.
    case rclone(remote: String)
}

/// Immich's two sizes worth a frame: its preview (made for screens, about
/// 1440 pixels on the long side) or the file as uploaded.
public enum SyncSize: String, Sendable, CaseIterable { case preview, original }

/// `[sync]`: what the sync process fetches into the album and how much it
/// keeps. The daemon never reads it; `check-config` checks it like the rest.
public struct SyncSettings: Equatable, Sendable {
    /// Nil: no sync.
    public var source: SyncSource? = nil
    /// Immich's address, such as https://photos.example.com (its API is under /api).
    public var server: String? = nil
    /// The file holding the API key (never the key itself in the INI).
    public var apiKeyFile: String? = nil
    /// Albums by name or id.
    public var albums: [String] = []
    /// People by name or id: pictures in which any of them is recognised.
    public var people: [String] = []
    public var favorites = false
    /// Immich's "on this day" memories of today.
    public var memories = false
    /// Taken on or after / before these days (YYYY-MM-DD, local time of the server's records).
    public var takenAfter: String? = nil
    public var takenBefore: String? = nil
    public var size = SyncSize.preview
    /// Video clips too (shown once the carousel plays video; skipped until then).
    public var videos = false
    /// Minutes between passes.
    public var interval = 15
    /// The folder filled; nil: `[images] path`.
    public var folder: String? = nil
    /// The most kept (0: no cap). What is furthest from being shown goes first.
    public var maxMB = 0
    public var maxFiles = 0
    /// rclone's configuration file; nil: rclone's own default.
    public var rcloneConfig: String? = nil
    /// CA certificates (PEM) for the server; nil: the system's store.
    public var caFile: String? = nil
    public init() {}

    /// Why the section cannot be used as written (checked once all its keys are in).
    public var incomplete: String? {
        // Settings without a source are no sync (`carouseld sync` says so); each key alone is valid.
        guard let source else { return nil }
        switch source {
        case .immich:
            if server == nil { return "[sync] source = immich needs server (such as https://photos.example.com)" }
            if apiKeyFile == nil { return "[sync] source = immich needs api_key_file (a file holding the API key)" }
            if albums.isEmpty, people.isEmpty, !favorites, !memories, takenAfter == nil, takenBefore == nil {
                return "[sync] source = immich needs something to show: albums, people, favorites, memories or taken_after/taken_before"
            }
        case .rclone:
            break
        }
        if let after = takenAfter, let before = takenBefore, after > before {
            return "[sync] taken_after (\(after)) is later than taken_before (\(before))"
        }
        return nil
    }
}
