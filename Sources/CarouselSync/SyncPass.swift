import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// One item a source offers, in the order the frame should keep them
/// (what comes first is kept first when the copy is capped).
public struct RemoteItem: Equatable, Sendable {
    /// Stable at the source: an Immich asset id, an rclone path.
    public var key: String
    /// The name it gets in the folder.
    public var name: String
    /// Changes when the item changes.
    public var version: String
    /// Its size when the source says it before the download.
    public var bytes: Int?
    /// The caption's text and date, written into the file where the caption reader finds them.
    public var caption: CaptionTags?
    public init(key: String, name: String, version: String, bytes: Int? = nil, caption: CaptionTags? = nil) {
        self.key = key
        self.name = name
        self.version = version
        self.bytes = bytes
        self.caption = caption
    }
}

/// Where pictures come from: Immich, or an rclone remote.
public protocol SyncSourceClient {
    /// What the source says, for the log ("Immich at https://…").
    var summary: String { get }
    /// Everything selected now, in the order to keep. A failure deletes nothing.
    func list() throws(SyncError) -> [RemoteItem]
    /// Writes `item`'s bytes into `fd`; returns how many.
    func fetch(_ item: RemoteItem, into fd: Int32, maxBytes: Int) throws(SyncError) -> Int
}

/// What a pass did, for the log, the status file and the tests.
public struct SyncOutcome: Equatable, Sendable {
    public var listed = 0
    public var downloaded = 0
    public var bytesDownloaded = 0
    public var removed = 0
    public var kept = 0
    /// Items left out by the caps.
    public var capped = 0
    /// Items that failed alone (the rest of the pass went on).
    public var failed: [String] = []
    /// A name that is a user's file: never overwritten.
    public var skippedForeign: [String] = []
    public var stoppedBy: SyncError?
}

/// One pass: list the source, bring the folder to the selection (within
/// the caps), remove what the sync wrote that left it, and keep the
/// manifest in step after every file (a line in its journal), so that a
/// pass killed at any point leaves a folder of whole pictures and a
/// manifest that lists them all.
public struct SyncPass {
    public let source: SyncSourceClient
    public let folder: SyncFolder
    public let manifestPath: String
    public var maxBytes = 0
    public var maxFiles = 0
    /// The largest single file accepted.
    public var maxFileBytes = 512 << 20
    /// Asked before each download: true ends the pass there (a stop
    /// requested), with every file so far whole and in the manifest.
    public var shouldStop: () -> Bool = { false }

    public init(source: SyncSourceClient, folder: SyncFolder, manifestPath: String) {
        self.source = source
        self.folder = folder
        self.manifestPath = manifestPath
    }

    public func run() throws(SyncError) -> SyncOutcome {
        // One pass at a time over a manifest: a pass by hand beside the
        // service's would drop the other's entries and remove its .part files.
        let lock = try SyncLock(manifestPath + ".lock")
        defer { lock.release() }
        var outcome = SyncOutcome()
        try folder.create()
        var manifest = try SyncManifest.load(manifestPath, folder: folder.path)
        let listed = try source.list()
        outcome.listed = listed.count
        // Names are unique in the folder: the first item of a name wins.
        var seenNames = Set<String>()
        var wanted: [RemoteItem] = []
        for var item in listed {
            // A name the file system cannot hold (over 255 bytes with the
            // temporary name's dot and .part, or a path over PATH_MAX) is
            // shortened, said once (when it is new), never dropped unsaid.
            let fitted = folder.fittedName(item.name)
            if fitted != item.name {
                if manifest.entries[item.key]?.name != fitted {
                    log(.info, "sync: \(item.key): its name is too long for \(folder.path) (\(item.name.utf8.count) bytes); saved as \(fitted)")
                }
                item.name = fitted
            }
            guard SyncFolder.isPlainName(item.name), folder.fits(item.name) else {
                log(.warning, "sync: \(item.key): '\(item.name)' cannot be a file's name in \(folder.path); not fetched")
                continue
            }
            if seenNames.insert(item.name).inserted { wanted.append(item) }
        }
        // A killed pass's temporary files: only those of names the sync writes.
        folder.removeLeftovers(of: seenNames.union(manifest.entries.values.map(\.name)))
        // The caps, in the selection's order: what comes later is furthest from being shown.
        var budget = maxBytes > 0 ? maxBytes : Int.max
        if maxFiles > 0, wanted.count > maxFiles {
            outcome.capped += wanted.count - maxFiles
            wanted.removeLast(wanted.count - maxFiles)
        }
        // What stays is decided before anything is downloaded: the files
        // that left the selection go first, making room.
        let keys = Set(wanted.map(\.key))
        for entry in manifest.entries.values where !keys.contains(entry.key) {
            folder.remove(entry.name)
            manifest.entries[entry.key] = nil
            outcome.removed += 1
        }

        var kept: [RemoteItem] = []
        // A size the source does not say (Immich's previews) is taken as the
        // files' average so far, so that the cap does not fetch what it drops.
        let estimate = manifest.entries.isEmpty ? 0 : manifest.totalBytes / manifest.entries.count
        for item in wanted {
            let have = manifest.entries[item.key]
            let size = have?.version == item.version ? have!.bytes : (item.bytes ?? estimate)
            if size > budget {
                outcome.capped += 1
                continue
            }
            budget -= size
            kept.append(item)
        }
        // Over the byte cap: what was kept before but is now past it goes too.
        let keptKeys = Set(kept.map(\.key))
        for entry in manifest.entries.values where !keptKeys.contains(entry.key) {
            folder.remove(entry.name)
            manifest.entries[entry.key] = nil
            outcome.removed += 1
        }
        // Whole, with what left: the journal starts empty for this pass.
        try manifest.save(manifestPath)

        for (position, item) in kept.enumerated() {
            if shouldStop() { break }
            if let have = manifest.entries[item.key], have.version == item.version, have.name == item.name,
               folder.exists(item.name) {
                outcome.kept += 1
                continue
            }
            let ours = manifest.entries[item.key]
            if folder.exists(item.name), ours?.name != item.name, !manifest.owns(name: item.name) {
                outcome.skippedForeign.append(item.name)
                log(.warning, "sync: \(folder.path)/\(item.name) is not a file the sync wrote; left alone, \(item.key) not fetched")
                continue
            }
            do {
                let bytes = try folder.write(item.name, fill: { fd throws(SyncError) in
                    try source.fetch(item, into: fd, maxBytes: maxFileBytes)
                }, beforeRename: { bytes throws(SyncError) in
                    // In the manifest before it is in the folder: a file the
                    // sync put there is never one it does not know (a power
                    // cut in between leaves an entry whose file is missing,
                    // fetched again next time).
                    try manifest.record(SyncManifest.Entry(key: item.key, name: item.name, version: item.version, bytes: bytes),
                                        manifestPath)
                })
                if let old = ours, old.name != item.name { folder.remove(old.name) }
                outcome.downloaded += 1
                outcome.bytesDownloaded += bytes
                // A size the source did not say beforehand can pass the byte
                // cap: what comes last in the selection goes, then this one
                // if it is still too much; the rest of the list is past it.
                if maxBytes > 0, manifest.totalBytes > maxBytes {
                    for later in kept[position...].reversed() where manifest.totalBytes > maxBytes {
                        guard let entry = manifest.entries[later.key] else { continue }
                        folder.remove(entry.name)
                        manifest.entries[later.key] = nil
                        outcome.capped += 1
                        if later.key == item.key { outcome.downloaded -= 1 }
                    }
                    for earlier in kept[..<position].reversed() where manifest.totalBytes > maxBytes {
                        guard let entry = manifest.entries[earlier.key] else { continue }
                        folder.remove(entry.name)
                        manifest.entries[earlier.key] = nil
                        outcome.capped += 1
                    }
                    try manifest.save(manifestPath)
                    break
                }
            } catch {
                switch error.kind {
                case .diskFull, .offline, .unauthorized, .local, .stopped:
                    // The rest would fail alike: stop here, keep what is whole.
                    outcome.stoppedBy = error
                    try manifest.save(manifestPath)
                    return outcome
                case .missing, .server:
                    // This file alone (a server's answer to it): one line
                    // each, the pass goes on with the next.
                    log(.warning, "sync: \(item.name) not fetched: \(error)")
                    outcome.failed.append("\(item.name): \(error)")
                }
            }
        }
        try manifest.save(manifestPath)
        return outcome
    }
}
