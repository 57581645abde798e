import CPlatform
#if canImport(Glibc)
import Glibc
#endif

/// One descriptor a source on the loop wants watched, and for what
/// (`EPOLLIN`, `EPOLLOUT`, `EPOLLPRI`; errors and hang-ups always come).
/// `serial` tells a descriptor from a later one that reuses its number: a
/// source that closes a descriptor and opens another gives the new one a
/// new serial.
public struct EpollInterest: Equatable, Sendable {
    public let fd: Int32
    public let events: UInt32
    public let serial: UInt64

    public init(fd: Int32, events: UInt32 = EPOLLIN.rawValue, serial: UInt64 = 0) {
        self.fd = fd
        self.events = events
        self.serial = serial
    }

    public static let readable = EPOLLIN.rawValue
    public static let writable = EPOLLOUT.rawValue
    public static let priority = EPOLLPRI.rawValue
}

/// What one source has put into an epoll set, kept in step with what it
/// wants now (`synchronize`): new descriptors are added, changed interests
/// modified, and those it no longer lists forgotten.
///
/// A descriptor the source closed left the kernel's epoll set by itself
/// (closing removes it), and its number may already belong to another
/// source's new descriptor: so one it no longer lists is only forgotten,
/// never removed, unless `stillOpen` says the source keeps it open without
/// wanting it watched (a listener paused for lack of descriptors).
public struct EpollRegistrations {
    private var registered: [Int32: EpollInterest] = [:]

    public init() {}

    /// The descriptors registered now.
    public var descriptors: [Int32] { registered.keys.sorted() }

    /// Brings `epoll` in line with `wanted`. `token` maps a descriptor to
    /// the loop's token for it.
    public mutating func synchronize(_ wanted: [EpollInterest], with epoll: Epoll, token: (Int32) -> UInt64,
                                     stillOpen: (Int32) -> Bool = { _ in false }) throws(SystemCallError) {
        if wanted.isEmpty, registered.isEmpty { return }
        var stale: [Int32] = []
        for (fd, entry) in registered where !wanted.contains(where: { $0.fd == fd && $0.serial == entry.serial }) {
            stale.append(fd)
        }
        for fd in stale {
            if !wanted.contains(where: { $0.fd == fd }), stillOpen(fd) { epoll.remove(fd) }
            registered[fd] = nil
        }
        for entry in wanted {
            if let old = registered[entry.fd] {
                if old.events != entry.events { try epoll.modify(entry.fd, token: token(entry.fd), events: entry.events) }
            } else {
                do {
                    try epoll.add(entry.fd, token: token(entry.fd), events: entry.events)
                } catch where error.errno == EEXIST {
                    // Still in the set: the source kept it open after it stopped
                    // listing it (and did not say so through `stillOpen`). It is
                    // the same open file, so taking it over is right.
                    try epoll.modify(entry.fd, token: token(entry.fd), events: entry.events)
                }
            }
            registered[entry.fd] = entry
        }
    }

    /// Takes every descriptor still open out of `epoll` (the source stops
    /// but its descriptors may live on), and forgets them all.
    public mutating func removeAll(from epoll: Epoll, stillOpen: (Int32) -> Bool = { _ in true }) {
        for fd in registered.keys where stillOpen(fd) { epoll.remove(fd) }
        registered = [:]
    }
}
