import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselMQTT
import CarouselPlatform
import CPlatform
import CarouselImaging
import CarouselRender
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's MQTT side: the link to the broker (`MQTTLink`), the
/// protocol (`FrameProtocol`, no I/O), the state publisher, what discovery
/// announced, a screenshot on its way.
final class MQTTSession {
    let link: MQTTLink
    var frame: FrameProtocol { link.frame }
    var state = StatePublisher()
    /// Discovery topics announced on this broker, to remove them when
    /// discovery is turned off or the device renamed.
    var announced: [String] = []
    /// The last failure logged at warning level: the same again goes to debug
    /// (a broker away for an hour is one line, not one per attempt).
    var lastFailure: String?
    /// Screenshots encoded off the loop, waiting to be published.
    let screenshots = MQTTScreenshots()

    init(link: MQTTLink) { self.link = link }
}

final class MQTTScreenshots: Sendable {
    let done = Mutex<[Result<[UInt8], PNGWriteErrorText>]>([])
}

struct PNGWriteErrorText: Error { let text: String }

extension Daemon {
    /// Whether the display has a backlight the daemon drives: discovery then
    /// announces a brightness number (`brightness N`, state `display.brightness`).
    var hasBacklight: Bool { backlight.device != nil }

    /// Starts the MQTT client for `[mqtt]`, if a broker is set. A client that
    /// cannot be made is one error line; the carousel runs on without it.
    /// `announced`: what a client before this one announced on the same
    /// broker; what this one does not announce is removed once it is connected.
    func startMQTT(announced: [String] = []) {
        let settings = config.mqtt
        guard settings.broker != nil else { return }
        let identity = FrameIdentity(clientID: settings.effectiveClientID, topic: settings.effectiveTopic,
                                     discoveryPrefix: settings.discoveryPrefix, version: CarouselVersion.string,
                                     hasBacklight: hasBacklight)
        do {
            let password = try settings.readPassword()
            let link = try MQTTLink(settings: settings, frame: FrameProtocol(identity: identity), password: password)
            try epoll.add(link.wakeup.fd.raw, token: Token.mqttWake.rawValue)
            mqtt = MQTTSession(link: link)
            mqtt?.announced = announced
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
    func stopMQTT(reconfiguredTo next: FrameProtocol?? = .none) {
        guard let session = mqtt else { return }
        let remove: [String]
        if case let .some(next) = next {
            let keep = Set(next?.discoveryTopics ?? [])
            remove = session.announced.filter { !keep.contains($0) }
        } else {
            remove = []
        }
        if !remove.isEmpty, session.link.phase == .connected {
            for m in FrameProtocol.removal(of: remove) { session.link.publish(m) }
            log(.info, "mqtt: removed \(remove.count) Home Assistant entities")
        }
        session.link.close()
        unregisterMQTTSocket(session.link)
        epoll.remove(session.link.wakeup.fd.raw)
        mqtt = nil
    }

    /// After a reload or `set`: changed `[mqtt]` keys reconnect with the new ones.
    func mqttConfigurationApplied(old: Configuration) {
        mqttStateMayHaveChanged()
        guard config.mqtt != old.mqtt else { return }
        let s = config.mqtt
        let next = s.broker == nil ? nil : FrameProtocol(identity: FrameIdentity(
            clientID: s.effectiveClientID, topic: s.effectiveTopic, discoveryPrefix: s.discoveryPrefix,
            version: CarouselVersion.string, hasBacklight: hasBacklight))
        // Same broker: the next client removes, once connected, what it does
        // not announce again (the old connection may be cut by the broker
        // before it reads the removals: the new one takes over its client id);
        // elsewhere, the old client removes all before it goes.
        let sameBroker = s.broker == old.mqtt.broker && next != nil
        let announced = mqtt?.announced ?? []
        stopMQTT(reconfiguredTo: .some(sameBroker ? next : nil))
        if s.broker == nil { log(.info, "mqtt: off") }
        startMQTT(announced: sameBroker ? announced : [])
    }

    /// When the loop must wake for MQTT (µs): the link's next step, the state's next look.
    var mqttDeadline: Int64? {
        guard let session = mqtt else { return nil }
        let state = session.link.phase == .connected ? session.state.deadline : nil
        return [session.link.deadline, state].compactMap { $0 }.min()
    }

    /// The loop's pass: the link's timers, then the state if it is due.
    func serviceMQTT(now: Int64) {
        guard let session = mqtt else { return }
        session.link.tick(now: now)
        afterMQTTCall(session)
        if session.link.phase == .connected,
           let status = session.state.take(now: now, status: { self.status() }) {
            session.link.publish(session.frame.state(status))
            syncMQTTSocket(session)
        }
    }

    /// The broker's socket or the worker's wake-up is ready.
    func mqttReady(_ token: Token, events: UInt32) {
        guard let session = mqtt else { return }
        switch token {
        case .mqttWake:
            session.link.wakeup.acknowledge()
            finishMQTTScreenshots(session)
        default:
            if events & ~ControlServer.writable != 0 { session.link.readable() }
            if events & ControlServer.writable != 0, mqtt === session { session.link.writable() }
        }
        if mqtt === session { afterMQTTCall(session) }
    }

    /// Acts on what libmosquitto reported, then puts its socket in the epoll set as it now is.
    private func afterMQTTCall(_ session: MQTTSession) {
        for happening in session.link.take() {
            guard mqtt === session else { return }  // a command reloaded [mqtt]: this client is gone
            switch happening {
            case .connected(0):
                session.link.accepted()
                session.lastFailure = nil
                log(.info, "mqtt: connected to \(session.link.broker)")
                for topic in session.frame.subscriptions { session.link.subscribe(topic) }
                session.link.publish(session.frame.online)
                let discovery = session.frame.discovery
                for m in discovery { session.link.publish(m) }
                let stale = session.announced.filter { !discovery.map(\.topic).contains($0) }
                for m in FrameProtocol.removal(of: stale) { session.link.publish(m) }
                if !stale.isEmpty { log(.info, "mqtt: removed \(stale.count) Home Assistant entities announced before") }
                session.announced = discovery.map(\.topic)
                session.state.connected()
            case let .connected(code):
                mqttFailure(session, "\(session.link.broker) refused the connection: \(MQTTLink.describeRefusal(code))")
            case let .disconnected(code):
                unregisterMQTTSocket(session.link)
                let wasConnected = session.link.phase == .connected
                session.link.lost()
                // A refusal said why already; a clean end (code 0) is ours.
                if code != 0, session.lastFailure == nil || wasConnected {
                    mqttFailure(session, "connection to \(session.link.broker) \(wasConnected ? "lost" : "failed"): "
                                + MQTTLink.describe(code, errno))
                }
            case let .attemptFailed(reason):
                unregisterMQTTSocket(session.link)
                mqttFailure(session, "cannot reach \(session.link.broker): \(reason)")
            case let .message(topic, payload):
                guard session.frame.isCommandTopic(topic) else { continue }
                mqttCommand(payload, session)
            }
        }
        if mqtt === session { syncMQTTSocket(session) }
    }

    /// One line per new reason, with the retry; the same reason again only at debug level.
    private func mqttFailure(_ session: MQTTSession, _ line: String) {
        let retry = session.link.retryAt.map { " (trying again in \(max(($0 - clock()) / 1_000_000, 0) + 1) s; the carousel runs on)" } ?? ""
        if line == session.lastFailure {
            log(.debug, "mqtt: \(line)\(retry)")
        } else {
            log(.warning, "mqtt: \(line)\(retry)")
            session.lastFailure = line
        }
    }

    /// A message on a command topic: a request of the socket's language,
    /// answered on the reply topic with the socket's JSON.
    private func mqttCommand(_ payload: [UInt8], _ session: MQTTSession) {
        let reply: ControlReply
        switch FrameProtocol.request(payload: payload) {
        case let .failure(error):
            reply = .error(error.message)
        case .success(.screenshot):
            startMQTTScreenshot(session)
            return  // the reply follows the picture
        case let .success(request):
            reply = answer(request)
        }
        // `reload` may have replaced the client: the reply goes out on the one there is.
        mqtt?.link.publish((mqtt ?? session).frame.reply(reply))
    }

    /// Keeps the epoll set in step with libmosquitto's socket: readable
    /// always, writable while it has something queued.
    private func syncMQTTSocket(_ session: MQTTSession) {
        let link = session.link
        let fd = link.socket
        let write = link.wantsWrite
        if fd == link.registered, write == link.registeredForWriting { return }
        unregisterMQTTSocket(link)
        guard let fd else { return }
        do {
            try epoll.add(fd, token: Token.mqttSocket.rawValue, events: ControlServer.readable | (write ? ControlServer.writable : 0))
            link.registered = fd
            link.registeredForWriting = write
        } catch {
            log(.error, "mqtt: cannot watch the broker's socket: \(error)")
        }
    }

    private func unregisterMQTTSocket(_ link: MQTTLink) {
        // The descriptor may be closed already (libmosquitto closed it): removing then fails harmlessly.
        if let fd = link.registered { epoll.remove(fd) }
        link.registered = nil
        link.registeredForWriting = false
    }

    /// Something happened that may show in `status` (an event, a request, the display's power).
    func mqttStateMayHaveChanged() { mqtt?.state.noteChange() }

    /// An event line of the control socket's stream, also on the event topic.
    func publishMQTTEvent(_ line: String) {
        guard let session = mqtt, session.link.phase == .connected else { return }
        session.link.publish(session.frame.event(line: line))
        syncMQTTSocket(session)
    }

    /// Whether MQTT takes this event: all but the per-frame ones (`didScroll`,
    /// `didZoom`; `didEndZooming` carries the scale a zoom came to rest at).
    func mqttWants(_ kind: CarouselEventKind) -> Bool {
        if kind.isPerFrame { return false }
        return mqtt?.link.phase == .connected
    }

    // MARK: - The screenshot as an image entity

    /// `screenshot` over MQTT: the screen as a PNG, encoded off the loop,
    /// published on the screenshot topic; the reply says how many bytes.
    private func startMQTTScreenshot(_ session: MQTTSession) {
        let (panel, rotation) = composeScreenshot()
        let wake = session.link.wakeup
        let results = session.screenshots
        Self.screenshotQueue.async {
            let copy = panel.upright(from: rotation)
            let result: Result<[UInt8], PNGWriteErrorText>
            // An anonymous file in memory (gone when closed) takes the PNG
            // writer's output: the service's /tmp is read-only.
            let fd = cplatform_memory_file("carouseld-screenshot")
            if fd < 0 {
                result = .failure(PNGWriteErrorText(text: "no temporary file: \(errnoDescription(errno))"))
            } else {
                do throws(PNGWriteError) {
                    try copy.writePNG(toDescriptor: fd)
                    let size = Int(lseek(fd, 0, SEEK_END))
                    var bytes = [UInt8](repeating: 0, count: size)
                    let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, size, 0) }
                    result = n == size ? .success(bytes) : .failure(PNGWriteErrorText(text: "reading the PNG back failed"))
                } catch {
                    result = .failure(PNGWriteErrorText(text: error.reason))
                }
                close(fd)
            }
            results.done.withLock { $0.append(result) }
            wake.signal()
        }
    }

    private func finishMQTTScreenshots(_ session: MQTTSession) {
        let done = session.screenshots.done.withLock { all in
            defer { all = [] }
            return all
        }
        for result in done {
            switch result {
            case let .success(png):
                session.link.publish(session.frame.screenshot(png: png))
                session.link.publish(session.frame.reply(.ok(["bytes": .int(png.count),
                                                                "topic": .string(session.frame.screenshotTopic)])))
            case let .failure(error):
                session.link.publish(session.frame.reply(.error("screenshot: \(error.text)")))
            }
        }
    }
}
