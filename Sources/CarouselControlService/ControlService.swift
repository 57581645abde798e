import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselLoop
import CarouselPlatform
import CarouselWebWords
#if canImport(Glibc)
import Glibc
#endif

/// The control socket on the loop (`[control] socket`, or the one systemd
/// passed): the listener and its clients are its descriptors, idle clients
/// and a listener paused for lack of descriptors its deadline. Requests
/// are asked of the loop (`ServiceContext.request`) and answered by the
/// daemon after this returns: every reply the daemon gives is deferred
/// (`ControlServer.deferReply`, the client's further requests wait), and
/// written when the loop hands it back. Screenshots are asked for the same
/// way and written off the loop.
public final class ControlService: LoopService {
    public let name = "control socket"
    public let subscriptions: LoopHappening.Kinds = .configured
    public let takesEvents = true
    private let context: ServiceContext
    let server: ControlServer
    /// The uid of `[web] user`, whose connections get the web's grant; nil
    /// when no such user exists (the web is run by hand as someone else).
    private var webUID: UInt32?

    /// Opens the socket (or adopts systemd's). Nil, with one line, when it
    /// cannot be opened: the carousel runs on without it.
    public init?(context: ServiceContext) {
        let c = context.view.config.control
        let logLine: (LogPriority, String) -> Void = { priority, line in
            log(priority, line)  // the server's lines say "control: " already
        }
        let uids = c.allowUIDs.isEmpty ? nil : Set(c.allowUIDs)
        let gids = c.allowGIDs.isEmpty ? nil : Set(c.allowGIDs)
        let clock = { context.now }
        do {
            server = if let fd = ControlServer.socketActivationDescriptor() {
                try ControlServer(adopting: fd, allowUIDs: uids, allowGIDs: gids, maxClients: c.maxClients, log: logLine,
                                  clock: clock)
            } else {
                try ControlServer(path: c.socket, mode: mode_t(c.mode), group: c.group, allowUIDs: uids, allowGIDs: gids,
                                  maxClients: c.maxClients, log: logLine, clock: clock)
            }
        } catch {
            log(.warning, "no control socket: \(error)")
            return nil
        }
        self.context = context
        webUID = Self.uid(of: context.view.config[WebSettings.self].user)
        server.onRequest = { [unowned self] request, peer in self.answer(request, grant: self.grant(for: peer)) }
        log(.info, "control socket: \(c.socket)")
    }

    public var interests: [EpollInterest] { server.pollSet }

    /// The listener stays open while it is out of the poll set.
    public func keepsOpen(_ fd: Int32) -> Bool { fd == server.listenerDescriptor && fd >= 0 }

    public var deadline: Int64? { server.nextDeadline }

    public func ready(_ fd: Int32, events: UInt32, now: Int64) {
        server.handle(readyDescriptor: fd, events: events)
    }

    /// Idle connections are closed; a listener paused for lack of
    /// descriptors takes clients again.
    public func due(now: Int64) { server.tick(now: now) }

    public func observe(_ happening: LoopHappening, now: Int64) {
        guard case .configured = happening else { return }
        let c = context.view.config.control
        server.allowUIDs = c.allowUIDs.isEmpty ? nil : Set(c.allowUIDs)
        server.allowGIDs = c.allowGIDs.isEmpty ? nil : Set(c.allowGIDs)
        server.maxClients = c.maxClients
        webUID = Self.uid(of: context.view.config[WebSettings.self].user)
    }

    /// What a peer may do: the web's user the web's grant; everyone else
    /// the socket lets in, everything.
    func grant(for peer: ControlPeer) -> Grant {
        Self.grant(for: peer, webUID: webUID)
    }

    static func grant(for peer: ControlPeer, webUID: UInt32?) -> Grant {
        peer.uid == webUID ? .web : .controlSocket
    }

    /// The uid of user `name`, nil when there is none (or it is root's: root
    /// keeps every grant).
    static func uid(of name: String) -> UInt32? {
        guard let entry = getpwnam(name), entry.pointee.pw_uid != 0 else { return nil }
        return entry.pointee.pw_uid
    }

    public func stop() { server.close() }

    /// Every event line to the subscribers; the per-frame ones only to
    /// those that take them (`subscribe`, not `subscribe changes`), and
    /// made only when one does.
    public func wantsEvents(perFrame: Bool) -> Bool {
        perFrame ? server.everyFrameSubscriberCount > 0 : server.subscriberCount > 0
    }

    public func publish(eventLine line: String) { server.broadcast(line: line) }

    public func publish(eventLine line: String, perFrame: Bool) { server.broadcast(line: line, perFrame: perFrame) }

    /// A request from a client: the daemon answers it, and its reply is
    /// written when the loop hands it back; a screenshot is written off the
    /// loop into the path or the file the client sent, and answered when
    /// done. What is wrong with a screenshot's target is answered at once.
    private func answer(_ request: ControlRequest, grant: Grant) -> ControlReply {
        let target: ScreenshotDestination
        switch request {
        case .screenshot(.some) where !grant.allows(.administer):
            return .error(grant.refusal(of: request.refusalName, needing: .administer) ?? "screenshot PATH is not granted")
        case let .screenshot(path?):
            guard path.hasPrefix("/") else {
                return .error("screenshot needs an absolute path (carouseld's working directory is not yours), got '\(path)'")
            }
            target = .path(path)
        case .screenshot(nil):
            guard let file = server.takePassedDescriptor() else {
                return .error("screenshot needs a path, or an open file sent with the line (SCM_RIGHTS) as carouselctl does")
            }
            if let problem = Self.prepare(file) { return .error("screenshot: \(problem)") }
            target = .descriptor(file)
        case .screenshotPixels:
            guard let file = server.takePassedDescriptor() else {
                return .error("screenshot raw needs an open file sent with the line (SCM_RIGHTS)")
            }
            if let problem = Self.prepare(file) { return .error("screenshot: \(problem)") }
            target = .pixels(file)
        default:
            let ticket = server.deferReply()
            context.request(request, grant: grant) { [server] reply in server.complete(ticket, with: reply) }
            return .ok  // ignored: the reply follows when the loop hands it back
        }
        let ticket = server.deferReply()
        context.screenshot(to: target) { [server] result in
            switch result {
            case let .success(.written(path)): server.complete(ticket, with: .ok(["path": .string(path)]))
            case let .success(.bytes(count)): server.complete(ticket, with: .ok(["bytes": .int(count)]))
            case let .success(.pixels(width, height, stride)):
                server.complete(ticket, with: .ok(["width": .int(width), "height": .int(height), "stride": .int(stride),
                                                   "format": .string("XRGB8888")]))
            case .success(.png): break
            case let .failure(error): server.complete(ticket, with: .error("screenshot: \(error.reason)"))
            }
        }
        return .ok  // ignored: the reply follows when the file is written
    }

    /// Readies a passed descriptor for a PNG (emptied, at its start), or
    /// says why it cannot take one: it must be a regular file open for
    /// writing (a pipe or socket could block the writer for ever; a
    /// terminal or device is no place for one).
    static func prepare(_ file: FileDescriptor) -> String? {
        var info = stat()
        guard fstat(file.raw, &info) == 0 else { return "the file sent cannot be examined: \(String(cString: strerror(errno)))" }
        guard info.st_mode & S_IFMT == S_IFREG else { return "the descriptor sent is not a regular file" }
        let mode = fcntl(file.raw, F_GETFL) & O_ACCMODE
        guard mode == O_WRONLY || mode == O_RDWR else { return "the file sent is not open for writing" }
        // Start from an empty file, whatever it held.
        if ftruncate(file.raw, 0) != 0 || lseek(file.raw, 0, SEEK_SET) != 0 {
            return "the file sent cannot be emptied: \(String(cString: strerror(errno)))"
        }
        return nil
    }
}
