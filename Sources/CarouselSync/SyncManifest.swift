import CarouselConfig
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// What the sync wrote into the folder, kept in its state directory: the
/// only files it will ever replace or delete. A user's own pictures in the
/// same folder are never in it, so never touched.
///
/// Two files: `manifest.json`, written whole (`save`) at the start and end
/// of a pass, and beside it a journal, `manifest.json.journal`, to which
/// each file fetched adds one line (`record`) before it appears in the
/// folder. Rewriting the whole manifest after every file made a pass of N
/// files write O(N²) bytes (2,000 small pictures: 305 MiB, on an SD card);
/// the journal keeps it O(N). `load` reads both; `save` folds the journal
/// in and removes it.
public struct SyncManifest: Equatable, Sendable {
    public struct Entry: Equatable, Sendable {
        /// The item's key at its source (an Immich asset id, an rclone path).
        public var key: String
        /// The file's name in the folder.
        public var name: String
        /// What changes when the item changes (checksum, time and size).
        public var version: String
        public var bytes: Int
        public init(key: String, name: String, version: String, bytes: Int) {
            self.key = key
            self.name = name
            self.version = version
            self.bytes = bytes
        }
    }

    public var entries: [String: Entry] = [:]
    /// The folder its files are in: a manifest of another folder owns nothing here.
    public var folder = ""
    public init(folder: String = "") {
        self.folder = folder
    }

    public var totalBytes: Int { entries.values.reduce(0) { $0 + $1.bytes } }
    /// Whether `name` in the folder is one of the sync's files.
    public func owns(name: String) -> Bool { entries.values.contains { $0.name == name } }

    /// The manifest at `path`; an empty one when there is none yet. A file
    /// that cannot be read as one is an error: guessing would risk deleting
    /// what is not ours, so the pass stops.
    public static func load(_ path: String, folder: String) throws(SyncError) -> SyncManifest {
        // A journal without a manifest is not of this folder's files (the
        // manifest is always written before the first line of a journal).
        guard access(path, F_OK) == 0 else { return SyncManifest(folder: folder) }
        let bytes: [UInt8]
        do {
            bytes = try readFileBytes(path)
        } catch {
            throw SyncError(.local, "cannot read the manifest \(path): \(errnoDescription(error.errno))")
        }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let json = JSONValue.parse(text), case let .array(files)? = json["files"] else {
            throw SyncError(.local, "\(path) is not a sync manifest; move it away to start again (the files it listed are then left alone)")
        }
        // The folder moved ([images] path or [sync] folder changed): the files
        // listed are in the old one, left as they are; in the new folder the
        // sync owns nothing yet, so a user's picture of a listed name is safe.
        guard json["folder"]?.stringValue == folder else {
            log(.warning, "sync: the folder is now \(folder) (was \(json["folder"]?.stringValue ?? "unknown")); "
                + "the pictures fetched into the old one are left there")
            return SyncManifest(folder: folder)
        }
        var manifest = SyncManifest(folder: folder)
        for file in files {
            guard let key = file["key"]?.stringValue, let name = file["name"]?.stringValue,
                  let version = file["version"]?.stringValue, let bytes = file["bytes"]?.intValue,
                  SyncFolder.isPlainName(name) else {
                throw SyncError(.local, "\(path) has an entry that is not a file of the folder: \(file.encoded)")
            }
            manifest.entries[key] = Entry(key: key, name: name, version: version, bytes: bytes)
        }
        try manifest.replayJournal(journalPath(path))
        return manifest
    }

    /// The journal beside the manifest at `path`.
    public static func journalPath(_ path: String) -> String { path + ".journal" }

    /// One entry as JSON: the manifest's `files` and the journal's lines alike.
    static func json(_ e: Entry) -> JSONValue {
        .fields([JSONField("key", .string(e.key)), JSONField("name", .string(e.name)),
                 JSONField("version", .string(e.version)), JSONField("bytes", .int(e.bytes))])
    }

    /// The journal's lines, in order, over the entries. A line is a whole
    /// entry, so replaying a journal twice (a pass killed between writing
    /// the manifest and removing the journal) gives the same manifest. A
    /// last line without its newline is a write a kill cut short: its file
    /// was never renamed into the folder, so it is left out.
    mutating func replayJournal(_ journal: String) throws(SyncError) {
        guard access(journal, F_OK) == 0 else { return }
        let bytes: [UInt8]
        do {
            bytes = try readFileBytes(journal, limit: 256 << 20)
        } catch {
            throw SyncError(.local, "cannot read the manifest's journal \(journal): \(errnoDescription(error.errno))")
        }
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        lines.removeLast()  // what follows the last newline: empty, or a line cut short
        for line in lines where !line.isEmpty {
            guard let file = JSONValue.parse(String(decoding: line, as: UTF8.self)),
                  let key = file["key"]?.stringValue, let name = file["name"]?.stringValue,
                  let version = file["version"]?.stringValue, let bytes = file["bytes"]?.intValue,
                  SyncFolder.isPlainName(name) else {
                throw SyncError(.local, "\(journal) has a line that is not a file of the folder; move it and the manifest away to start again "
                                + "(the files they listed are then left alone)")
            }
            entries[key] = Entry(key: key, name: name, version: version, bytes: bytes)
        }
    }

    /// Adds `entry` to the journal of the manifest at `path`, durably (it
    /// is on the disk when this returns): called before the entry's file is
    /// renamed into the folder, so that a file the sync put there is never
    /// one it does not know, even after a power cut.
    public mutating func record(_ entry: Entry, _ path: String) throws(SyncError) {
        entries[entry.key] = entry
        let journal = Self.journalPath(path)
        let line = Array((Self.json(entry).encoded + "\n").utf8)
        // The sync's own record (which server file became which picture): its user's alone.
        let fd = open(journal, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            let e = errno
            throw SyncError(e == ENOSPC ? .diskFull : .local, "cannot write the manifest's journal \(journal): \(errnoDescription(e))")
        }
        defer { close(fd) }
        var offset = 0
        while offset < line.count {
            let n = line.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                let e = errno
                throw SyncError(e == ENOSPC ? .diskFull : .local, "cannot write the manifest's journal \(journal): \(errnoDescription(e))")
            }
            offset += n
        }
        if fdatasync(fd) != 0 {
            let e = errno
            throw SyncError(e == ENOSPC ? .diskFull : .local, "cannot write the manifest's journal \(journal): \(errnoDescription(e))")
        }
    }

    /// Writes the manifest whole or not at all, then removes its journal
    /// (which it now holds: a kill in between leaves a journal that replays
    /// to the same entries).
    public func save(_ path: String) throws(SyncError) {
        let files = entries.values.sorted { $0.name < $1.name }.map(Self.json)
        let text = JSONValue.fields([JSONField("manifest", 1), JSONField("folder", .string(folder)),
                                     JSONField("files", .array(files))]).encoded + "\n"
        do {
            try IniRewriter.writeAtomically(path: path, text: text, mode: 0o600)
        } catch {
            throw SyncError(.local, "cannot write the manifest: \(error)")
        }
        let journal = Self.journalPath(path)
        if unlink(journal) != 0, errno != ENOENT {
            throw SyncError(.local, "cannot remove the manifest's journal \(journal): \(errnoDescription(errno))")
        }
    }
}
