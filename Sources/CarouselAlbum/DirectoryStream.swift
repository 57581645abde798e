import CarouselPlatform
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An open directory being listed; `closedir` runs exactly once, when the
/// value goes away.
///
/// The directory is opened with `open(O_DIRECTORY | O_CLOEXEC)` and then
/// `fdopendir`, so that the descriptor does not leak into a child process and
/// so that `fstatat` can look names up relative to it: one path resolution of
/// the folder for the whole scan instead of one per file.
struct DirectoryStream: ~Copyable {
    private let stream: OpaquePointer

    /// The corresponding C functions are `open` and `fdopendir`.
    init(path: String) throws(SystemCallError) {
        let fd = try systemCall("open") { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        let stream: OpaquePointer?
        do {
            stream = try attemptSystemCall("fdopendir", failed: { $0 == nil }) { fdopendir(fd) } ?? nil
        } catch {
            closeDescriptor(fd)
            throw error
        }
        guard let stream else {
            closeDescriptor(fd)
            throw SystemCallError(call: "fdopendir", errno: EAGAIN)
        }
        self.stream = stream
    }

    deinit {
        // Also closes the descriptor fdopendir took over.
        closedir(stream)
    }

    /// The descriptor to pass to `fstatat`; owned by the stream.
    var fileDescriptor: Int32 { dirfd(stream) }

    /// The next directory entry, or nil at the end. The pointer is valid until
    /// the next call. The corresponding C function is `readdir`.
    func next() throws(SystemCallError) -> UnsafeMutablePointer<dirent>? {
        // readdir returns nil both at the end and on failure; only errno,
        // cleared beforehand, tells them apart.
        try attemptSystemCall("readdir", failed: { $0 == nil && errno != 0 }) {
            errno = 0
            return readdir(stream)
        } ?? nil
    }
}

/// Closes a descriptor this room owns.
///
/// Not retried on EINTR, unlike every other call: on Linux the descriptor is
/// released even when close reports EINTR, and a retry could close a
/// descriptor another thread has just been given the same number for. Nothing
/// useful can be done about a failed close of a read-only descriptor either.
func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}
