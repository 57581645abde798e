#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A modification time as the kernel keeps it: seconds and nanoseconds since
/// the epoch. Nanoseconds matter: a file replaced twice within one second
/// differs only there.
public struct FileTime: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var seconds: Int64
    /// 0 ..< 1_000_000_000.
    public var nanoseconds: Int32

    public init(seconds: Int64, nanoseconds: Int32) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    public static func < (lhs: FileTime, rhs: FileTime) -> Bool {
        (lhs.seconds, lhs.nanoseconds) < (rhs.seconds, rhs.nanoseconds)
    }

    public var description: String {
        let fraction = String(nanoseconds)
        return "\(seconds).\(String(repeating: "0", count: 9 - fraction.count))\(fraction)"
    }
}

/// One image file of the album, as `stat` saw it when the album was built.
public struct AlbumEntry: Hashable, Sendable, CustomStringConvertible {
    /// The path to open: the folder joined with `name`, or a path from
    /// `[images] files` as written.
    public var path: String
    /// The path relative to the image folder: the file name, or with
    /// `recursive` the subfolders too (`2024/a.jpg`); for `[images] files`,
    /// the last path component.
    public var name: String
    /// Size in bytes.
    public var size: Int64
    public var mtime: FileTime
    /// Device and inode of the file (of the target, for a symbolic link):
    /// a file replaced by rename keeps its path but gets a new inode, which is
    /// how a replacement with the same size and mtime is still noticed.
    public var device: UInt64
    public var inode: UInt64

    public init(path: String, name: String, size: Int64, mtime: FileTime, device: UInt64, inode: UInt64) {
        self.path = path
        self.name = name
        self.size = size
        self.mtime = mtime
        self.device = device
        self.inode = inode
    }

    init(path: String, name: String, status: stat) {
        self.init(
            path: path, name: name, size: Int64(status.st_size),
            mtime: FileTime(seconds: Int64(status.st_mtim.tv_sec), nanoseconds: Int32(status.st_mtim.tv_nsec)),
            device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    /// Whether `other` is the same path with different contents (another
    /// inode, size or mtime): a cache holding this file's pixels must drop them.
    public func isReplaced(by other: AlbumEntry) -> Bool {
        path == other.path
            && (device != other.device || inode != other.inode || size != other.size || mtime != other.mtime)
    }

    public var description: String { path }
}
