import CarouselPlatform
import CPlatform
#if canImport(Glibc)
import Glibc
#endif

/// Who is on the other end of a control connection, from SO_PEERCRED and
/// SO_PEERGROUPS: the kernel's word, not the client's.
public struct ControlPeer: Equatable, Sendable, CustomStringConvertible {
    public let pid: Int32
    public let uid: UInt32
    /// The primary group.
    public let gid: UInt32
    /// The supplementary groups (`usermod -aG`, `id -G` minus the primary
    /// one, which the list may or may not repeat), as of connect().
    public let groups: [UInt32]

    public init(pid: Int32, uid: UInt32, gid: UInt32, groups: [UInt32] = []) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.groups = groups
    }

    public var description: String {
        let base = "pid \(pid), uid \(uid), gid \(gid)"
        return groups.isEmpty ? base : base + ", groups " + groups.map(String.init).joined(separator: ",")
    }
}

/// The server's log lines carry the platform's priorities.
public typealias ControlLogLevel = LogPriority

/// Setting up the control socket failed: the message says on what and what to do.
public struct ControlServerError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A request whose reply is given later (`ControlServer.deferReply`).
public struct ControlTicket: Hashable, Sendable {
    let fd: Int32
    let serial: UInt64
}

/// A descriptor the server wants watched, and for what: the loop's one
/// shape of an interest (`serial` tells apart two connections that got the
/// same descriptor number one after the other).
public typealias ControlPollEntry = EpollInterest

/// The control socket's server: accepts clients, reads request lines, hands
/// them to `onRequest`, queues the replies and subscriber events, and never
/// blocks. It owns no loop: the daemon watches `pollSet` (or calls
/// `synchronize(with:token:)` on its `Epoll`) and calls
/// `handle(readyDescriptor:events:)` for each ready descriptor.
///
/// Not thread-safe: every call comes from the daemon's loop thread.
public final class ControlServer {
    /// The longest request line accepted, newline excluded.
    public static let maximumRequestBytes = 4096
    public static let defaultPath = "/run/carouseld/control.sock"
    public static let defaultMaximumQueuedBytes = 256 * 1024

    public static let readable = EPOLLIN.rawValue
    public static let writable = EPOLLOUT.rawValue

    /// The socket file this server created (and removes on close); nil when adopted.
    public let path: String?
    /// Further connections are refused with an error reply; a new value
    /// applies to the next connection (clients already in stay).
    public var maxClients: Int
    /// Bound on a subscriber's queued events: over it, the subscriber is dropped.
    public let maximumQueuedBytes: Int
    /// A subscriber that has read nothing for this long while events wait
    /// for it is dropped too (µs), however little is queued: a reader that
    /// stopped is stuck, not slow.
    public var stallLimitMicroseconds: Int64 = 10_000_000
    /// nil: anyone who can open the socket file (its mode and group are the
    /// gate). New lists apply to the next connection.
    public var allowUIDs: Set<UInt32>?
    public var allowGIDs: Set<UInt32>?

    /// Called once per well-formed request, in order, on the loop thread;
    /// the reply goes back to that client. Not called for `help` (the
    /// server answers it) nor for malformed lines. For `subscribe` an `.ok`
    /// reply (it may carry the current status) makes the client a subscriber.
    public var onRequest: (ControlRequest, ControlPeer) -> ControlReply = { _, _ in
        .error("carouseld is starting and not ready for requests yet; try again")
    }
    /// Where log lines go, with their syslog priority.
    public var log: (ControlLogLevel, String) -> Void
    /// The server's clock (µs of CLOCK_MONOTONIC): idle limits, stalls and
    /// pauses count on it. The daemon passes its loop's clock, so tests on a
    /// manual clock run with the socket on.
    let clock: () -> Int64
    /// Called after any call that changed `pollSet` (a client came or went,
    /// a queue filled or drained).
    public var onDescriptorsChanged: (() -> Void)?

    let listener: FileDescriptor
    /// The socket file's identity, so close() removes ours and not a successor's.
    var ownedFile: (device: UInt64, inode: UInt64)?
    var clients: [Int32: Client] = [:]
    var nextSerial: UInt64 = 1
    var lastPollSet: [ControlPollEntry] = []
    /// What `synchronize` has put into the daemon's epoll set.
    var registered = EpollRegistrations()
    var acceptFailureLogged = false

    // Running out of descriptors (EMFILE/ENFILE). accept() then fails and
    // leaves the connection queued, so the level-triggered listener stays
    // readable and the loop would spin at 100% CPU. Two remedies, as event
    // loops do (libev, libuv, nginx): first the reserve descriptor: one
    // spare descriptor is kept open; on EMFILE it is closed, the connection
    // accepted into the freed slot, told why and closed, and the spare
    // reopened. That refuses cleanly (the client gets a reason instead of
    // hanging in the backlog) and needs nothing from the daemon. It fails
    // when another thread (the decoder) takes the freed slot first or the
    // whole system is out (ENFILE): then the listener leaves `pollSet`
    // until `nextDeadline`, and `tick(now:)` (or any later call into the
    // server after that time) brings it back.

    /// A descriptor on /dev/null held only to be given up for one accept(); -1 if none.
    /// Not private: tests take it away to reach the pause.
    var spare: Int32 = -1
    /// While set, the listener is out of `pollSet` (µs, CLOCK_MONOTONIC).
    var listenerPausedUntil: Int64?
    /// Descriptor shortage log lines: at most one per interval, with a count of the rest.
    var descriptorShortageLoggedAt: Int64?
    var descriptorShortageRefusals = 0
    /// How long the listener stays out of the poll set when even the spare did not help (µs).
    public var acceptBackoffMicroseconds: Int64 = 1_000_000
    /// At most one log line about running out of descriptors per this long (µs).
    public var descriptorShortageLogInterval: Int64 = 60_000_000
    /// A client that is not subscribed, waits for nothing and has sent
    /// nothing for this long is closed (µs): idle connections must not hold
    /// the `maxClients` slots that `carouselctl` needs.
    public var idleLimitMicroseconds: Int64 = 30_000_000
    /// The most connections one uid other than root may hold, so that no
    /// local user can take every slot; 0 means half of `maxClients`.
    public var maxClientsPerUID = 0
    /// Refusal log lines: at most one per uid and reason per this long (µs),
    /// with a count of those not logged (a refused client retrying in a loop
    /// wrote 5,000 lines in 0.3 s).
    public var refusalLogInterval: Int64 = 10_000_000
    var refusalsLogged: [String: (at: Int64, suppressed: Int)] = [:]

    /// The per-uid limit in force.
    var perUIDLimit: Int { maxClientsPerUID > 0 ? maxClientsPerUID : max(1, maxClients / 2) }

    final class Client {
        let fd: FileDescriptor
        let peer: ControlPeer
        let serial: UInt64
        var input: [UInt8] = []
        /// Inside an over-long line: drop bytes up to its newline.
        var discarding = false
        var output: [UInt8] = []
        var outputStart = 0
        var subscriber = false
        /// A subscriber that takes the per-frame events too (`subscribe`,
        /// not `subscribe changes`).
        var everyFrame = false

        /// A `subscribe` answered `.ok` makes a subscriber.
        func subscribe(_ request: ControlRequest) {
            switch request {
            case .subscribe: subscriber = true; everyFrame = true
            case .subscribeChanges: subscriber = true; everyFrame = false
            default: break
            }
        }
        var readClosed = false
        var closed = false
        /// A request whose reply comes later (`deferReply`): nothing more is
        /// read or answered until `complete` gives it, so replies keep their order.
        var awaiting = false
        /// The request whose reply is awaited (a `subscribe` answered `.ok`
        /// makes a subscriber, given now or later).
        var awaited: ControlRequest?
        /// Since when bytes wait that the socket does not take (µs, CLOCK_MONOTONIC).
        var stalledSince: Int64?
        /// When the client last sent anything (µs, CLOCK_MONOTONIC).
        var lastHeard: Int64
        /// Descriptors the client sent (SCM_RIGHTS) for its next request line
        /// (`screenshot` with no path writes into one); at most
        /// `maximumPassedDescriptors`, and whatever that line does not take is closed.
        var passed: [FileDescriptor] = []

        init(fd: FileDescriptor, peer: ControlPeer, serial: UInt64, now: Int64) {
            self.fd = fd
            self.peer = peer
            self.serial = serial
            lastHeard = now
        }

        /// Nothing is owed to it and it owes nothing: it only holds a slot.
        var isIdle: Bool { !subscriber && !awaiting && queued == 0 && !closed }

        var queued: Int { output.count - outputStart }
    }

    // MARK: Setting up

    /// Creates the socket at `path`: makes its directory if missing, replaces
    /// a stale socket file (one nothing listens on), binds, applies `mode`
    /// and `group`, listens. The corresponding C functions are `socket`,
    /// `bind`, `chmod`, `chown` and `listen`.
    public init(
        path: String = ControlServer.defaultPath, mode: mode_t = 0o660, group: String? = nil,
        allowUIDs: Set<UInt32>? = nil, allowGIDs: Set<UInt32>? = nil, maxClients: Int = 16,
        maximumQueuedBytes: Int = ControlServer.defaultMaximumQueuedBytes,
        log: @escaping (ControlLogLevel, String) -> Void = { _, _ in },
        clock: @escaping () -> Int64 = MonotonicClock.now
    ) throws(ControlServerError) {
        self.path = path
        self.clock = clock
        self.maxClients = maxClients
        self.maximumQueuedBytes = maximumQueuedBytes
        self.allowUIDs = allowUIDs
        self.allowGIDs = allowGIDs
        self.log = log

        var address = try Self.address(path)
        // Resolve the group first: a typo in the config must not leave a socket behind.
        let gid: gid_t? = try group.map { g throws(ControlServerError) in try Self.groupID(g, path: path) }
        try Self.makeDirectory(parentOf: path)

        let socketFD: Int32
        do {
            socketFD = try systemCall("socket") {
                socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
            }
        } catch {
            throw ControlServerError("cannot create the control socket: \(error)")
        }
        let owner = FileDescriptor(socketFD)

        if Self.bind(socketFD, &address) != 0 {
            let code = errno
            guard code == EADDRINUSE else {
                throw ControlServerError("cannot bind the control socket to \(path): \(errnoDescription(code))\(Self.permissionHint(code))")
            }
            try Self.removeStaleSocket(path)
            if Self.bind(socketFD, &address) != 0 {
                let again = errno
                throw ControlServerError("cannot bind the control socket to \(path): \(errnoDescription(again))\(Self.permissionHint(again))")
            }
            log(.info, "control: replaced the stale socket file \(path) (left behind by a carouseld that did not exit cleanly)")
        }
        var info = stat()
        if lstat(path, &info) == 0 { ownedFile = (UInt64(info.st_dev), UInt64(info.st_ino)) }
        listener = owner
        // From here on a failure must not leave the file behind (deinit closes and unlinks).

        do {
            // bind() creates the file with the umask applied; chmod sets exactly what was asked.
            try systemCall("chmod") { chmod(path, mode) }
            if let gid { try systemCall("chown") { chown(path, uid_t.max, gid) } }
            try systemCall("listen") { listen(socketFD, 64) }
        } catch {
            close()
            throw ControlServerError("cannot set up the control socket \(path): \(error)\(Self.permissionHint(error.errno))")
        }
        spare = Self.openSpare()
        lastPollSet = pollSet
    }

    /// Adopts a listening socket handed over by systemd (see
    /// `socketActivationDescriptor`). The server does not remove any file on
    /// close: the socket unit owns it.
    public init(
        adopting descriptor: Int32, allowUIDs: Set<UInt32>? = nil, allowGIDs: Set<UInt32>? = nil,
        maxClients: Int = 16, maximumQueuedBytes: Int = ControlServer.defaultMaximumQueuedBytes,
        log: @escaping (ControlLogLevel, String) -> Void = { _, _ in },
        clock: @escaping () -> Int64 = MonotonicClock.now
    ) throws(ControlServerError) {
        self.path = nil
        self.clock = clock
        self.maxClients = maxClients
        self.maximumQueuedBytes = maximumQueuedBytes
        self.allowUIDs = allowUIDs
        self.allowGIDs = allowGIDs
        self.log = log
        var listening: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) == 0, listening != 0 else {
            throw ControlServerError(
                "descriptor \(descriptor) from systemd is not a listening socket (check ListenStream= in carouseld.socket)")
        }
        listener = FileDescriptor(descriptor)
        // systemd hands the socket over blocking; accept() on the loop must not wait.
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        spare = Self.openSpare()
        lastPollSet = pollSet
    }

    /// The listening socket systemd passed (sd_listen_fds(3)): descriptor 3
    /// when LISTEN_PID is this process and LISTEN_FDS is at least 1, else
    /// nil. Clears the variables so that children do not adopt it too.
    public static func socketActivationDescriptor(
        environment: (String) -> String? = { getenv($0).map { String(cString: $0) } },
        processID: Int32 = getpid(), clearEnvironment: Bool = true
    ) -> Int32? {
        guard let pid = environment("LISTEN_PID").flatMap({ Int32($0) }), pid == processID,
              let count = environment("LISTEN_FDS").flatMap({ Int($0) }), count >= 1 else { return nil }
        if clearEnvironment {
            unsetenv("LISTEN_PID"); unsetenv("LISTEN_FDS"); unsetenv("LISTEN_FDNAMES")
        }
        return 3  // SD_LISTEN_FDS_START
    }

    deinit { close() }

    /// Closes every client and the listener, and removes the socket file this
    /// server created (unless another process has replaced it since).
    public func close() {
        for client in clients.values { client.closed = true; client.fd.close() }
        clients.removeAll()
        registered = EpollRegistrations()
        if spare >= 0 { Glibc.close(spare); spare = -1 }
        listenerPausedUntil = nil
        guard listener.raw >= 0 else { return }
        listener.close()
        if let path, let owned = ownedFile {
            var info = stat()
            if lstat(path, &info) == 0, UInt64(info.st_dev) == owned.device, UInt64(info.st_ino) == owned.inode {
                unlink(path)
            }
            ownedFile = nil
        }
    }

    // MARK: The loop's view

    /// The listener's descriptor: a token for the daemon's dispatch.
    public var listenerDescriptor: Int32 { listener.raw }
    public var clientCount: Int { clients.count }
    public var subscriberCount: Int { clients.values.filter(\.subscriber).count }
    /// The subscribers that take the per-frame events.
    public var everyFrameSubscriberCount: Int { clients.values.filter { $0.subscriber && $0.everyFrame }.count }
    /// The peers connected now, e.g. for `status`.
    public var peers: [ControlPeer] { clients.values.map(\.peer) }

    /// Every descriptor to watch and for what: the listener for input; each
    /// client for input while it may send requests, and for output only
    /// while it has bytes queued (a client with nothing to send must not
    /// wake the loop). Errors and hang-ups are always reported by epoll.
    public var pollSet: [ControlPollEntry] {
        guard listener.raw >= 0 else { return [] }
        var entries: [ControlPollEntry] = []
        // Out while paused for lack of descriptors (see `nextDeadline`).
        if listenerPausedUntil == nil { entries.append(ControlPollEntry(fd: listener.raw, events: Self.readable, serial: 0)) }
        for client in clients.values.sorted(by: { $0.serial < $1.serial }) {
            var events: UInt32 = 0
            if !client.readClosed && !backpressured(client) && !client.awaiting { events |= Self.readable }
            if client.queued > 0 { events |= Self.writable }
            entries.append(ControlPollEntry(fd: client.fd.raw, events: events, serial: client.serial))
        }
        return entries
    }

    /// Brings `epoll` in line with `pollSet`: adds new descriptors, modifies
    /// changed interests, removes gone ones. Call it after every call into the
    /// server (`handle`, `broadcast`), before the daemon opens any other
    /// descriptor: a closed client's number may be reused. `token` maps a
    /// descriptor to the daemon's epoll token (e.g. `controlBase + UInt64(fd)`).
    public func synchronize(with epoll: Epoll, token: (Int32) -> UInt64) throws(SystemCallError) {
        // The listener stays open while paused: the kernel keeps it registered until told.
        let listener = listener.raw
        try registered.synchronize(pollSet, with: epoll, token: token, stillOpen: { $0 == listener && listener >= 0 })
    }

    /// When the server next needs `tick(now:)` (µs, CLOCK_MONOTONIC), or nil:
    /// the end of a pause of the listener after accept() ran out of
    /// descriptors. The daemon includes it in its timer.
    public var nextDeadline: Int64? {
        let idle = clients.values.lazy.filter(\.isIdle).map { $0.lastHeard + self.idleLimitMicroseconds }.min()
        return [listenerPausedUntil, idle].compactMap { $0 }.min()
    }

    /// Does what is due at `now` (µs, CLOCK_MONOTONIC): puts a paused
    /// listener back into `pollSet`. Call `synchronize` afterwards, as after `handle`.
    public func tick(now: Int64? = nil) {
        let now = now ?? clock()
        defer { notifyIfChanged() }
        resumeListenerIfDue(now: now)
        for client in clients.values where client.isIdle && now - client.lastHeard >= idleLimitMicroseconds {
            client.output.append(contentsOf: Array((ControlReply.error(
                "closing an idle connection (nothing sent for \(idleLimitMicroseconds / 1_000_000) s)").line + "\n").utf8))
            flush(client)
            drop(client, level: .debug, "idle for \((now - client.lastHeard) / 1_000_000) s")
        }
    }

    /// Logs a refusal, at most once per uid and reason per `refusalLogInterval`.
    func logRefusal(_ peer: ControlPeer, _ reason: String, now: Int64) {
        let key = "\(peer.uid) \(reason)"
        if let last = refusalsLogged[key], now - last.at < refusalLogInterval {
            refusalsLogged[key] = (last.at, last.suppressed + 1)
            return
        }
        let more = refusalsLogged[key].map { $0.suppressed > 0 ? " (and \($0.suppressed) more since the last line)" : "" } ?? ""
        refusalsLogged[key] = (now, 0)
        if refusalsLogged.count > 1024 { refusalsLogged = refusalsLogged.filter { now - $0.value.at < refusalLogInterval } }
        log(.warning, "control: refused a client (\(peer)): \(reason)\(more)")
    }

    func resumeListenerIfDue(now: Int64) {
        guard let until = listenerPausedUntil, now >= until else { return }
        listenerPausedUntil = nil
        // The descriptors that were missing may be back: try for a spare again.
        if spare < 0 { spare = Self.openSpare() }
    }

    /// Does the work a ready descriptor asks for: accepts on the listener;
    /// reads, answers and writes on a client. Unknown descriptors are ignored.
    public func handle(readyDescriptor fd: Int32, events: UInt32) {
        defer { notifyIfChanged() }
        // A daemon that does not call tick() still gets its listener back on its next wake-up.
        if listenerPausedUntil != nil { resumeListenerIfDue(now: clock()) }
        if fd == listener.raw, fd >= 0 {
            acceptClients()
            return
        }
        guard let client = clients[fd] else { return }
        if events & EPOLLERR.rawValue != 0 {
            drop(client, level: .debug, "connection error")
            return
        }
        if events & (Self.readable | EPOLLHUP.rawValue) != 0, !client.readClosed { read(client) }
        if !client.closed, client.queued > 0 { flush(client) }
        if !client.closed, events & EPOLLHUP.rawValue != 0 {
            // Both directions are gone: nothing queued can ever be delivered.
            drop(client, level: .debug, "hung up")
        }
        if !client.closed { finishIfDone(client) }
    }

    /// Queues one event line (no newline) for every subscriber and writes
    /// what the sockets take now. A subscriber whose queue would pass
    /// `maximumQueuedBytes` is dropped: the display never waits for a reader.
    /// A per-frame event (`perFrame`) goes only to those that take them.
    public func broadcast(line: String, perFrame: Bool = false) {
        defer { notifyIfChanged() }
        if listenerPausedUntil != nil { resumeListenerIfDue(now: clock()) }
        let bytes = Array(line.utf8) + [0x0A]
        let now = clock()
        for client in clients.values where client.subscriber && !client.closed && (client.everyFrame || !perFrame) {
            if let since = client.stalledSince, now - since > stallLimitMicroseconds {
                drop(client, level: .warning,
                     "dropped a subscriber that is not reading its events (nothing read for \((now - since) / 1_000_000) s, \(client.queued) bytes queued)")
                continue
            }
            if client.queued + bytes.count > maximumQueuedBytes {
                drop(client, level: .warning,
                     "dropped a subscriber that is not reading its events (\(client.queued) bytes queued, limit \(maximumQueuedBytes))")
                continue
            }
            client.output.append(contentsOf: bytes)
            flush(client)
        }
    }

    /// The client whose request `onRequest` is answering now.
    var answering: Client?
}
