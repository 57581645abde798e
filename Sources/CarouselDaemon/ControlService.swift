import CarouselLoop
import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// The control socket on the loop (`[control] socket`, or the one systemd
/// passed): the listener and its clients are its descriptors, idle clients
/// and a listener paused for lack of descriptors its deadline. Requests
/// are answered by the daemon (`Daemon.answer`), screenshots off the loop.
final class ControlService: LoopService {
    let name = "control socket"
    let subscriptions: LoopHappening.Kinds = .configured
    let takesEvents = true
    private unowned let daemon: Daemon
    let server: ControlServer

    /// Opens the socket (or adopts systemd's). Nil, with one line, when it
    /// cannot be opened: the carousel runs on without it.
    init?(daemon: Daemon) {
        let c = daemon.config.control
        let logLine: (LogPriority, String) -> Void = { priority, line in
            log(priority, line)  // the server's lines say "control: " already
        }
        let uids = c.allowUIDs.isEmpty ? nil : Set(c.allowUIDs)
        let gids = c.allowGIDs.isEmpty ? nil : Set(c.allowGIDs)
        do {
            server = if let fd = ControlServer.socketActivationDescriptor() {
                try ControlServer(adopting: fd, allowUIDs: uids, allowGIDs: gids, maxClients: c.maxClients, log: logLine,
                                  clock: daemon.clock)
            } else {
                try ControlServer(path: c.socket, mode: mode_t(c.mode), group: c.group, allowUIDs: uids, allowGIDs: gids,
                                  maxClients: c.maxClients, log: logLine, clock: daemon.clock)
            }
        } catch {
            log(.warning, "no control socket: \(error)")
            return nil
        }
        self.daemon = daemon
        server.onRequest = { [unowned self] request, _ in self.answer(request) }
        log(.info, "control socket: \(c.socket)")
    }

    var interests: [EpollInterest] { server.pollSet }

    /// The listener stays open while it is out of the poll set.
    func keepsOpen(_ fd: Int32) -> Bool { fd == server.listenerDescriptor && fd >= 0 }

    var deadline: Int64? { server.nextDeadline }

    func ready(_ fd: Int32, events: UInt32, now: Int64) {
        server.handle(readyDescriptor: fd, events: events)
    }

    /// Idle connections are closed; a listener paused for lack of
    /// descriptors takes clients again.
    func due(now: Int64) { server.tick(now: now) }

    func observe(_ happening: LoopHappening, now: Int64) {
        guard case .configured = happening else { return }
        let c = daemon.config.control
        server.allowUIDs = c.allowUIDs.isEmpty ? nil : Set(c.allowUIDs)
        server.allowGIDs = c.allowGIDs.isEmpty ? nil : Set(c.allowGIDs)
        server.maxClients = c.maxClients
    }

    func stop() { server.close() }

    /// Every event line to the subscribers, the per-frame ones included.
    func wantsEvents(perFrame: Bool) -> Bool { server.subscriberCount > 0 }

    func publish(eventLine line: String) { server.broadcast(line: line) }

    /// A request from a client: a screenshot is written off the loop into
    /// the path or the file the client sent, and answered when done; the
    /// rest the daemon answers.
    private func answer(_ request: ControlRequest) -> ControlReply {
        guard case let .screenshot(path) = request else { return daemon.answer(request, grant: .controlSocket) }
        let target: ScreenshotDestination
        if let path {
            guard path.hasPrefix("/") else {
                return .error("screenshot needs an absolute path (carouseld's working directory is not yours), got '\(path)'")
            }
            target = .path(path)
        } else {
            guard let file = server.takePassedDescriptor() else {
                return .error("screenshot needs a path, or an open file sent with the line (SCM_RIGHTS) as carouselctl does")
            }
            if let problem = ScreenshotDestination.prepare(file) { return .error("screenshot: \(problem)") }
            target = .descriptor(file)
        }
        let ticket = server.deferReply()
        let server = server
        daemon.screenshot(to: target) { result in
            switch result {
            case let .success(.written(path)): server.complete(ticket, with: .ok(["path": .string(path)]))
            case let .success(.bytes(count)): server.complete(ticket, with: .ok(["bytes": .int(count)]))
            case .success(.png): break
            case let .failure(error): server.complete(ticket, with: .error("screenshot: \(error.reason)"))
            }
        }
        return .ok  // ignored: the reply follows when the file is written
    }
}
