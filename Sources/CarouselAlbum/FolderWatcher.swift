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
/// The folder's parent is watched too, for the folder's name only: sync
/// tools publish a new version with `mv new.tmp pictures`, and people delete
/// and re-create folders. When the folder is deleted or moved away the
/// change says `folderVanished`; when a folder of that name appears again
/// (created, moved in, or put in place of the old one) the watch moves to
/// the new folder and the change says `folderReplaced`. Both ask for a
/// rescan; `fileDescriptor` stays the same throughout.
///
/// Mounting makes no inotify event, so the mount table is watched too
/// (`mountsDescriptor`, /proc/self/mountinfo): after any mount or unmount,
/// `mountsChanged()` looks at what the path names now, and a file system
/// mounted on the folder (or under it, on its path) or unmounted from it
/// is a `folderReplaced` like any other new folder.
///
/// With `recursive`, every subfolder the scan enters (`Album.subfolders`:
/// the same bounds, symbolic links to folders followed, each folder once) is
/// watched too, and names in the change are relative paths (`2024/a.jpg`).
/// When a subfolder appears, goes, is moved or renamed, or is replaced (a
/// symbolic link to a folder counts as one), the change says
/// `subfoldersChanged` and the set of watches is made again from the tree
/// as it is now, before `drain()` returns: files put in a new subfolder
/// before its watch existed are for the rescan that follows to find.
/// A subfolder whose watch the kernel refuses (ENOSPC: the user's
/// `fs.inotify.max_user_watches` is used up, `Album.maxSubfolders` bounds our
/// own share) is still listed, unwatched; `takeNewWatchFailure()` says so once.
///
/// - FIXME: if the parent itself is deleted or moved, or cannot be watched
///   (no read permission on it), a vanished folder is not followed back
///   until the next mount or unmount; the daemon has to create a new watcher.
/// - Note: every entry created or removed in the parent wakes the descriptor
///   (inotify cannot watch one name); `drain()` then returns an empty change.
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
        /// The folder was deleted, moved away or unmounted, and no folder of
        /// that name has come back yet: the path shows nothing. Events resume
        /// (with `folderReplaced`) when one does.
        public var folderVanished = false
        /// The path names another folder than before: the old one was deleted
        /// or moved away and a new one created or moved in (`mv new pictures`).
        /// Events now come from the new folder; what it holds is for a rescan
        /// to tell (files put in it before the watch was moved make no events).
        public var folderReplaced = false
        /// `recursive`: a subfolder appeared, went, moved or was replaced;
        /// the watches follow the tree as it is now.
        public var subfoldersChanged = false

        public init() {}

        /// Whether the album may differ from the last scan.
        public var needsRescan: Bool {
            !appeared.isEmpty || !removed.isEmpty || !modified.isEmpty
                || overflowed || folderAttributesChanged || folderVanished || folderReplaced || subfoldersChanged
        }

        /// Nothing relevant happened.
        public var isEmpty: Bool { !needsRescan }
    }

    /// The folder being watched, as given.
    public let folder: String
    private var descriptor: Int32
    /// /proc/self/mountinfo, open for its change notification; -1 if it
    /// cannot be opened (no /proc).
    private var mounts: Int32 = -1
    private let buffer: UnsafeMutableRawPointer
    /// The watch on the folder now at `folder`; nil while there is none.
    /// Events of older watches (a folder moved away, whose `IN_IGNORED` is
    /// still queued) are not about `folder` and are skipped.
    private var folderWatch: Int32?
    /// The watch on the folder's parent, for the folder's name; nil if the
    /// parent cannot be watched.
    private var parentWatch: Int32?
    /// The folder's last path component, as the parent's events name it.
    private let name: [UInt8]
    /// Whether subfolders are watched (`[images] recursive`).
    public let recursive: Bool
    /// `recursive`: the watch on each subfolder and its path relative to `folder`.
    private var subfolderWatches: [Int32: String] = [:]
    /// `recursive`: the relative paths of the watched subfolders, for events
    /// about a symbolic link (which carry no IN_ISDIR) to one of them.
    private var watchedSubfolders: Set<String> = []
    /// The first subfolder the kernel would not watch at the last rebuild of
    /// the watch set, and whether it has been handed out.
    private var watchFailure: AlbumError?
    private var watchFailureTaken = false
    /// inotify_add_watch for subfolders, returning the watch or -1 and errno;
    /// tests replace it to be refused as the kernel refuses at its limit.
    var addSubfolderWatch: (Int32, String, UInt32) -> (watch: Int32, errno: Int32) = { fd, path, mask in
        let watch = inotify_add_watch(fd, path, mask)
        return (watch, watch < 0 ? errno : 0)
    }

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

    /// On the parent: the folder's name coming and going. The folder may be a
    /// directory or a symbolic link to one; the folder's own watch (with
    /// IN_ONLYDIR) refuses anything else of that name.
    private static let parentMask: UInt32 = UInt32(IN_CREATE) | UInt32(IN_MOVED_TO) | UInt32(IN_DELETE)
        | UInt32(IN_MOVED_FROM) | UInt32(IN_ONLYDIR)

    /// Starts watching `folder` (following a symbolic link to it). The
    /// descriptor is non-blocking and close-on-exec.
    ///
    /// The corresponding C functions are `inotify_init1` and `inotify_add_watch`.
    ///
    /// - Throws: `AlbumError` with subject `.folder`: the folder is missing, not
    ///   a directory or not readable, or the system's inotify limits are reached
    ///   (the error's hint names the sysctl to raise).
    public init(folder: String, recursive: Bool = false) throws(AlbumError) {
        let fd: Int32
        do {
            fd = try systemCall("inotify_init1") { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }
        } catch {
            throw AlbumError(path: folder, subject: .folder, failure: error)
        }
        let watch: Int32
        do {
            watch = try systemCall("inotify_add_watch") { inotify_add_watch(fd, folder, Self.mask) }
        } catch {
            closeDescriptor(fd)
            throw AlbumError(path: folder, subject: .folder, failure: error)
        }
        let (parent, name) = Self.split(folder)
        self.folder = folder
        self.descriptor = fd
        self.folderWatch = watch
        self.name = name
        self.recursive = recursive
        // Without it the folder's re-creation goes unnoticed (see the FIXME),
        // but the folder itself is still watched: not a reason to fail.
        let parentWatch = inotify_add_watch(fd, parent, Self.parentMask)
        if parentWatch == watch {
            // The same directory (a folder given as "x/."): one inode has one
            // watch, and adding the parent's mask replaced the folder's. Put it back.
            _ = inotify_add_watch(fd, folder, Self.mask)
            self.parentWatch = nil
        } else {
            self.parentWatch = parentWatch >= 0 ? parentWatch : nil
        }
        self.buffer = UnsafeMutableRawPointer.allocate(
            byteCount: Self.bufferSize, alignment: MemoryLayout<inotify_event>.alignment)
        // The kernel marks it (POLLPRI | POLLERR) at each mount or unmount
        // in this mount namespace; poll/epoll clear the mark.
        mounts = (try? systemCall("open") { open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC) }) ?? -1
        watchSubfolders()
    }

    /// The relative paths of the subfolders being watched (`recursive`).
    public var watchedFolders: [String] { subfolderWatches.values.sorted() }

    /// `recursive`: watches every subfolder the scan would enter now and
    /// drops the watches of those it would not. inotify_add_watch on a folder
    /// already watched returns its watch, so a folder that stayed keeps it
    /// (under its new path if it was moved).
    private func watchSubfolders() {
        guard recursive, descriptor >= 0 else { return }
        // A folder that cannot be listed has nothing to watch under it; the scan reports it.
        let folders = folderWatch == nil ? [] : ((try? Album.subfolders(of: folder)) ?? [])
        let prefix = folder.hasSuffix("/") ? folder : folder + "/"
        var watches: [Int32: String] = [:]
        var failure: AlbumError?
        for relative in folders {
            let (watch, code) = addSubfolderWatch(descriptor, prefix + relative, Self.mask)
            // Gone since the walk (ENOENT, ENOTDIR): its removal is queued.
            if watch < 0, code != ENOENT, code != ENOTDIR, failure == nil {
                failure = AlbumError(path: prefix + relative, subject: .folderEntry,
                                     failure: SystemCallError(call: "inotify_add_watch", errno: code))
            }
            guard watch >= 0, watch != folderWatch, watch != parentWatch, watches[watch] == nil else { continue }
            watches[watch] = relative
        }
        for watch in subfolderWatches.keys where watches[watch] == nil {
            _ = inotify_rm_watch(descriptor, watch)
        }
        subfolderWatches = watches
        watchedSubfolders = Set(watches.values)
        if failure == nil { watchFailureTaken = false }
        watchFailure = failure
    }

    /// A subfolder the kernel refused to watch (the rescan lists its pictures;
    /// their changes show only with the next change elsewhere), once: nil
    /// until all were watched again and one is refused anew. One log line.
    public func takeNewWatchFailure() -> AlbumError? {
        guard let failure = watchFailure, !watchFailureTaken else { return nil }
        watchFailureTaken = true
        return failure
    }

    deinit {
        close()
        buffer.deallocate()
    }

    /// The inotify descriptor, to wait on for readability (epoll, poll); -1
    /// after `close()`. Still owned by this object: do not close it.
    public var fileDescriptor: Int32 { descriptor }

    /// A descriptor that is ready for `EPOLLPRI` after a file system was
    /// mounted or unmounted (/proc/self/mountinfo); call `mountsChanged()`
    /// then. -1 when there is none (no /proc, or after `close()`).
    public var mountsDescriptor: Int32 { mounts }

    /// Looks at what `folder` names after a mount or unmount: the change
    /// says `folderReplaced` if it is another directory now (a file system
    /// mounted on it or unmounted from it), `folderVanished` if nothing is
    /// there; empty if it is the same folder.
    public func mountsChanged() -> Change {
        var change = Change()
        guard descriptor >= 0 else { return change }
        rewatch(&change)
        if folderWatch != nil { change.folderVanished = false }
        if change.folderReplaced || change.folderVanished { watchSubfolders() }
        return change
    }

    /// Stops watching and closes the descriptor; later calls do nothing.
    /// Remove the descriptor from any epoll set first.
    public func close() {
        guard descriptor >= 0 else { return }
        closeDescriptor(descriptor)
        descriptor = -1
        if mounts >= 0 {
            closeDescriptor(mounts)
            mounts = -1
        }
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
        if change.overflowed {
            // Lost events may have included the folder's replacement: look again.
            rewatch(&change)
            change.subfoldersChanged = recursive
        }
        // A vanished folder: its subfolders' watches go with it (they would
        // report from wherever it was moved to).
        if change.subfoldersChanged || change.folderReplaced || change.folderVanished { watchSubfolders() }
        // Gone and back within one drain: the path shows a folder again.
        if folderWatch != nil { change.folderVanished = false }
        return change
    }

    /// `folder`'s parent directory and last component ("/a/b/" -> "/a", "b").
    static func split(_ folder: String) -> (parent: String, name: [UInt8]) {
        var path = Array(folder.utf8)
        while path.count > 1, path.last == UInt8(ascii: "/") { path.removeLast() }
        guard let slash = path.lastIndex(of: UInt8(ascii: "/")) else { return (".", path) }
        let parent = slash == 0 ? "/" : String(decoding: path[..<slash], as: UTF8.self)
        return (parent, Array(path[(slash + 1)...]))
    }

    /// Points the folder watch at whatever directory `folder` names now.
    /// inotify_add_watch returns the same watch for the same inode, so a
    /// different one means a different folder.
    private func rewatch(_ change: inout Change) {
        let watch = inotify_add_watch(descriptor, folder, Self.mask)
        guard watch >= 0 else {
            // Nothing of that name, or not a directory: wait for the parent's next event.
            if let old = folderWatch { stopWatching(old); change.folderVanished = true }
            return
        }
        guard watch != folderWatch else { return }
        if let old = folderWatch { stopWatching(old) }
        folderWatch = watch
        change.folderReplaced = true
    }

    /// Drops the folder watch `watch` (its IN_IGNORED comes later and is skipped).
    private func stopWatching(_ watch: Int32) {
        // Fails with EINVAL when the kernel removed it already (a deleted folder).
        _ = inotify_rm_watch(descriptor, watch)
        if folderWatch == watch { folderWatch = nil }
    }

    private func parse(_ events: UnsafeRawBufferPointer, into change: inout Change) {
        let header = MemoryLayout<inotify_event>.size
        var offset = 0
        while offset + header <= events.count {
            // struct inotify_event { int wd; uint32_t mask; uint32_t cookie; uint32_t len; char name[]; }
            let watch = events.loadUnaligned(fromByteOffset: offset, as: Int32.self)
            let mask = events.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let length = Int(events.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            let nameStart = offset + header
            offset = nameStart + length
            guard offset <= events.count else { break }

            if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                change.overflowed = true
                continue
            }
            if watch == parentWatch, watch != folderWatch {
                parentEvent(mask: mask, name: events, at: nameStart, length: length, into: &change)
                continue
            }
            if let relative = subfolderWatches[watch] {
                subfolderEvent(relative: relative, watch: watch, mask: mask, name: events, at: nameStart,
                               length: length, into: &change)
                continue
            }
            // A folder watched before: moved away (its events follow it) or replaced.
            guard watch == folderWatch else { continue }
            // IN_IGNORED: the kernel removed the watch (after the folder's
            // deletion or unmount). A folder moved away is still watched where
            // it went, which is no longer `folder`: stop that.
            if mask & (UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF) | UInt32(IN_UNMOUNT) | UInt32(IN_IGNORED)) != 0 {
                stopWatching(watch)
                change.folderVanished = true
                continue
            }
            if length == 0 {
                // An event on the folder itself.
                if mask & UInt32(IN_ATTRIB) != 0 { change.folderAttributesChanged = true }
                continue
            }
            entryEvent(mask: mask, prefix: "", name: events, at: nameStart, length: length, into: &change)
        }
    }

    /// An event in the subfolder at `relative`: about the subfolder itself
    /// (deleted, moved: its parent's event says so too) or about an entry in it.
    private func subfolderEvent(relative: String, watch: Int32, mask: UInt32, name events: UnsafeRawBufferPointer,
                                at start: Int, length: Int, into change: inout Change) {
        if mask & (UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF) | UInt32(IN_UNMOUNT) | UInt32(IN_IGNORED)) != 0 {
            if mask & UInt32(IN_IGNORED) != 0 {
                // The kernel dropped the watch: its number may be given out again.
                subfolderWatches[watch] = nil
                watchedSubfolders.remove(relative)
            }
            change.subfoldersChanged = true
            return
        }
        if length == 0 {
            // chmod on the subfolder: whether its pictures can be read may have changed.
            if mask & UInt32(IN_ATTRIB) != 0 { change.folderAttributesChanged = true }
            return
        }
        entryEvent(mask: mask, prefix: relative + "/", name: events, at: start, length: length, into: &change)
    }

    /// An event about the entry `name` of the folder or of the subfolder
    /// whose relative path is `prefix` (with its `/`).
    private func entryEvent(mask: UInt32, prefix: String, name events: UnsafeRawBufferPointer, at start: Int,
                            length: Int, into change: inout Change) {
        // The name is NUL-padded to `length`.
        let padded = UnsafeBufferPointer(
            start: events.baseAddress!.advanced(by: start).assumingMemoryBound(to: UInt8.self), count: length)
        let bytes = UnsafeBufferPointer(rebasing: padded[..<(padded.firstIndex(of: 0) ?? length)])
        if recursive, isSubfolderEvent(mask: mask, relative: prefix + String(decoding: bytes, as: UTF8.self)) {
            change.subfoldersChanged = true
            return
        }
        // Subfolders are not shown, whatever their name.
        if mask & UInt32(IN_ISDIR) != 0 { return }
        guard ImageName.isCandidate(bytes) else { return }
        // A name that is not UTF-8 is repaired here; the rescan reports it.
        let name = prefix + String(decoding: bytes, as: UTF8.self)

        if mask & (UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO)) != 0 { change.appeared.insert(name) }
        if mask & (UInt32(IN_DELETE) | UInt32(IN_MOVED_FROM)) != 0 { change.removed.insert(name) }
        if mask & UInt32(IN_ATTRIB) != 0 { change.modified.insert(name) }
        if mask & UInt32(IN_CREATE) != 0, isCompleteOnCreation(name) { change.appeared.insert(name) }
    }

    /// `recursive`: whether the entry at `relative` that came or went is a
    /// subfolder the scan enters: a folder (IN_ISDIR, not hidden), a
    /// symbolic link to one that was created, or a watched one's name going.
    private func isSubfolderEvent(mask: UInt32, relative: String) -> Bool {
        let entryChanged = UInt32(IN_CREATE) | UInt32(IN_MOVED_TO) | UInt32(IN_DELETE) | UInt32(IN_MOVED_FROM)
        guard mask & entryChanged != 0 else { return false }
        let last = relative.split(separator: "/").last ?? ""
        guard !last.hasPrefix(".") else { return false }
        if mask & UInt32(IN_ISDIR) != 0 || watchedSubfolders.contains(relative) { return true }
        // A picture's name: not worth a stat (a link to a folder named x.jpg is not followed here).
        guard mask & (UInt32(IN_CREATE) | UInt32(IN_MOVED_TO)) != 0, !ImageName.isCandidate(String(last)) else {
            return false
        }
        // A symbolic link (IN_ISDIR is set only for folders themselves): to a folder?
        var status = stat()
        let path = (folder.hasSuffix("/") ? folder : folder + "/") + relative
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    /// An event on the parent: only the folder's own name matters. Created or
    /// moved in: watch the new folder. Deleted or moved out: the path shows
    /// nothing now (the folder's own IN_DELETE_SELF or IN_MOVE_SELF may
    /// come before or after this, in the same read or the next).
    private func parentEvent(mask: UInt32, name events: UnsafeRawBufferPointer, at start: Int, length: Int,
                             into change: inout Change) {
        guard length > 0 else {
            // The parent itself went: its IN_IGNORED follows. See the FIXME.
            if mask & UInt32(IN_IGNORED) != 0 { parentWatch = nil }
            return
        }
        let padded = UnsafeBufferPointer(
            start: events.baseAddress!.advanced(by: start).assumingMemoryBound(to: UInt8.self), count: length)
        guard padded[..<(padded.firstIndex(of: 0) ?? length)].elementsEqual(name) else { return }
        if mask & (UInt32(IN_CREATE) | UInt32(IN_MOVED_TO)) != 0 {
            rewatch(&change)
        } else if mask & (UInt32(IN_DELETE) | UInt32(IN_MOVED_FROM)) != 0, let old = folderWatch {
            stopWatching(old)
            change.folderVanished = true
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
