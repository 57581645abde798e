import CarouselConfig
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// What the sync wrote into the folder, kept in its state directory: the
/// only files it will ever replace or delete. A user's own pictures in the
/// same folder are never in it, so never touched.
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
        return manifest
    }

    /// Writes the manifest whole or not at all.
    public func save(_ path: String) throws(SyncError) {
        let files = entries.values.sorted { $0.name < $1.name }.map { e -> JSONValue in
            .fields([JSONField("key", .string(e.key)), JSONField("name", .string(e.name)),
                     JSONField("version", .string(e.version)), JSONField("bytes", .int(e.bytes))])
        }
        let text = JSONValue.fields([JSONField("manifest", 1), JSONField("folder", .string(folder)),
                                     JSONField("files", .array(files))]).encoded + "\n"
        do {
            try IniRewriter.writeAtomically(path: path, text: text, mode: 0o644)
        } catch {
            throw SyncError(.local, "cannot write the manifest: \(error)")
        }
    }
}
