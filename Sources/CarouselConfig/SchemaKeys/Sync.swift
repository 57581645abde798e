extension Schema {
    /// A comma-separated list of names or ids, each trimmed, none empty.
    static func list(_ v: String, _ what: String) throws(ValueError) -> [String] {
        guard !v.isEmpty else { return [] }
        let items = v.split(separator: ",", omittingEmptySubsequences: false).map { String($0.trimmingWhitespace()) }
        guard !items.contains(where: \.isEmpty) else { throw ValueError("expected \(what) separated by commas, none empty") }
        guard !items.contains(where: { $0.unicodeScalars.contains { $0.value < 0x20 } }) else {
            throw ValueError("\(what) cannot contain control characters")
        }
        return items
    }

    /// A day as YYYY-MM-DD.
    static func day(_ v: String) throws(ValueError) -> String? {
        guard !v.isEmpty else { return nil }
        let parts = v.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]),
              (1900...9999).contains(y), (1...12).contains(m), (1...31).contains(d) else {
            throw ValueError("expected a day as YYYY-MM-DD, such as 2024-06-30")
        }
        return v
    }

    static func absolutePath(_ v: String, _ what: String) throws(ValueError) -> String? {
        guard !v.isEmpty else { return nil }
        guard v.hasPrefix("/"), !v.contains("\0") else { throw ValueError("expected an absolute path: \(what)") }
        return v
    }

    /// The keys of `[sync]`, in the order the shipped INI, the README's table and carouseld.ini(5) list them.
    static let syncKeys: [KeySpec] = [
        .text("sync", "source", "immich, rclone:REMOTE:PATH, or empty (no sync)", default: "", help: """
            Where `carouseld sync` (the carouseld-sync service) fetches pictures from: `immich`, or
            `rclone:REMOTE:PATH` (any remote of rclone's configuration: WebDAV, Nextcloud, SMB, S3, SFTP, ...). Empty:
            no sync. The README's Photos from Immich or an rclone remote section tells the rest.
            """) { c, v throws(ValueError) in
            if v.isEmpty { c.sync.source = nil; return }
            if v.lowercased() == "immich" { c.sync.source = .immich; return }
            guard v.hasPrefix("rclone:") else { throw ValueError("expected immich or rclone:REMOTE:PATH") }
            let remote = String(v.dropFirst("rclone:".count))
            // rclone's remotes are NAME:PATH (or :backend,opts:PATH); a local path would copy the disk into itself.
            guard let colon = remote.firstIndex(of: ":"), colon != remote.startIndex || remote.dropFirst().contains(":"),
                  !remote.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
                throw ValueError("expected rclone:REMOTE:PATH with a remote of your rclone configuration, such as rclone:nextcloud:Photos/Frame")
            }
            c.sync.source = .rclone(remote: remote)
        },
        .text("sync", "server", "the Immich server's address, http(s)://HOST[:PORT][/PATH]", default: "", help: """
            Immich's address, `https://HOST[:PORT]`, such as `https://photos.example.com` (`/api` is added).
            """) { c, v throws(ValueError) in
            guard !v.isEmpty else { c.sync.server = nil; return }
            let lower = v.lowercased()
            guard lower.hasPrefix("http://") || lower.hasPrefix("https://"),
                  !v.contains(where: { $0 == " " || $0 == "?" || $0 == "#" || $0.isNewline }),
                  v.split(separator: "/", omittingEmptySubsequences: true).count >= 2 else {
                throw ValueError("expected http(s)://HOST[:PORT], such as https://photos.example.com")
            }
            // A user:password@ would be in every log line and in the status: Immich takes the key instead.
            guard !v.split(separator: "/", omittingEmptySubsequences: true)[1].contains("@") else {
                throw ValueError("no user or password in the address: Immich takes the API key from api_key_file")
            }
            var url = v
            while url.hasSuffix("/") { url.removeLast() }
            if url.hasSuffix("/api") { url.removeLast(4) }
            c.sync.server = url
        },
        .text("sync", "api_key_file", "an absolute path (the file holding the API key)", default: "", help: """
            An absolute path: the file holding Immich's API key, never the key itself in the INI. It must be the sync's
            user's and readable by it alone (`carouseld-sync`, mode 0600): a file others may read is refused with the
            `chmod` that fixes it. A key going to an `http://` server on another machine is one warning.
            """) { c, v throws(ValueError) in
            c.sync.apiKeyFile = try absolutePath(v, "a file holding the API key")
        },
        .text("sync", "albums", "album names or ids, separated by commas", default: "", help: """
            Immich albums by name or id, separated by commas (a name with a comma: give its id). What to show from
            Immich may combine `albums`, `people`, `favorites`, `memories`, `taken_after` and `taken_before`.
            """) { c, v throws(ValueError) in
            c.sync.albums = try list(v, "album names or ids")
        },
        .text("sync", "people", "people's names or ids, separated by commas", default: "", help: """
            People Immich recognised, by name or id, separated by commas: pictures in which any of them appears.
            """) { c, v throws(ValueError) in
            c.sync.people = try list(v, "names or ids")
        },
        .flag("sync", "favorites", default: "false", help: "Immich's favourites.") { $0.sync.favorites = $1 },
        .flag("sync", "memories", default: "false", help: "Immich's \"on this day\" memories of today.") { $0.sync.memories = $1 },
        .text("sync", "taken_after", "a day, YYYY-MM-DD, or empty", default: "", help: """
            Only pictures taken on or after this day, `YYYY-MM-DD`; alone, it selects every picture from then on.
            """) { c, v throws(ValueError) in c.sync.takenAfter = try day(v) },
        .text("sync", "taken_before", "a day, YYYY-MM-DD, or empty", default: "", help: """
            Only pictures taken on or before this day, `YYYY-MM-DD`.
            """) { c, v throws(ValueError) in c.sync.takenBefore = try day(v) },
        .choice("sync", "size", SyncSize.self, default: "preview", help: """
            `preview` (Immich's own, made for screens, 1440 pixels on the long side) or `original` (the file as
            uploaded).
            """) { $0.sync.size = $1 },
        .flag("sync", "videos", default: "false", help: """
            Fetch video clips too (the carousel plays them, `[video]`).
            """) { $0.sync.videos = $1 },
        .integer("sync", "interval", 1...10080, default: "15", help: """
            Minutes between syncs; after a failure the next try comes sooner (1, 2, 4, ... minutes).
            """) { $0.sync.interval = $1 },
        .text("sync", "folder", "an absolute path, or empty ([images] path)", default: "", help: """
            The folder filled (absolute); empty: `[images] path`. Only files the sync wrote (listed in its manifest)
            are ever replaced or removed there.
            """) { c, v throws(ValueError) in
            c.sync.folder = try absolutePath(v, "the folder to fill")
        },
        .integer("sync", "max_mb", 0...1_000_000, default: "0", help: """
            The most kept, in MB; 0: no cap. What comes last in the selection goes first.
            """) { $0.sync.maxMB = $1 },
        .integer("sync", "max_files", 0...1_000_000, default: "0", help: """
            The most files kept; 0: no cap. What comes last in the selection goes first.
            """) { $0.sync.maxFiles = $1 },
        .text("sync", "rclone_config", "an absolute path, or empty (rclone's own)", default: "", help: """
            rclone's configuration file (absolute); empty: rclone's own (`~/.config/rclone/rclone.conf`). It holds the
            remotes' passwords and tokens: the sync's user's and readable by it alone (`carouseld-sync`, mode 0600),
            else refused with the `chmod` that fixes it.
            """) { c, v throws(ValueError) in
            c.sync.rcloneConfig = try absolutePath(v, "rclone's configuration file")
        },
        .text("sync", "ca_file", "an absolute path, or empty (the system's store)", default: "", help: """
            CA certificates (PEM) that sign the server's certificate; empty: the system's store.
            """) { c, v throws(ValueError) in
            c.sync.caFile = try absolutePath(v, "a PEM file of CA certificates")
        },
    ]
}
