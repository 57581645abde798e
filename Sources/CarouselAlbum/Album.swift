import CarouselPlatform
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The image files to show: those of a folder (`[images] path`) or an explicit
/// list (`[images] files`).
public enum Album {
    /// `[images] order`.
    public enum Order: Sendable, Hashable {
        /// Natural order of the file names (`NaturalOrder`).
        case name
        /// Oldest modification time first; equal times in name order.
        case mtime
        /// A shuffle fixed by `seed`: the same seed and the same files give the
        /// same order, after a restart too.
        ///
        /// Each file's place comes from a hash of its name and the seed rather
        /// than from shuffling the list, so a file added to or removed from the
        /// folder does not reshuffle the others: the viewer keeps the sequence
        /// they were following.
        case random(seed: UInt64)
    }

    /// The images in `folder`, sorted by `order`. Files that should be images
    /// but cannot be listed (a dangling symbolic link, a name that is not
    /// UTF-8) are left out silently; `scanListing` reports them.
    public static func scan(folder: String, order: Order) throws(AlbumError) -> [AlbumEntry] {
        try scanListing(folder: folder, order: order).entries
    }

    /// The images in `folder`, sorted by `order`, and the image-named files
    /// that had to be left out, one `AlbumError` (one log line) each.
    ///
    /// An image is a regular file, or a symbolic link to one, whose name ends
    /// in `.jpg`, `.jpeg`, `.png` or `.webp` in any case and is not hidden
    /// (`.name`) or a temporary file (`name~`, `#name#`, `.part`, `.tmp`, `.swp`).
    /// Subfolders are not entered.
    ///
    /// Each name is checked before anything else and each remaining file is
    /// `fstatat`-ed exactly once, relative to the open folder.
    ///
    /// - Throws: `AlbumError` with subject `.folder` when the folder does not
    ///   exist, is not a directory or cannot be read or searched.
    public static func scanListing(folder: String, order: Order) throws(AlbumError) -> AlbumListing {
        let directory = try openFolder(folder)
        let folderDescriptor = directory.fileDescriptor
        let prefix = folder.hasSuffix("/") ? folder : folder + "/"
        var entries: [AlbumEntry] = []
        var skipped: [AlbumError] = []
        while true {
            let next: UnsafeMutablePointer<dirent>?
            do {
                next = try directory.next()
            } catch {
                throw AlbumError(path: folder, subject: .folder, failure: error)
            }
            guard let entry = next else { break }
            let type = entry.pointee.d_type
            // Filesystems that fill in d_type spare us a stat for subfolders;
            // others say DT_UNKNOWN and are sorted out by the stat below.
            if Int(type) == Int(DT_DIR) { continue }
            let outcome = try withUnsafeBytes(of: &entry.pointee.d_name) { raw throws(AlbumError) -> ScanOutcome in
                let cName = raw.bindMemory(to: CChar.self).baseAddress!
                let bytes = UnsafeBufferPointer(start: raw.bindMemory(to: UInt8.self).baseAddress!, count: strlen(cName))
                guard ImageName.isCandidate(bytes) else { return .ignored }
                guard let name = String(validating: bytes, as: UTF8.self) else {
                    return .skipped(AlbumError(path: prefix + String(decoding: bytes, as: UTF8.self),
                                               subject: .folderEntry, reason: .nameNotUTF8))
                }
                let path = prefix + name
                var status = stat()
                do throws(SystemCallError) {
                    // Flags 0: follow symbolic links, a link to a photo is a photo.
                    try systemCall("fstatat") { fstatat(folderDescriptor, cName, &status, 0) }
                } catch {
                    switch error.errno {
                    case ENOENT where Int(type) == Int(DT_LNK):
                        return .skipped(AlbumError(path: path, subject: .folderEntry, reason: .danglingSymlink))
                    case ENOENT:
                        // Removed since readdir saw it; the watcher reports that.
                        return .ignored
                    case EACCES:
                        // The folder is readable but not searchable (r-- without x):
                        // every file would fail the same way.
                        throw AlbumError(path: folder, subject: .folder, reason: .permissionDenied)
                    default:
                        return .skipped(AlbumError(path: path, subject: .folderEntry, failure: error))
                    }
                }
                switch status.st_mode & S_IFMT {
                case S_IFREG:
                    return .image(AlbumEntry(path: path, name: name, status: status))
                case S_IFDIR:
                    return .ignored
                default:
                    return .skipped(AlbumError(path: path, subject: .folderEntry, reason: .notARegularFile))
                }
            }
            switch outcome {
            case .ignored: break
            case let .image(entry): entries.append(entry)
            case let .skipped(error): skipped.append(error)
            }
        }
        return AlbumListing(entries: sorted(entries, by: order), skipped: skipped)
    }

    private static func openFolder(_ folder: String) throws(AlbumError) -> DirectoryStream {
        do {
            return try DirectoryStream(path: folder)
        } catch {
            throw AlbumError(path: folder, subject: .folder, failure: error)
        }
    }

    private enum ScanOutcome {
        case ignored
        case image(AlbumEntry)
        case skipped(AlbumError)
    }

    /// The files of `[images] files`, in the order given, each `stat`-ed once
    /// (following symbolic links). A file that is missing, unreadable or not a
    /// regular file is reported in `skipped` and the others are kept.
    ///
    /// Names are not filtered by extension: the user chose these files, and
    /// the decoder recognises formats by their content anyway. A path listed
    /// twice is shown twice.
    public static func explicit(files: [String]) -> AlbumListing {
        var entries: [AlbumEntry] = []
        var skipped: [AlbumError] = []
        for path in files {
            var status = stat()
            do {
                try systemCall("stat") { stat(path, &status) }
            } catch {
                var link = stat()
                if error.errno == ENOENT, (try? systemCall("lstat") { lstat(path, &link) }) != nil {
                    skipped.append(AlbumError(path: path, subject: .listedFile, reason: .danglingSymlink))
                } else {
                    skipped.append(AlbumError(path: path, subject: .listedFile, failure: error))
                }
                continue
            }
            guard status.st_mode & S_IFMT == S_IFREG else {
                skipped.append(AlbumError(path: path, subject: .listedFile, reason: .notARegularFile))
                continue
            }
            let name = path.split(separator: "/").last.map(String.init) ?? path
            entries.append(AlbumEntry(path: path, name: name, status: status))
        }
        return AlbumListing(entries: entries, skipped: skipped)
    }

    /// `entries` in `order`. Every order ends in the natural order of the
    /// names, which is total, so the result does not depend on the order the
    /// entries came in (readdir's order is the filesystem's hash order).
    public static func sorted(_ entries: [AlbumEntry], by order: Order) -> [AlbumEntry] {
        // Each name is analysed once, not once per comparison; and the sort
        // moves plain indices, because moving entries (two strings each) and
        // keys costs reference counting on every move.
        let keys = entries.map { NaturalSortKey($0.name) }
        var indices = Array(entries.indices)
        switch order {
        case .name:
            indices.sort { keys[$0] < keys[$1] }
        case .mtime:
            let times = entries.map(\.mtime)
            indices.sort { times[$0] != times[$1] ? times[$0] < times[$1] : keys[$0] < keys[$1] }
        case let .random(seed):
            let mixedSeed = splitMix64(seed)
            let ranks = entries.map { splitMix64(fnv1a64($0.name) ^ mixedSeed) }
            indices.sort { ranks[$0] != ranks[$1] ? ranks[$0] < ranks[$1] : keys[$0] < keys[$1] }
        }
        return indices.map { entries[$0] }
    }

    /// Whether a file of this name in the image folder would be shown (before
    /// looking at what the file is): the rule `scan` and `FolderWatcher` share.
    public static func isImageName(_ name: String) -> Bool {
        ImageName.isCandidate(name)
    }
}

/// The result of listing images: what to show, and what was left out.
public struct AlbumListing: Sendable, Equatable {
    public var entries: [AlbumEntry]
    /// Image files that could not be taken, one log line each.
    public var skipped: [AlbumError]

    public init(entries: [AlbumEntry], skipped: [AlbumError]) {
        self.entries = entries
        self.skipped = skipped
    }
}

/// FNV-1a over the UTF-8 bytes: a fixed, documented hash (Swift's `Hasher` is
/// seeded per process, which would break reproducible shuffles).
func fnv1a64(_ text: String) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 {
        hash ^= UInt64(byte)
        hash = hash &* 0x0000_0100_0000_01b3
    }
    return hash
}

/// SplitMix64's finaliser: spreads every input bit over the output, so that
/// nearby seeds and similar names give unrelated ranks.
func splitMix64(_ value: UInt64) -> UInt64 {
    var z = value &+ 0x9e37_79b9_7f4a_7c15
    z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
    z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
    return z ^ (z >> 31)
}
