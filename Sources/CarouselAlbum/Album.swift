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
    public static func scan(folder: String, order: Order, recursive: Bool = false) throws(AlbumError) -> [AlbumEntry] {
        try scanListing(folder: folder, order: order, recursive: recursive).entries
    }

    /// How far `recursive` goes: folders nested deeper than this below the
    /// image folder are not entered.
    public static let maxDepth = 16
    /// How many subfolders `recursive` enters at most (each costs an inotify
    /// watch, and the system's watches are shared by every program of the user).
    public static let maxSubfolders = 2000

    /// The images in `folder`, sorted by `order`, and the image-named files
    /// that had to be left out, one `AlbumError` (one log line) each.
    ///
    /// An image is a regular file, or a symbolic link to one, whose name ends
    /// in one of `ImageFormat.fileExtensions` (`.jpg`, `.png`, `.webp`, `.gif`,
    /// `.heic`, `.avif`...) in any case and is not hidden
    /// (`.name`) or a temporary file (`name~`, `#name#`, `.part`, `.tmp`, `.swp`).
    ///
    /// Subfolders are entered only when `recursive`; their pictures' names are
    /// their paths relative to `folder` (`2024/summer/a.jpg`), and all pictures
    /// are sorted together by those names, folder by folder. Hidden subfolders
    /// (`.thumbnails`, `.git`) are left out like hidden files. A symbolic link to
    /// a folder is entered (a linked-in USB stick or shared folder is part of
    /// the album), but every folder at most once, by device and inode: a link
    /// back up the tree (a loop) or a second link to the same folder adds
    /// nothing. At most `maxDepth` levels and `maxSubfolders` subfolders, the
    /// shallowest first; past a bound the listing has one `skipped` line for it.
    ///
    /// Each name is checked before anything else and each remaining file is
    /// `fstatat`-ed exactly once, relative to the open folder.
    ///
    /// - Throws: `AlbumError` with subject `.folder` when the folder does not
    ///   exist, is not a directory or cannot be read or searched. A subfolder
    ///   that cannot be read is one `skipped` line.
    public static func scanListing(folder: String, order: Order, recursive: Bool = false) throws(AlbumError) -> AlbumListing {
        var entries: [AlbumEntry] = []
        var fileSkips: [AlbumError] = []
        var folderSkips: [AlbumError] = []
        let root = folder.hasSuffix("/") ? folder : folder + "/"
        try walk(folder: folder, recursive: recursive, skipped: &folderSkips) { directory, relative throws(AlbumError) in
            try listImages(directory, root: root, relative: relative, into: &entries, skipped: &fileSkips)
        }
        return AlbumListing(entries: sorted(entries, by: order), skipped: fileSkips + folderSkips)
    }

    /// The subfolders `scanListing(folder:recursive: true)` enters, as paths
    /// relative to `folder`, shallowest first: what `FolderWatcher` watches.
    /// Failures to read a subfolder, and the bounds, are the scan's to report.
    public static func subfolders(of folder: String) throws(AlbumError) -> [String] {
        var folders: [String] = []
        var skipped: [AlbumError] = []
        try walk(folder: folder, recursive: true, skipped: &skipped) { _, relative in
            if !relative.isEmpty { folders.append(relative) }
        }
        return folders
    }

    /// Opens `folder` and, when `recursive`, its subfolders breadth-first
    /// (each level in natural order, so the bounds cut the same folders every
    /// time), calling `visit` with each open folder and its path relative to
    /// `folder` ("" for `folder` itself) and collecting subfolders from it.
    private static func walk(
        folder: String, recursive: Bool, skipped: inout [AlbumError],
        visit: (borrowing DirectoryStream, String) throws(AlbumError) -> Void
    ) throws(AlbumError) {
        let root = folder.hasSuffix("/") ? folder : folder + "/"
        var queue: [(relative: String, depth: Int)] = [("", 0)]
        var seen = Set<FolderIdentity>()
        var entered = 0
        var depthReported = false
        var countReported = false
        var next = 0
        while next < queue.count {
            let (relative, depth) = queue[next]
            next += 1
            let path = relative.isEmpty ? folder : root + relative
            let directory: DirectoryStream
            do {
                directory = try DirectoryStream(path: path)
            } catch {
                // The image folder itself must be there; a subfolder may fail alone.
                if relative.isEmpty { throw AlbumError(path: folder, subject: .folder, failure: error) }
                skipped.append(AlbumError(path: path, subject: .folderEntry, failure: error))
                continue
            }
            var status = stat()
            guard fstat(directory.fileDescriptor, &status) == 0,
                  seen.insert(FolderIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))).inserted
            else { continue }
            do {
                try visit(directory, relative)
            } catch {
                // A subfolder that is readable but not searchable: the others are shown.
                if relative.isEmpty { throw error }
                skipped.append(error)
            }
            guard recursive else { continue }
            // Read again for the subfolders: `visit` consumed the stream.
            let names = try subfolderNames(path, relative: relative, skipped: &skipped)
            guard !names.isEmpty else { continue }
            if depth + 1 > maxDepth {
                if !depthReported {
                    depthReported = true
                    skipped.append(AlbumError(path: root + relative + "/" + names[0], subject: .folderEntry,
                                              reason: .tooDeep(limit: maxDepth)))
                }
                continue
            }
            for name in names {
                guard entered < maxSubfolders else {
                    // One line; the folders queued so far are still listed.
                    if !countReported {
                        countReported = true
                        skipped.append(AlbumError(path: root + (relative.isEmpty ? "" : relative + "/") + name,
                                                  subject: .folderEntry, reason: .tooManyFolders(limit: maxSubfolders)))
                    }
                    break
                }
                entered += 1
                queue.append((relative.isEmpty ? name : relative + "/" + name, depth + 1))
            }
        }
    }

    private struct FolderIdentity: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    /// The names of `path`'s subfolders (and symbolic links to folders), not
    /// hidden, in natural order.
    private static func subfolderNames(_ path: String, relative: String, skipped: inout [AlbumError]) throws(AlbumError) -> [String] {
        let directory: DirectoryStream
        do {
            directory = try DirectoryStream(path: path)
        } catch {
            skipped.append(AlbumError(path: path, subject: .folderEntry, failure: error))
            return []
        }
        let folderDescriptor = directory.fileDescriptor
        var names: [String] = []
        while true {
            let next: UnsafeMutablePointer<dirent>?
            do {
                next = try directory.next()
            } catch {
                // The image folder must be readable; a subfolder (an I/O error on
                // a failing stick) is one line, and the rest of the tree is shown.
                if relative.isEmpty { throw AlbumError(path: path, subject: .folder, failure: error) }
                skipped.append(AlbumError(path: path, subject: .folderEntry, failure: error))
                break
            }
            guard let entry = next else { break }
            let type = Int(entry.pointee.d_type)
            guard type == Int(DT_DIR) || type == Int(DT_LNK) || type == Int(DT_UNKNOWN) else { continue }
            let name: String? = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                let cName = raw.bindMemory(to: CChar.self).baseAddress!
                let bytes = UnsafeBufferPointer(start: raw.bindMemory(to: UInt8.self).baseAddress!, count: strlen(cName))
                // Hidden folders (and `.`, `..`) are not the album's.
                guard let first = bytes.first, first != UInt8(ascii: ".") else { return nil }
                if type != Int(DT_DIR) {
                    var status = stat()
                    // Flags 0: a symbolic link to a folder is a folder.
                    guard fstatat(folderDescriptor, cName, &status, 0) == 0,
                          status.st_mode & S_IFMT == S_IFDIR else { return nil }
                }
                // A folder whose name is not UTF-8 cannot be carried in a path; left out.
                return String(validating: bytes, as: UTF8.self)
            }
            if let name { names.append(name) }
        }
        return names.map { NaturalSortKey($0) }.sorted().map(\.name)
    }

    /// The images directly in the open folder `directory`, `relative` to the
    /// image folder `root`.
    private static func listImages(
        _ directory: borrowing DirectoryStream, root: String, relative: String,
        into entries: inout [AlbumEntry], skipped: inout [AlbumError]
    ) throws(AlbumError) {
        let folderDescriptor = directory.fileDescriptor
        let folder = relative.isEmpty ? String(root.dropLast()) : root + relative
        let prefix = relative.isEmpty ? "" : relative + "/"
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
                guard let fileName = String(validating: bytes, as: UTF8.self) else {
                    return .skipped(AlbumError(path: root + prefix + String(decoding: bytes, as: UTF8.self),
                                               subject: .folderEntry, reason: .nameNotUTF8))
                }
                let name = prefix + fileName
                let path = root + name
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
                        throw AlbumError(path: folder, subject: relative.isEmpty ? .folder : .folderEntry,
                                         reason: .permissionDenied)
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
        let keys = entries.map { PathSortKey($0.name) }
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

/// The natural order of relative paths, folder by folder: `a/z.jpg` before
/// `a b.jpg` would be a quirk of where `/` sorts among characters, so each
/// component is compared in natural order, and a folder's pictures stay
/// together. A name without `/` compares exactly as `NaturalSortKey`.
struct PathSortKey: Comparable {
    let components: [NaturalSortKey]

    init(_ path: String) {
        components = path.split(separator: "/", omittingEmptySubsequences: true).map { NaturalSortKey(String($0)) }
    }

    static func < (lhs: PathSortKey, rhs: PathSortKey) -> Bool {
        lhs.components.lexicographicallyPrecedes(rhs.components)
    }

    static func == (lhs: PathSortKey, rhs: PathSortKey) -> Bool {
        !(lhs < rhs) && !(rhs < lhs)
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
