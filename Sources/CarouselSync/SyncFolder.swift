import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// The folder the sync fills, which the daemon watches: a file appears
/// whole or not at all (written under a temporary name the album ignores,
/// synced, renamed), and only the sync's own files are ever replaced or
/// removed.
public struct SyncFolder: Sendable {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// The temporary name a file is written under: the album ignores `.part`
    /// files, and a dot in front keeps it out of listings.
    public static func partName(_ name: String) -> String { "." + name + ".part" }

    /// A name that stays in the folder: no slash, not `.`/`..`, no control characters.
    public static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && name.utf8.count <= 255
            && !name.unicodeScalars.contains { $0.value < 0x20 }
    }

    /// The longest name a file of the folder may have: its temporary name
    /// (`.NAME.part`) within NAME_MAX (255 bytes on ext4, vfat, exfat) and
    /// its path within PATH_MAX (4096 with the final NUL).
    public var longestName: Int { min(255, 4095 - path.utf8.count - 1) - 6 }

    /// Whether `name` (its temporary name too) fits the file system here.
    public func fits(_ name: String) -> Bool { name.utf8.count <= longestName }

    /// `name`, or a shorter name when it does not fit: the start of its
    /// stem (cut between characters, so still UTF-8), a hash of the whole
    /// name (two long names sharing a start stay two files), and its
    /// extension (the album and the decoders go by it).
    public func fittedName(_ name: String) -> String {
        guard !fits(name), longestName >= 40 else { return name }
        var stem = name[...]
        var ext = ""
        if let dot = name.lastIndex(of: "."), dot != name.startIndex, name.utf8.distance(from: dot, to: name.endIndex) <= 11 {
            ext = String(name[dot...])
            stem = name[..<dot]
        }
        let budget = longestName - 1 - 16 - ext.utf8.count
        var kept = String.UnicodeScalarView()
        var bytes = 0
        for scalar in stem.unicodeScalars {
            let n = String(scalar).utf8.count
            if bytes + n > budget { break }
            kept.append(scalar)
            bytes += n
        }
        return String(kept) + "_" + Self.hash(name) + ext
    }

    /// FNV-1a of `text`, 16 hex digits: stable across runs and machines.
    public static func hash(_ text: String) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let hex = String(h, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    public func exists(_ name: String) -> Bool { access(path + "/" + name, F_OK) == 0 }

    /// Creates the folder (and its parents) when missing.
    public func create() throws(SyncError) {
        var built = ""
        for part in path.split(separator: "/") {
            built += "/" + part
            if mkdir(built, 0o755) != 0, errno != EEXIST {
                throw SyncError(.local, "cannot create \(built): \(errnoDescription(errno))")
            }
        }
    }

    /// Writes `name` through `fill` (which writes the bytes into the
    /// descriptor and returns how many): to the temporary name, fsync,
    /// rename, fsync of the folder. Anything thrown leaves no trace but
    /// the temporary file's removal.
    public func write(_ name: String, fill: (Int32) throws(SyncError) -> Int,
                      beforeRename: (Int) throws(SyncError) -> Void = { _ throws(SyncError) in }) throws(SyncError) -> Int {
        precondition(Self.isPlainName(name))
        let part = path + "/" + Self.partName(name)
        let fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else {
            let e = errno
            // A name this file system cannot hold fails this item only.
            let kind: SyncError.Kind = e == ENOSPC ? .diskFull : e == ENAMETOOLONG ? .server : .local
            throw SyncError(kind, "cannot create \(part): \(errnoDescription(e))")
        }
        var closed = false
        defer {
            if !closed { close(fd) }
        }
        let bytes: Int
        do throws(SyncError) {
            bytes = try fill(fd)
            if fsync(fd) != 0 {
                let e = errno
                throw SyncError(e == ENOSPC ? .diskFull : .local, "cannot write \(part): \(errnoDescription(e))")
            }
            closed = true
            if close(fd) != 0 {
                let e = errno
                throw SyncError(e == ENOSPC ? .diskFull : .local, "cannot write \(part): \(errnoDescription(e))")
            }
            try beforeRename(bytes)
            if rename(part, path + "/" + name) != 0 {
                throw SyncError(.local, "cannot rename \(part): \(errnoDescription(errno))")
            }
        } catch {
            unlink(part)
            throw error
        }
        syncDirectory()
        return bytes
    }

    /// Removes one of the sync's own files (the caller checked the manifest).
    public func remove(_ name: String) {
        precondition(Self.isPlainName(name))
        if unlink(path + "/" + name) != 0, errno != ENOENT {
            log(.warning, "sync: cannot remove \(path)/\(name): \(errnoDescription(errno))")
        }
    }

    /// Temporary files a killed pass left behind, for the names the sync
    /// writes (`names`): a user's own `.something.part` is not touched.
    public func removeLeftovers(of names: Set<String>) {
        guard let dir = opendir(path) else { return }
        defer { closedir(dir) }
        var found: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix("."), name.hasSuffix(".part"), names.contains(String(name.dropFirst().dropLast(5))) {
                found.append(name)
            }
        }
        for name in found { unlink(path + "/" + name) }
    }

    private func syncDirectory() {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}
