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
    /// Called after any call that changed `pollSet` (a client came or went,
    /// a queue filled or drained).
    public var onDescriptorsChanged: (() -> Void)?

    private let listener: FileDescriptor
    /// The socket file's identity, so close() removes ours and not a successor's.
    private var ownedFile: (device: UInt64, inode: UInt64)?
    private var clients: [Int32: Client] = [:]
    private var nextSerial: UInt64 = 1
    private var lastPollSet: [ControlPollEntry] = []
    /// What `synchronize` has put into the daemon's epoll set.
    private var registered = EpollRegistrations()
    private var acceptFailureLogged = false

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
    private var listenerPausedUntil: Int64?
    /// Descriptor shortage log lines: at most one per interval, with a count of the rest.
    private var descriptorShortageLoggedAt: Int64?
    private var descriptorShortageRefusals = 0
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
    private var refusalsLogged: [String: (at: Int64, suppressed: Int)] = [:]

    /// The per-uid limit in force.
    var perUIDLimit: Int { maxClientsPerUID > 0 ? maxClientsPerUID : max(1, maxClients / 2) }

    private final class Client {
        let fd: FileDescriptor
        let peer: ControlPeer
        let serial: UInt64
        var input: [UInt8] = []
        /// Inside an over-long line: drop bytes up to its newline.
        var discarding = false
        var output: [UInt8] = []
        var outputStart = 0
        var subscriber = false
        var readClosed = false
        var closed = false
        /// A request whose reply comes later (`deferReply`): nothing more is
        /// read or answered until `complete` gives it, so replies keep their order.
        var awaiting = false
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
        log: @escaping (ControlLogLevel, String) -> Void = { _, _ in }
    ) throws(ControlServerError) {
        self.path = path
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
        log: @escaping (ControlLogLevel, String) -> Void = { _, _ in }
    ) throws(ControlServerError) {
        self.path = nil
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
    public func tick(now: Int64 = MonotonicClock.now()) {
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
    private func logRefusal(_ peer: ControlPeer, _ reason: String, now: Int64) {
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

    private func resumeListenerIfDue(now: Int64) {
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
        if listenerPausedUntil != nil { resumeListenerIfDue(now: MonotonicClock.now()) }
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
    public func broadcast(line: String) {
        defer { notifyIfChanged() }
        if listenerPausedUntil != nil { resumeListenerIfDue(now: MonotonicClock.now()) }
        let bytes = Array(line.utf8) + [0x0A]
        let now = MonotonicClock.now()
        for client in clients.values where client.subscriber && !client.closed {
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

    // MARK: Clients

    private func acceptClients() {
        // A bounded batch: a flood of connections must not starve the display.
        for _ in 0..<64 {
            let fd: Int32
            do {
                // accept4 is behind _GNU_SOURCE, which Swift's Glibc does not define:
                // accept, then make the socket non-blocking and close-on-exec at once.
                guard let accepted = try attemptSystemCall("accept", { accept(listener.raw, nil, nil) }) else { return }
                fd = accepted
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                acceptFailureLogged = false
            } catch {
                if error.errno == ECONNABORTED { continue }
                if error.errno == EMFILE || error.errno == ENFILE {
                    // See `spare`: refuse this connection through the reserve, or pause the listener.
                    if refuseWithSpare(error) { continue }
                    return
                }
                if !acceptFailureLogged {
                    log(.error, "control: cannot accept a connection: \(error) (too many open files? raise LimitNOFILE or lower control clients)")
                    acceptFailureLogged = true
                }
                return
            }
            let owner = FileDescriptor(fd)
            let peer = Self.credentials(of: fd)
            let now = MonotonicClock.now()
            if clients.count >= maxClients {
                logRefusal(peer, "too many clients (max \(maxClients))", now: now)
                refuse(owner, ControlReply.error("too many clients (max \(maxClients))"))
                continue
            }
            if peer.uid != 0, clients.values.lazy.filter({ $0.peer.uid == peer.uid }).count >= perUIDLimit {
                logRefusal(peer, "too many connections from uid \(peer.uid) (max \(perUIDLimit))", now: now)
                refuse(owner, ControlReply.error("too many connections from uid \(peer.uid) (max \(perUIDLimit) per user)"))
                continue
            }
            if !allowed(peer) {
                logRefusal(peer, "its uid and gid are not in the control allow-list", now: now)
                refuse(owner, ControlReply.error(
                    "permission denied: uid \(peer.uid) gid \(peer.gid) is not in carouseld's control allow-list"))
                continue
            }
            let client = Client(fd: owner, peer: peer, serial: nextSerial, now: now)
            nextSerial += 1
            clients[fd] = client
            log(.debug, "control: client connected (\(peer))")
        }
    }

    /// accept() failed for lack of descriptors: gives up the spare for one
    /// accept and refuses that connection with a reason. Returns false when
    /// that was impossible and the listener is paused instead (see `spare`).
    private func refuseWithSpare(_ error: SystemCallError) -> Bool {
        let now = MonotonicClock.now()
        var refused = false
        if spare >= 0 {
            Glibc.close(spare)
            spare = -1
            let fd = accept(listener.raw, nil, nil)
            let code = errno
            if fd >= 0 {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                refuse(FileDescriptor(fd), ControlReply.error(
                    "carouseld has too many open files and cannot take this connection now; try again later"))
                refused = true
            }
            spare = Self.openSpare()
            // The client gave up meanwhile: nothing waits, nothing to pause for.
            if fd < 0 && (code == EAGAIN || code == EWOULDBLOCK || code == ECONNABORTED) { return true }
        }
        if refused {
            descriptorShortageRefusals += 1
        } else {
            listenerPausedUntil = now + acceptBackoffMicroseconds
        }
        if let last = descriptorShortageLoggedAt, now - last < descriptorShortageLogInterval { return refused }
        let count = descriptorShortageRefusals
        descriptorShortageLoggedAt = now
        descriptorShortageRefusals = 0
        let what = refused
            ? "refused \(count) connection\(count == 1 ? "" : "s") since the last such line, with a reply saying why"
            : "not accepting connections for \(acceptBackoffMicroseconds / 1000) ms"
        log(.error, "control: cannot accept a connection: \(error); \(what)"
            + " (too many open files: raise LimitNOFILE, or lower [control] max_clients)")
        return refused
    }

    /// The spare descriptor (see `spare`), or -1 when none can be had now.
    private static func openSpare() -> Int32 {
        open("/dev/null", O_RDONLY | O_CLOEXEC)
    }

    private func allowed(_ peer: ControlPeer) -> Bool {
        if allowUIDs == nil && allowGIDs == nil { return true }
        // Root is not special: list uid 0 to let it in, so the list means what it says.
        if allowUIDs?.contains(peer.uid) == true { return true }
        guard let allowGIDs else { return false }
        // A user added with `usermod -aG` has the group as a supplementary one:
        // group membership is the primary gid or any of those.
        return allowGIDs.contains(peer.gid) || peer.groups.contains(where: allowGIDs.contains)
    }

    /// Sends one reply on a fresh connection and closes it. A fresh socket's
    /// buffer always has room for one short line, so one attempt suffices.
    private func refuse(_ fd: FileDescriptor, _ reply: ControlReply) {
        let bytes = Array((reply.line + "\n").utf8)
        _ = try? attemptSystemCall("send") {
            bytes.withUnsafeBytes { send(fd.raw, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        }
        fd.close()
    }

    private static func credentials(of fd: Int32) -> ControlPeer {
        // struct ucred is pid_t, uid_t, gid_t: three 32-bit fields.
        var raw: (Int32, UInt32, UInt32) = (0, UInt32.max, UInt32.max)
        var length = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
        if getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &raw, &length) != 0 {
            // Unknown credentials match no allow-list entry: refused if there is a list.
            raw = (0, UInt32.max, UInt32.max)
        }
        let known = raw.1 != UInt32.max
        return ControlPeer(pid: raw.0, uid: raw.1, gid: raw.2,
                           groups: known ? supplementaryGroups(of: fd, pid: raw.0, uid: raw.1, gid: raw.2) : [])
    }

    /// The peer's supplementary groups as they were at connect(). The
    /// corresponding C function is `getsockopt(SO_PEERGROUPS)` (Linux 4.13);
    /// on older kernels (ENOPROTOOPT) the `Groups:` line of
    /// /proc/PID/status, and failing that the group database (`getgrouplist`),
    /// which misses a `newgrp` or a login that predates a group change but is
    /// better than refusing every supplementary member.
    static func supplementaryGroups(of fd: Int32, pid: Int32, uid: UInt32, gid: UInt32) -> [UInt32] {
        var capacity = 32
        // ERANGE says the list is longer and sets the length it needs; a
        // process may hold up to NGROUPS_MAX (65536) groups, hence the loop.
        for _ in 0..<4 {
            var list = [UInt32](repeating: 0, count: capacity)
            var length = socklen_t(capacity * MemoryLayout<UInt32>.size)
            let result = list.withUnsafeMutableBytes { getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, $0.baseAddress, &length) }
            if result == 0 { return Array(list.prefix(Int(length) / MemoryLayout<UInt32>.size)) }
            let code = errno
            if code == ERANGE {
                capacity = max(capacity * 2, Int(length) / MemoryLayout<UInt32>.size)
                continue
            }
            if code != ENOPROTOOPT { return [] }
            break
        }
        return processGroups(pid: pid, uid: uid) ?? databaseGroups(uid: uid, gid: gid)
    }

    /// The `Groups:` line of /proc/PID/status, if that process still runs as `uid`
    /// (a client that connected and exited may have handed its pid on).
    static func processGroups(pid: Int32, uid: UInt32) -> [UInt32]? {
        guard pid > 0, let file = fopen("/proc/\(pid)/status", "re") else { return nil }
        defer { fclose(file) }
        var groups: [UInt32]?
        var uidMatches = false
        var line: UnsafeMutablePointer<CChar>?
        var size = 0
        defer { free(line) }
        while getline(&line, &size, file) >= 0, let line {
            let text = String(cString: line)
            let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
            guard let key = fields.first else { continue }
            if key == "Uid:" {
                // Real, effective, saved, filesystem: the effective one made the connection.
                uidMatches = fields.count > 2 && UInt32(fields[2]) == uid
            } else if key == "Groups:" {
                groups = fields.dropFirst().compactMap { UInt32($0) }
            }
        }
        return uidMatches ? groups : nil
    }

    /// The groups the group database gives `uid`'s user name (`getgrouplist`).
    static func databaseGroups(uid: UInt32, gid: UInt32) -> [UInt32] {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil, let name = entry.pw_name else {
            return []
        }
        var count: Int32 = 64
        for _ in 0..<4 {
            var list = [gid_t](repeating: 0, count: Int(count))
            var found = count
            if getgrouplist(name, gid, &list, &found) >= 0 { return Array(list.prefix(Int(found))) }
            // -1: too small; `found` now holds the number needed.
            count = max(found, count * 2)
        }
        return []
    }

    /// Replies waiting past this many bytes stop the server from reading the
    /// client's further requests until it reads: a client that pipelines
    /// without reading slows itself down, and its queue stays bounded.
    private func backpressured(_ client: Client) -> Bool { client.queued >= maximumQueuedBytes / 2 }

    private func read(_ client: Client) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        // A bounded batch per wake-up, so one chatty client cannot hold the loop.
        for _ in 0..<16 where !client.closed && !client.readClosed && !backpressured(client) && !client.awaiting {
            let count: Int
            do {
                var fds = [Int32](repeating: -1, count: Self.maximumPassedDescriptors)
                var received: Int32 = 0
                let room = Int32(Self.maximumPassedDescriptors - client.passed.count)
                guard let n = try attemptSystemCall("recv", {
                    buffer.withUnsafeMutableBytes {
                        cplatform_recv_with_fds(client.fd.raw, $0.baseAddress, $0.count, &fds, room, &received)
                    }
                }) else { return }
                client.passed += fds.prefix(Int(received)).map { FileDescriptor($0) }
                count = n
            } catch {
                drop(client, level: .debug, "read failed: \(error)")
                return
            }
            if count == 0 {
                // The client closed its side (`echo status | socat - UNIX:...`): answer what it sent, then close.
                client.readClosed = true
                if !client.discarding && !client.input.isEmpty { client.input.append(0x0A) }
                processInput(client)
                return
            }
            client.lastHeard = MonotonicClock.now()
            client.input.append(contentsOf: buffer[0..<count])
            processInput(client)
        }
    }

    private func processInput(_ client: Client) {
        var start = 0
        defer { if !client.closed { client.input.removeFirst(min(start, client.input.count)) } }
        while !client.closed, !backpressured(client), !client.awaiting {
            let newline = client.input[start...].firstIndex(of: 0x0A)
            if client.discarding {
                guard let newline else { start = client.input.count; return }
                start = newline + 1
                client.discarding = false
                continue
            }
            guard let newline else {
                if client.input.count - start > Self.maximumRequestBytes {
                    // Answer now, then skip to the line's end: the connection stays usable.
                    reply(client, .error(Self.tooLongMessage))
                    client.discarding = true
                    start = client.input.count
                }
                return
            }
            let line = client.input[start..<newline]
            start = newline + 1
            if line.count > Self.maximumRequestBytes {
                reply(client, .error(Self.tooLongMessage))
            } else {
                answer(client, line)
            }
        }
    }

    private static let tooLongMessage = "request line longer than \(maximumRequestBytes) bytes; it was discarded"

    private func answer(_ client: Client, _ bytes: ArraySlice<UInt8>) {
        defer {
            // Descriptors sent with this line and not taken are not kept.
            for fd in client.passed { fd.close() }
            client.passed.removeAll()
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            reply(client, .error("request is not valid UTF-8"))
            return
        }
        switch ControlRequest.parse(line: text) {
        case let .failure(error):
            reply(client, .error(error.message))
        case .success(.help):
            reply(client, ControlReply.help)
        case let .success(request):
            answering = client
            let response = onRequest(request, client.peer)
            answering = nil
            if client.awaiting { return }
            if request == .subscribe, case .ok = response { client.subscriber = true }
            reply(client, response)
        }
    }

    // MARK: Replies that come later

    /// The client whose request `onRequest` is answering now.
    private var answering: Client?

    /// Called from inside `onRequest`: the descriptor the client sent with
    /// this request line (SCM_RIGHTS), now the caller's; nil if none came.
    public func takePassedDescriptor() -> FileDescriptor? {
        guard let client = answering, !client.passed.isEmpty else { return nil }
        return client.passed.removeFirst()
    }

    /// How many descriptors one client may have waiting for its next line.
    static let maximumPassedDescriptors = 2

    /// Called from inside `onRequest`: the reply to this request will be
    /// given later with `complete` (work done off the loop, such as encoding
    /// a screenshot). `onRequest`'s return value is then ignored. The
    /// client's further requests wait, so replies stay in order.
    public func deferReply() -> ControlTicket {
        guard let client = answering else {
            preconditionFailure("deferReply() is only meaningful inside onRequest")
        }
        client.awaiting = true
        return ControlTicket(fd: client.fd.raw, serial: client.serial)
    }

    /// Gives the reply of a deferred request. A client that left meanwhile
    /// is ignored. Call `synchronize` afterwards, as after `handle`.
    public func complete(_ ticket: ControlTicket, with response: ControlReply) {
        defer { notifyIfChanged() }
        guard let client = clients[ticket.fd], client.serial == ticket.serial, client.awaiting, !client.closed else {
            return
        }
        client.awaiting = false
        reply(client, response)
        flush(client)
        if !client.closed, !backpressured(client), !client.input.isEmpty { processInput(client) }
        if !client.closed { finishIfDone(client) }
    }

    private func reply(_ client: Client, _ reply: ControlReply) {
        // The daemon's onRequest may have broadcast and dropped this client meanwhile.
        guard !client.closed else { return }
        client.output.append(contentsOf: Array(reply.line.utf8))
        client.output.append(0x0A)
    }

    /// Writes what the socket takes now; the rest waits for EPOLLOUT.
    private func flush(_ client: Client) {
        var progressed = false
        defer {
            if client.queued == 0 {
                client.stalledSince = nil
            } else if progressed || client.stalledSince == nil {
                client.stalledSince = MonotonicClock.now()
            }
        }
        while client.queued > 0 {
            let written: Int
            do {
                guard let n = try attemptSystemCall("send", {
                    client.output.withUnsafeBytes { all in
                        send(client.fd.raw, all.baseAddress! + client.outputStart, client.queued,
                             Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                    }
                }) else { break }
                written = n
            } catch {
                // EPIPE/ECONNRESET: the client left without reading its reply; nothing to report.
                drop(client, level: .debug, "write failed: \(error)")
                return
            }
            client.outputStart += written
            if written > 0 { progressed = true }
        }
        if client.outputStart == client.output.count {
            client.output.removeAll(keepingCapacity: client.output.count <= 64 * 1024)
            client.outputStart = 0
        } else if client.outputStart >= 64 * 1024 {
            client.output.removeFirst(client.outputStart)
            client.outputStart = 0
        }
        // Draining may have lifted the backpressure: answer what waited.
        if !backpressured(client), !client.input.isEmpty { processInput(client) }
        if !client.closed { finishIfDone(client) }
    }

    /// A client that closed its side and has its replies is done; a
    /// subscriber stays until it hangs up fully, since it still reads events.
    private func finishIfDone(_ client: Client) {
        if client.readClosed, client.queued == 0, !client.subscriber, !client.closed, !client.awaiting {
            drop(client, level: .debug, "done")
        }
    }

    private func drop(_ client: Client, level: ControlLogLevel, _ reason: String) {
        guard !client.closed else { return }
        log(level, "control: \(level == .debug ? "client disconnected" : "client dropped") (\(client.peer)): \(reason)")
        client.closed = true
        clients[client.fd.raw] = nil
        for fd in client.passed { fd.close() }
        client.passed.removeAll()
        // The kernel removes a closed descriptor from every epoll set (we never
        // dup client sockets); synchronize only forgets it (a number it no
        // longer lists is never removed by hand: it may be someone else's now).
        client.fd.close()
    }

    private func notifyIfChanged() {
        // Computing the poll set sorts every client: only for a listener.
        guard onDescriptorsChanged != nil else { return }
        let now = pollSet
        guard now != lastPollSet else { return }
        lastPollSet = now
        onDescriptorsChanged?()
    }

    // MARK: Socket file

    private static func address(_ path: String) throws(ControlServerError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity else {
            throw ControlServerError(
                "control socket path '\(path)' is \(bytes.isEmpty ? "empty" : "too long (\(bytes.count) bytes, a Unix socket path holds at most \(capacity - 1))")")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    private static func bind(_ fd: Int32, _ address: inout sockaddr_un) -> Int32 {
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }

    /// Removes `path` only if it is a socket nobody listens on: connect()
    /// failing with ECONNREFUSED is the kernel saying so.
    private static func removeStaleSocket(_ path: String) throws(ControlServerError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }  // gone meanwhile: bind again
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw ControlServerError("\(path) exists and is not a socket; carouseld will not remove it (move it away or choose another control socket path)")
        }
        var address = try address(path)
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard probe >= 0 else { throw ControlServerError("cannot probe \(path): \(errnoDescription(errno))") }
        defer { Glibc.close(probe) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        let code = errno
        // Connected, or a full backlog (EAGAIN): a live server owns the socket.
        if result == 0 || code == EAGAIN {
            throw ControlServerError("another process is already listening on \(path) (is carouseld already running? stop it or choose another control socket path)")
        }
        guard code == ECONNREFUSED else {
            if code == ENOENT { return }
            throw ControlServerError("cannot tell whether \(path) is in use: connect: \(errnoDescription(code))")
        }
        if unlink(path) != 0 && errno != ENOENT {
            throw ControlServerError("cannot remove the stale control socket \(path): \(errnoDescription(errno))")
        }
    }

    private static func makeDirectory(parentOf path: String) throws(ControlServerError) {
        var components = path.split(separator: "/", omittingEmptySubsequences: true).dropLast()
        var current = path.hasPrefix("/") ? "" : "."
        while let next = components.first {
            components = components.dropFirst()
            current += "/" + next
            // 0755: the socket file's own mode and group are what guard access.
            if mkdir(current, 0o755) != 0 && errno != EEXIST {
                throw ControlServerError("cannot create the control socket's directory \(current): \(errnoDescription(errno))\(permissionHint(errno))")
            }
        }
    }

    private static func groupID(_ name: String, path: String) throws(ControlServerError) -> gid_t {
        var group = Glibc.group()
        var result: UnsafeMutablePointer<Glibc.group>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        let code = getgrnam_r(name, &group, &buffer, buffer.count, &result)
        guard code == 0, result != nil else {
            if let number = gid_t(name) { return number }
            throw ControlServerError("unknown group '\(name)' for the control socket \(path) (create it with groupadd, or fix the group in the config)")
        }
        return group.gr_gid
    }

    private static func permissionHint(_ code: Int32) -> String {
        code == EACCES || code == EPERM ? " (carouseld needs write access there; is it running as the right user, with RuntimeDirectory=carouseld?)" : ""
    }
}
