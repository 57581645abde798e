import Foundation
import Testing
@testable import CarouselAlbum

/// A fresh folder under the system's temporary directory, removed with
/// everything in it when the value goes away.
final class ScratchFolder {
    let path: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/carousel-album-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        path = String(cString: made)
    }

    deinit {
        // A test may have taken permissions away; give them back so that the
        // folder can be removed.
        chmod(path, 0o755)
        try? FileManager.default.removeItem(atPath: path)
    }

    func url(_ name: String) -> String { path + "/" + name }

    /// Writes `bytes` to `name` (creating folders on the way) and returns its path.
    @discardableResult
    func write(_ name: String, bytes: Int = 0, mtime: Int64? = nil) throws -> String {
        let file = url(name)
        let parent = (file as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        if bytes > 0 {
            let data = [UInt8](repeating: 0xAB, count: bytes)
            _ = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, bytes) }
        }
        Glibc.close(fd)
        if let mtime { try setMTime(name, seconds: mtime) }
        return file
    }

    func mkdir(_ name: String) throws {
        try FileManager.default.createDirectory(atPath: url(name), withIntermediateDirectories: true)
    }

    func symlink(_ name: String, to target: String) throws {
        guard Glibc.symlink(target, url(name)) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    func setMTime(_ name: String, seconds: Int64, nanoseconds: Int = 0) throws {
        var times = [timespec(tv_sec: Int(seconds), tv_nsec: nanoseconds), timespec(tv_sec: Int(seconds), tv_nsec: nanoseconds)]
        guard utimensat(AT_FDCWD, url(name), &times, 0) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    func fileStatus(_ name: String) -> stat {
        var status = stat()
        _ = stat(url(name), &status)
        return status
    }
}

/// Whether the tests run as root, who can read any file whatever its mode.
let runningAsRoot = geteuid() == 0

extension FolderWatcher.Change {
    mutating func merge(_ other: Self) {
        appeared.formUnion(other.appeared)
        removed.formUnion(other.removed)
        modified.formUnion(other.modified)
        overflowed = overflowed || other.overflowed
        folderAttributesChanged = folderAttributesChanged || other.folderAttributesChanged
        folderVanished = folderVanished || other.folderVanished
        folderReplaced = folderReplaced || other.folderReplaced
        subfoldersChanged = subfoldersChanged || other.subfoldersChanged
    }
}

/// Waits on the watcher's descriptor, as the daemon's epoll would, and drains
/// it until `done` holds for everything drained so far or `timeout` passes.
/// Returns everything drained. The timeout only bounds a failing test; a
/// passing one returns as soon as the events are there.
func collect(
    _ watcher: FolderWatcher, timeout: Duration = .seconds(10),
    until done: (FolderWatcher.Change) -> Bool
) throws -> FolderWatcher.Change {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    var total = FolderWatcher.Change()
    total.merge(try watcher.drain())
    while !done(total) {
        let left = clock.now.duration(to: deadline)
        if left <= .zero { break }
        var entry = pollfd(fd: watcher.fileDescriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000, 1000))
        _ = poll(&entry, 1, max(milliseconds, 1))
        total.merge(try watcher.drain())
    }
    return total
}

/// Whether the watcher's descriptor becomes readable within `timeout`.
func becomesReadable(_ watcher: FolderWatcher, timeout milliseconds: Int32) -> Bool {
    var entry = pollfd(fd: watcher.fileDescriptor, events: Int16(POLLIN), revents: 0)
    while true {
        let result = poll(&entry, 1, milliseconds)
        if result < 0 && errno == EINTR { continue }
        return result > 0
    }
}

func fakeEntry(_ path: String, inode: UInt64 = 1, size: Int64 = 100, mtime: Int64 = 1_000) -> AlbumEntry {
    AlbumEntry(path: path, name: String(path.split(separator: "/").last ?? ""), size: size,
               mtime: FileTime(seconds: mtime, nanoseconds: 0), device: 1, inode: inode)
}
