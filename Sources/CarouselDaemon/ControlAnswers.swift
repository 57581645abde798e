import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// The control socket's requests, answered from the running daemon.
extension Daemon {
    /// Token space of the control room's descriptors in the loop's epoll set.
    static let controlTokenBase: UInt64 = 1 << 32

    /// Opens the control socket (or adopts systemd's) and puts it in the loop.
    /// A socket that cannot be opened is logged; the carousel runs on without it.
    func openControlSocket() {
        let c = config.control
        let logLine: (LogPriority, String) -> Void = { priority, line in
            log(priority, line)  // the server's lines say "control: " already
        }
        let uids = c.allowUIDs.isEmpty ? nil : Set(c.allowUIDs)
        let gids = c.allowGIDs.isEmpty ? nil : Set(c.allowGIDs)
        do {
            let server = if let fd = ControlServer.socketActivationDescriptor() {
                try ControlServer(adopting: fd, allowUIDs: uids, allowGIDs: gids, maxClients: c.maxClients, log: logLine)
            } else {
                try ControlServer(path: c.socket, mode: mode_t(c.mode), group: c.group, allowUIDs: uids, allowGIDs: gids,
                                  maxClients: c.maxClients, log: logLine)
            }
            server.onRequest = { [unowned self] request, _ in self.answer(request) }
            control = server
            try synchronizeControl()
            log(.info, "control socket: \(c.socket)")
        } catch {
            log(.warning, "no control socket: \(error)")
        }
    }

    func synchronizeControl() throws(SystemCallError) {
        try control?.synchronize(with: epoll, token: { Daemon.controlTokenBase + UInt64($0) })
    }

    /// Milliseconds since the daemon started: the clock of `uptime_ms`, `next_ms` and event `t`.
    func uptimeMilliseconds(_ microseconds: Int64) -> Int64 { (microseconds - startTime) / 1000 }

    public func answer(_ request: ControlRequest) -> ControlReply {
        noteRequest(request)
        mqttStateMayHaveChanged()
        switch request {
        case .next, .prev, .goto, .pause, .resume, .zoom:
            // `command` is the one mapping of these words to the model's commands.
            if let error = request.command.flatMap(perform) { return .error(error.description) }
            return .ok(status())
        case .status, .subscribe:
            return .ok(status())
        case .list:
            return .ok(["count": .int(album.count), "images": .array(album.paths.map { .string($0) })])
        case .version:
            return .ok(["version": .string(CarouselVersion.string)])
        case let .screenshot(path):
            guard let control else { return .error("no control socket") }
            let target: ScreenshotTarget
            if let path {
                guard path.hasPrefix("/") else {
                    return .error("screenshot needs an absolute path (carouseld's working directory is not yours), got '\(path)'")
                }
                target = .path(path)
            } else {
                guard let file = control.takePassedDescriptor() else {
                    return .error("screenshot needs a path, or an open file sent with the line (SCM_RIGHTS) as carouselctl does")
                }
                if let problem = ScreenshotTarget.prepare(file) { return .error("screenshot: \(problem)") }
                target = .descriptor(file)
            }
            startScreenshot(to: target, ticket: control.deferReply())
            return .ok  // ignored: the reply follows when the file is written
        case let .set(key, value):
            return set(key, value)
        case .reload:
            return reload()
        case .help:
            return .ok([:])
        case let .display(setting):
            if let error = setDisplayPower(setting) {
                return .error("display \(setting.rawValue): \(error)")
            }
            return .ok(status())
        case let .brightness(percent):
            if let error = setBrightness(percent: percent) { return .error("brightness \(percent): \(error)") }
            return .ok(status())
        }
    }

    public func status() -> [String: JSONValue] {
        let now = clock()
        let snap = model.snapshot(at: Timestamp(microseconds: now))
        let autoplay: [String: JSONValue] = [
            "running": .bool(snap.autoplay.running),
            "paused_by": .array(snap.autoplay.pausedBy.map { .string($0.rawValue) }),
            "next_ms": snap.autoplay.next.map { .int(Int(uptimeMilliseconds($0.microseconds))) } ?? .null,
            // Home Assistant's interval number reads it back from the state topic.
            "interval": .double(config.autoplay.interval),
        ]
        let display: [String: JSONValue] = [
            "backend": .string(backend.summary), "connector": .string(backend.connectorName),
            "mode": .string(backend.modeName), "rotation": .int(rotation.rawValue),
            "power": .string(power.isOff ? "off" : "on"), "power_mode": .string(power.mode.rawValue),
            "idle_off_ms": idleOffDeadline.map { .int(Int(uptimeMilliseconds($0))) } ?? .null,
            "schedule": config.power.schedule == nil ? .null : .string(power.scheduledOff ? "off" : "on"),
            "schedule_change_ms": power.nextScheduleChange.map { .int(Int(uptimeMilliseconds($0))) } ?? .null,
            "backlight": backlight.device.map { .string($0.name) } ?? .null,
            "brightness": backlight.device == nil ? .null : .int(backlight.lit),
            "dimmed": .bool(backlight.dimmed),
            "dim_ms": dimDeadline.map { .int(Int(uptimeMilliseconds($0))) } ?? .null,
        ]
        return [
            "index": .int(snap.index), "count": .int(album.count), "offset": .double(snap.offset),
            "page": .int(snap.page), "state": .string(snap.state.rawValue), "autoplay": .object(autoplay),
            "display": .object(display), "image": album.path(snap.index).map { .string($0) } ?? .null,
            "frames": .int(pacer.framesPresented), "uptime_ms": .int(Int(uptimeMilliseconds(now))),
            "version": .string(CarouselVersion.string),
            // The zoomed picture's scale now, and where a zoom in flight is heading.
            "zoom": .double(model.zoomScale(at: Timestamp(microseconds: now))), "zoom_target": .double(model.zoomTarget),
        ]
    }

    /// Every model event to the subscribers, one JSON line each; to MQTT's
    /// event topic all but the per-frame ones (`didScroll`, `didZoom`).
    func broadcast(_ event: CarouselEvent) {
        if !event.kind.isPerFrame { mqttStateMayHaveChanged() }
        let toSubscribers = (control?.subscriberCount ?? 0) > 0
        let toMQTT = mqttWants(event.kind)
        guard toSubscribers || toMQTT else { return }
        var fields: [String: JSONValue] = ["t": .int(Int(uptimeMilliseconds(event.time.microseconds)))]
        switch event.kind {
        case let .didScroll(offset): fields["offset"] = .double(offset)
        case let .didEndDragging(willDecelerate): fields["willDecelerate"] = .bool(willDecelerate)
        case let .didZoom(scale), let .didEndZooming(scale): fields["scale"] = .double(scale)
        default: break
        }
        if let index = event.kind.index { fields["index"] = .int(index) }
        let line = controlEventLine(event.kind.name, fields)
        if toMQTT { publishMQTTEvent(line) }
        guard toSubscribers, let control else { return }
        control.broadcast(line: line)
        try? synchronizeControl()
    }
}
