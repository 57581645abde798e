import CarouselLoop
import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselMQTT
import CarouselPlatform
#if canImport(Glibc)
import CarouselCapabilities
import Glibc
#endif

/// The frame's MQTT side on the loop, while `[mqtt] broker` is set: the
/// link to the broker (`MQTTLink`), the protocol (`FrameProtocol`, no I/O),
/// the state publisher, what discovery announced. Its descriptors are the
/// broker's socket (readable always, writable while libmosquitto has
/// something queued); a connect resolved off the loop comes back through
/// its context (`ServiceContext.run`). A command is asked of the loop
/// (`ServiceContext.request`, under MQTT's grant) and its reply published
/// when the loop hands it back; the state topic reads `status` (`LoopView`).
public final class MQTTService: LoopService {
    public let name = "mqtt"
    public let subscriptions: LoopHappening.Kinds = [.stateChanged, .configured]
    public let takesEvents = true
    private let context: ServiceContext
    private(set) var link: MQTTLink?
    private var state = StatePublisher()
    /// Discovery topics announced on this broker, to remove them when
    /// discovery is turned off or the device renamed.
    private var announced: [String] = []
    /// The last failure logged at warning level: the same again goes to debug
    /// (a broker away for an hour is one line, not one per attempt).
    private var lastFailure: String?
    /// Bumped whenever libmosquitto's socket may have been closed, so that a
    /// new socket with the old number is registered anew.
    private var socketSerial: UInt64 = 0
    /// When the last line about a dropped message was logged (µs), and how
    /// many were dropped since.
    private var lastDropLine: Int64?
    private var droppedSinceLine = 0
    static let dropLineInterval: Int64 = 60_000_000

    public init(context: ServiceContext) {
        self.context = context
        start()
    }

    private var connected: Bool { link?.phase == .connected }

    /// The identity `config` gives this frame on the broker, if a broker is set.
    private func frameProtocol(_ settings: MQTTConfig) -> FrameProtocol? {
        guard settings.broker != nil else { return nil }
        return FrameProtocol(identity: FrameIdentity(
            clientID: settings.effectiveClientID, topic: settings.effectiveTopic, discoveryPrefix: settings.discoveryPrefix,
            version: CarouselVersion.string, hasBacklight: context.view.hasBacklight,
            capabilityEntities: Capabilities.entities(shownWith: context.view.config)))
    }

    /// Starts the client for `[mqtt]`, if a broker is set. A client that
    /// cannot be made is one error line; the carousel runs on without it.
    /// `announced`: what a client before this one announced on the same
    /// broker; what this one does not announce is removed once it is connected.
    private func start(announced: [String] = []) {
        let settings = context.view.config.mqtt
        guard let frame = frameProtocol(settings) else { return }
        let identity = frame.identity
        do {
            let password = try settings.readPassword()
            let link = try MQTTLink(settings: settings, frame: frame, password: password, executor: context)
            link.onHandBack = { [weak self, unowned link] in
                guard let self, self.link === link else { return }
                self.afterCall(link)
            }
            self.link = link
            state = StatePublisher()
            lastFailure = nil
            socketSerial += 1
            self.announced = announced
            log(.info, "mqtt: \(settings.broker!) as \(identity.clientID), topic \(identity.topic)"
                + (identity.discoveryPrefix.isEmpty ? ", no discovery" : ", discovery under \(identity.discoveryPrefix)"))
        } catch {
            log(.error, "mqtt: not started: \(error); the carousel runs without it")
        }
    }

    /// Says goodbye (`offline`, DISCONNECT) and drops the client. On a
    /// reconfiguration (`next`: what the next client is, nil for none), first
    /// removes the discovery entities the next client will not announce;
    /// when the daemon stops they stay (unavailable until it is back).
    private func close(reconfiguredTo next: FrameProtocol?? = .none) {
        guard let link else { return }
        let remove: [String]
        if case let .some(next) = next {
            let keep = Set(next?.discoveryTopics ?? [])
            remove = announced.filter { !keep.contains($0) }
        } else {
            remove = []
        }
        if !remove.isEmpty, link.phase == .connected {
            for m in FrameProtocol.removal(of: remove) { link.publish(m) }
            log(.info, "mqtt: removed \(remove.count) Home Assistant entities")
        }
        link.close()
        self.link = nil
    }

    public func stop() { close() }

    public var interests: [EpollInterest] {
        guard let link else { return [] }
        var wanted: [EpollInterest] = []
        if let fd = link.socket {
            wanted.append(EpollInterest(fd: fd, events: EpollInterest.readable | (link.wantsWrite ? EpollInterest.writable : 0),
                                        serial: socketSerial))
        }
        return wanted
    }

    /// A connection's socket outlives the connection in libmosquitto: one it
    /// no longer wants watched is taken out of the set by hand.
    public func keepsOpen(_ fd: Int32) -> Bool { link?.openSocket == fd }

    /// When the loop must wake for MQTT (µs): the link's next step, the state's next look.
    public var deadline: Int64? {
        guard let link else { return nil }
        let due = connected ? state.deadline : nil
        return [link.deadline, due].compactMap { $0 }.min()
    }

    /// The link's timers, then the state if it is due.
    public func due(now: Int64) {
        guard let link else { return }
        link.tick(now: now)
        afterCall(link)
        if self.link === link, link.phase == .connected,
           let status = state.take(now: now, status: { self.context.view.status() }) {
            link.publish(link.frame.state(status))
        }
    }

    /// The broker's socket is ready.
    public func ready(_ fd: Int32, events: UInt32, now: Int64) {
        guard let link else { return }
        if events & ~EpollInterest.writable != 0 { link.readable() }
        if events & EpollInterest.writable != 0, self.link === link { link.writable() }
        if self.link === link { afterCall(link) }
    }

    /// Acts on what libmosquitto reported.
    private func afterCall(_ link: MQTTLink) {
        for happening in link.take() {
            guard self.link === link else { return }  // a client replaced meanwhile reports nothing more
            switch happening {
            case .connected(0):
                link.accepted()
                lastFailure = nil
                log(.info, "mqtt: connected to \(link.broker)")
                for topic in link.frame.subscriptions { link.subscribe(topic) }
                link.publish(link.frame.online)
                let discovery = link.frame.discovery
                for m in discovery { link.publish(m) }
                let stale = announced.filter { !discovery.map(\.topic).contains($0) }
                for m in FrameProtocol.removal(of: stale) { link.publish(m) }
                if !stale.isEmpty { log(.info, "mqtt: removed \(stale.count) Home Assistant entities announced before") }
                announced = discovery.map(\.topic)
                state.connected()
            case let .connected(code):
                failure(link, "\(link.broker) refused the connection: \(MQTTLink.describeRefusal(code))")
            case let .disconnected(code):
                socketSerial += 1
                let wasConnected = link.phase == .connected
                link.lost()
                // A refusal said why already; a clean end (code 0) is ours.
                if code != 0, lastFailure == nil || wasConnected {
                    failure(link, "connection to \(link.broker) \(wasConnected ? "lost" : "failed"): "
                            + MQTTLink.describe(code, errno))
                }
            case let .attemptFailed(reason):
                socketSerial += 1
                failure(link, "cannot reach \(link.broker): \(reason)")
            case let .message(topic, payload):
                guard link.frame.isCommandTopic(topic) else { continue }
                command(payload, link)
            case let .oversized(topic, bytes):
                dropped(topic: topic, bytes: bytes)
            }
        }
    }

    /// A message too long to be a command: one warning line, then at most
    /// one a minute saying how many more were dropped, so that a publisher
    /// sending them in a loop cannot fill the journal either.
    private func dropped(topic: String, bytes: Int) {
        let now = context.now
        droppedSinceLine += 1
        if let last = lastDropLine, now - last < Self.dropLineInterval { return }
        let more = droppedSinceLine > 1 ? " (and \(droppedSinceLine - 1) more since the last such line)" : ""
        log(.warning, "mqtt: dropped a message of \(bytes) bytes on \(topic): a command is at most"
            + " \(FrameProtocol.maximumPayload) bytes\(more)")
        lastDropLine = now
        droppedSinceLine = 0
    }

    /// One line per new reason, with the retry; the same reason again only at debug level.
    private func failure(_ link: MQTTLink, _ line: String) {
        let retry = link.retryAt.map { " (trying again in \(max(($0 - context.now) / 1_000_000, 0) + 1) s; the carousel runs on)" } ?? ""
        if line == lastFailure {
            log(.debug, "mqtt: \(line)\(retry)")
        } else {
            log(.warning, "mqtt: \(line)\(retry)")
            lastFailure = line
        }
    }

    /// A message on a command topic: a request of the socket's language,
    /// answered on the reply topic with the socket's JSON once the loop
    /// hands the daemon's answer back.
    private func command(_ payload: [UInt8], _ link: MQTTLink) {
        switch FrameProtocol.request(payload: payload) {
        case let .failure(error):
            reply(.error(error.message), link)
        case .success(.screenshot):
            screenshot()  // the reply follows the picture
        case let .success(request):
            context.request(request, grant: .mqtt) { [weak self] answer in self?.reply(answer, link) }
        }
    }

    private func reply(_ reply: ControlReply, _ link: MQTTLink) {
        // `reload` may have replaced the client: the reply goes out on the one there is.
        self.link?.publish((self.link ?? link).frame.reply(reply))
    }

    /// `screenshot` over MQTT: the screen as a PNG, encoded off the loop,
    /// published on the screenshot topic (an image entity); the reply says
    /// how many bytes.
    private func screenshot() {
        if context.view.secretOnScreen {
            if let link { link.publish(link.frame.reply(.error("screenshot: refused while a pairing code is on the screen"))) }
            return
        }
        context.screenshot(to: .memory) { [weak self] result in
            guard let self, let link = self.link else { return }
            switch result {
            case let .success(.png(png)):
                link.publish(link.frame.screenshot(png: png))
                link.publish(link.frame.reply(.ok(["bytes": .int(png.count), "topic": .string(link.frame.screenshotTopic)])))
            case .success:
                break
            case let .failure(error):
                link.publish(link.frame.reply(.error("screenshot: \(error.reason)")))
            }
        }
    }

    /// An event line of the control socket's stream, on the event topic:
    /// all but the per-frame ones (`didScroll`, `didZoom`; `didEndZooming`
    /// carries the scale a zoom came to rest at).
    public func wantsEvents(perFrame: Bool) -> Bool { !perFrame && connected }

    public func publish(eventLine line: String) {
        guard let link, link.phase == .connected else { return }
        link.publish(link.frame.event(line: line))
    }

    public func observe(_ happening: LoopHappening, now: Int64) {
        switch happening {
        case .stateChanged:
            state.noteChange()
        case let .configured(old):
            state.noteChange()
            // A sensor added or removed changes what discovery announces.
            reconfigure(old: old.mqtt, announces: Capabilities.entities(shownWith: old) != Capabilities.entities(shownWith: context.view.config))
        default:
            break
        }
    }

    /// After a reload or `set`: changed `[mqtt]` keys reconnect with the new ones.
    private func reconfigure(old: MQTTConfig, announces changed: Bool = false) {
        let s = context.view.config.mqtt
        guard s != old || changed else { return }
        let next = frameProtocol(s)
        // Same broker: the next client removes, once connected, what it does
        // not announce again (the old connection may be cut by the broker
        // before it reads the removals: the new one takes over its client id);
        // elsewhere, the old client removes all before it goes.
        let sameBroker = s.broker == old.broker && next != nil
        let announced = self.announced
        close(reconfiguredTo: .some(sameBroker ? next : nil))
        if s.broker == nil { log(.info, "mqtt: off") }
        start(announced: sameBroker ? announced : [])
    }
}
