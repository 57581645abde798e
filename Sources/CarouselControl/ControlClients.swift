import CarouselPlatform
import CPlatform
#if canImport(Glibc)
import Glibc
#endif

// ControlServer's clients: admission (peer credentials, allowed ids, the spare descriptor), reading and framing request lines.
extension ControlServer {
    // MARK: Clients

    func acceptClients() {
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
            let now = clock()
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
    func refuseWithSpare(_ error: SystemCallError) -> Bool {
        let now = clock()
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
    static func openSpare() -> Int32 {
        open("/dev/null", O_RDONLY | O_CLOEXEC)
    }

    func allowed(_ peer: ControlPeer) -> Bool {
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
    func refuse(_ fd: FileDescriptor, _ reply: ControlReply) {
        let bytes = Array((reply.line + "\n").utf8)
        _ = try? attemptSystemCall("send") {
            bytes.withUnsafeBytes { send(fd.raw, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        }
        fd.close()
    }

    static func credentials(of fd: Int32) -> ControlPeer {
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
    func backpressured(_ client: Client) -> Bool { client.queued >= maximumQueuedBytes / 2 }

    func read(_ client: Client) {
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
            client.lastHeard = clock()
            client.input.append(contentsOf: buffer[0..<count])
            processInput(client)
        }
    }

    func processInput(_ client: Client) {
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

    static let tooLongMessage = "request line longer than \(maximumRequestBytes) bytes; it was discarded"

    func answer(_ client: Client, _ bytes: ArraySlice<UInt8>) {
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
            if client.awaiting {
                client.awaited = request
                return
            }
            if case .ok = response { client.subscribe(request) }
            reply(client, response)
        }
    }
}
