import CarouselPlatform
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An inotify watch on the image folder; owns the inotify descriptor and
/// closes it exactly once (`close()` or deinit, whichever comes first).
///
/// The daemon puts `fileDescriptor` in its epoll set and calls `drain()` when
/// it is readable; when the change `needsRescan`, it scans the folder again
/// and reconciles (`AlbumDiff`). Events only say *that* something happened;
/// the scan says what the folder now holds, so lost or coalesced events never
/// leave the album wrong.
///
/// A file counts as having appeared when a writer closes it after writing
/// (`IN_CLOSE_WRITE`) or when it is renamed into the folder (`IN_MOVED_TO`),
/// not when it is created: a program copying a photo creates the file first
/// and fills it afterwards, and a scan at `IN_CREATE` would hand a half-written
/// file to the decoder, which would log it as truncated and skip it. Writers
/// that write elsewhere and rename into the folder (rsync, most sync tools,
/// `mv`) are noticed once, complete. `IN_CREATE` does count for symbolic links
/// and for hard links to existing files (`ln`), which have no write phase.
///
/// - FIXME: a file linked in with `O_TMPFILE` + `linkat` produces only
///   `IN_CREATE` and a link count of 1, so it is taken for a file still being
///   written; it appears at the folder's next change.
/// - FIXME: after `folderVanished` the kernel has dropped the watch and this
///   object hears nothing more; the daemon has to create a new watcher when the
///   folder is back (for example by retrying on a timer). Watching the parent
///   folder for its re-creation is not done here.
public final class FolderWatcher {
    /// What happened in the folder since the last `drain()`, restricted to
    /// names that `scan` would show (hidden and temporary files, other
    /// extensions and subfolders are left out).
    public struct Change: Sendable, Equatable {
        /// Names written and closed, moved in, or linked in.
        public var appeared: Set<String> = []
        /// Names deleted or moved out.
        public var removed: Set<String> = []
        /// Names whose metadata changed (`touch`, `chmod`): their mtime or
        /// readability may be different now.
        public var modified: Set<String> = []
        /// The kernel's event queue overflowed (`IN_Q_OVERFLOW`) and events
        /// were lost: rescan everything.
        public var overflowed = false
        /// The folder's own metadata changed (`chmod`, `chown`): whether it can
        /// still be read may have changed.
        public var folderAttributesChanged = false
        /// The folder itself was deleted, moved away or unmounted; the watch is
        /// gone and no further events will come.
        public var folderVanished = false

        public init() {}

        /// Whether the album may differ from the last scan.
        public var needsRescan: Bool {
            !appeared.isEmpty || !removed.isEmpty || !modified.isEmpty
                || overflowed || folderAttributesChanged || folderVanished
        }

        /// Nothing relevant happened.
        public var isEmpty: Bool { !needsRescan }
    }

    /// The folder being watched, as given.
    public let folder: String
    private var descriptor: Int32
    private let buffer: UnsafeMutableRawPointer

    /// Room for many events per read; a single one needs at most
    /// sizeof(struct inotify_event) + NAME_MAX + 1 bytes.
    private static let bufferSize = 32 * 1024
    /// Reads per `drain()` at most. A folder under a constant stream of writes
    /// must not keep the event loop here: what is left keeps the descriptor
    /// readable and epoll reports it again after the other sources had a turn.
    private static let maxReadsPerDrain = 16

    private static let mask: UInt32 = UInt32(IN_CREATE) | UInt32(IN_DELETE) | UInt32(IN_MOVED_TO)
        | UInt32(IN_MOVED_FROM) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_ATTRIB) | UInt32(IN_DELETE_SELF)
        | UInt32(IN_MOVE_SELF)
        // Fail with ENOTDIR on a file instead of watching it.
        | UInt32(IN_ONLYDIR)
        // No events for files already unlinked from the folder (a deleted file
        // a program still has open and closes later): they are not in it.
        | UInt32(IN_EXCL_UNLINK)

    /// Starts watching `folder` (following a symbolic link to it). The
    /// descriptor is non-blocking and close-on-exec.
    ///
    /// The corresponding C functions are `inotify_init1` and `inotify_add_watch`.
    ///
    /// - Throws: `AlbumError` with subject `.folder`: the folder is missing, not
    ///   a directory or not readable, or the system's inotify limits are reached
    ///   (the error's hint names the sysctl to raise).
    public init(folder: String) throws(AlbumError) {
        let fd: Int32
        do {
            fd = try systemCall("inotify_init1") { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }
        } catch {
            throw AlbumError(path: folder, subject: .folder, failure: error)
        }
        do {
            try systemCall("inotify_add_watch") { inotify_add_watch(fd, folder, Self.mask) }
        } catch {
            closeDescriptor(fd)
            throw AlbumError(path: folder, subject: .folder, failure: error)
        }
        self.folder = folder
        self.descriptor = fd
        self.buffer = UnsafeMutableRawPointer.allocate(
            byteCount: Self.bufferSize, alignment: MemoryLayout<inotify_event>.alignment)
    }

    deinit {
        close()
        buffer.deallocate()
    }

    /// The inotify descriptor, to wait on for readability (epoll, poll); -1
    /// after `close()`. Still owned by this object: do not close it.
    public var fileDescriptor: Int32 { descriptor }

    /// Stops watching and closes the descriptor; later calls do nothing.
    /// Remove the descriptor from any epoll set first.
    public func close() {
        guard descriptor >= 0 else { return }
        closeDescriptor(descriptor)
        descriptor = -1
    }

    /// Reads every queued event without blocking and sums them up. Returns an
    /// empty change when nothing relevant happened (or after `close()`).
    ///
    /// The corresponding C function is `read` on the inotify descriptor.
    public func drain() throws(AlbumError) -> Change {
        var change = Change()
        guard descriptor >= 0 else { return change }
        for _ in 0..<Self.maxReadsPerDrain {
            let count: Int?
            do {
                count = try attemptSystemCall("read") { read(descriptor, buffer, Self.bufferSize) }
            } catch {
                throw AlbumError(path: folder, subject: .folder, failure: error)
            }
            // nil: EAGAIN, the queue is empty.
            guard let count, count > 0 else { break }
            parse(UnsafeRawBufferPointer(start: buffer, count: count), into: &change)
        }
        return change
    }

    private func parse(_ events: UnsafeRawBufferPointer, into change: inout Change) {
        let header = MemoryLayout<inotify_event>.size
        var offset = 0
        while offset + header <= events.count {
            // struct inotify_event { int wd; uint32_t mask; uint32_t cookie; uint32_t len; char name[]; }
            let mask = events.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let length = Int(events.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            let nameStart = offset + header
            offset = nameStart + length
            guard offset <= events.count else { break }

            if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                change.overflowed = true
                continue
            }
            // IN_IGNORED: the kernel removed the watch (it follows the
            // folder's deletion or unmount; this object never removes it).
            if mask & (UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF) | UInt32(IN_UNMOUNT) | UInt32(IN_IGNORED)) != 0 {
                change.folderVanished = true
                continue
            }
            if length == 0 {
                // An event on the folder itself.
                if mask & UInt32(IN_ATTRIB) != 0 { change.folderAttributesChanged = true }
                continue
            }
            // Subfolders are not shown, whatever their name.
            if mask & UInt32(IN_ISDIR) != 0 { continue }
            // The name is NUL-padded to `length`.
            let padded = UnsafeBufferPointer(
                start: events.baseAddress!.advanced(by: nameStart).assumingMemoryBound(to: UInt8.self), count: length)
            let bytes = UnsafeBufferPointer(rebasing: padded[..<(padded.firstIndex(of: 0) ?? length)])
            guard ImageName.isCandidate(bytes) else { continue }
            // A name that is not UTF-8 is repaired here; the rescan reports it.
            let name = String(decoding: bytes, as: UTF8.self)

            if mask & (UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO)) != 0 { change.appeared.insert(name) }
            if mask & (UInt32(IN_DELETE) | UInt32(IN_MOVED_FROM)) != 0 { change.removed.insert(name) }
            if mask & UInt32(IN_ATTRIB) != 0 { change.modified.insert(name) }
            if mask & UInt32(IN_CREATE) != 0, isCompleteOnCreation(name) { change.appeared.insert(name) }
        }
    }

    /// Whether a file that was just created has no write phase to wait for: a
    /// symbolic link, or a hard link to a file that existed (more than one
    /// link). A new regular file with one link is being written; its
    /// IN_CLOSE_WRITE will follow.
    private func isCompleteOnCreation(_ name: String) -> Bool {
        var status = stat()
        let path = folder.hasSuffix("/") ? folder + name : folder + "/" + name
        // Gone already, or unreadable: the rescan will tell.
        guard (try? systemCall("lstat", { lstat(path, &status) })) != nil else { return false }
        switch status.st_mode & S_IFMT {
        case S_IFLNK: return true
        case S_IFREG: return status.st_nlink > 1
        default: return false
        }
    }
}
