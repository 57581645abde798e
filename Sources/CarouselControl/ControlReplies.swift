import CarouselPlatform
import CPlatform
#if canImport(Glibc)
import Glibc
#endif

// ControlServer's replies: deferred ones, queued output and backpressure, dropping a client.
extension ControlServer {
    // MARK: Replies that come later

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
    /// is ignored. A `subscribe` answered `.ok` makes the client a
    /// subscriber, as an immediate reply does. Call `synchronize`
    /// afterwards, as after `handle`.
    public func complete(_ ticket: ControlTicket, with response: ControlReply) {
        defer { notifyIfChanged() }
        guard let client = clients[ticket.fd], client.serial == ticket.serial, client.awaiting, !client.closed else {
            return
        }
        client.awaiting = false
        if let awaited = client.awaited, case .ok = response { client.subscribe(awaited) }
        client.awaited = nil
        reply(client, response)
        flush(client)
        if !client.closed, !backpressured(client), !client.input.isEmpty { processInput(client) }
        if !client.closed { finishIfDone(client) }
    }

    func reply(_ client: Client, _ reply: ControlReply) {
        // The daemon's onRequest may have broadcast and dropped this client meanwhile.
        guard !client.closed else { return }
        client.output.append(contentsOf: Array(reply.line.utf8))
        client.output.append(0x0A)
    }

    /// Writes what the socket takes now; the rest waits for EPOLLOUT.
    func flush(_ client: Client) {
        var progressed = false
        defer {
            if client.queued == 0 {
                client.stalledSince = nil
            } else if progressed || client.stalledSince == nil {
                client.stalledSince = clock()
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
    func finishIfDone(_ client: Client) {
        if client.readClosed, client.queued == 0, !client.subscriber, !client.closed, !client.awaiting {
            drop(client, level: .debug, "done")
        }
    }

    func drop(_ client: Client, level: ControlLogLevel, _ reason: String) {
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

    func notifyIfChanged() {
        // Computing the poll set sorts every client: only for a listener.
        guard onDescriptorsChanged != nil else { return }
        let now = pollSet
        guard now != lastPollSet else { return }
        lastPollSet = now
        onDescriptorsChanged?()
    }
}
