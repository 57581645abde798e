import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// One pass at a time over a manifest (the service's, and one started by
/// hand beside it): an flock on a file next to the manifest, released by
/// the kernel if the process dies.
struct SyncLock {
    private let fd: Int32

    init(_ path: String) throws(SyncError) {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SyncError(.local, "cannot open \(path): \(errnoDescription(errno))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let e = errno
            close(fd)
            throw SyncError(.local, e == EWOULDBLOCK
                ? "another sync pass is running on \(path) (the service, or one by hand); this one waits for the next"
                : "cannot lock \(path): \(errnoDescription(e))")
        }
    }

    func release() { close(fd) }
}
