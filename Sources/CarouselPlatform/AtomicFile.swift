#if canImport(Glibc)
import Glibc
#endif

/// Writes `bytes` over `path` whole: a temporary name beside it (`.new`),
/// synced, then renamed onto `path`, so that a reader (or a power cut) sees
/// the old file or the new, never half. Returns why not, or nil; nothing
/// is left behind on failure. For the small files the frame keeps (its
/// settings, hidden pictures, the web page's records).
public func writeFileAtomically(_ bytes: [UInt8], to path: String, mode: mode_t) -> String? {
    let temporary = path + ".new"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode)
    guard fd >= 0 else { return "cannot write \(temporary): \(String(cString: strerror(errno)))" }
    guard bytes.withUnsafeBytes({ writeAll(fd, $0) }) else {
        let reason = String(cString: strerror(errno))
        close(fd)
        unlink(temporary)
        return "cannot write \(temporary): \(reason)"
    }
    let synced = fsync(fd) == 0
    close(fd)
    guard synced, rename(temporary, path) == 0 else {
        let reason = String(cString: strerror(errno))
        unlink(temporary)
        return "cannot write \(path): \(reason)"
    }
    return nil
}
