import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselLoop
import CarouselPlatform
import CarouselPresenceWords
import CarouselRender
#if canImport(Glibc)
import Glibc
#endif

/// The control socket's requests, answered from the running daemon.
extension Daemon {
    /// Milliseconds since the daemon started: the clock of `uptime_ms`, `next_ms` and event `t`.
    public func uptimeMilliseconds(_ microseconds: Int64) -> Int64 { (microseconds - startTime) / 1000 }

    /// Answers `request` from a way in holding `grant`: what the grant does
    /// not allow is one error reply naming the grant, and changes nothing.
    public func answer(_ request: ControlRequest, grant: Grant) -> ControlReply {
        let needed = request.capability(keyCapability: Schema.capability(ofKey:))
        if let refusal = grant.refusal(of: request.refusalName, needing: needed) {
            log(.debug, "refused \(request.refusalName) from \(grant.name): not granted (\(needed.rawValue))")
            return .error(refusal)
        }
        noteRequest(request)
        tell(.stateChanged)
        switch request {
        case .next, .prev, .goto, .pause, .play, .resume, .zoom:
            // `command` is the one mapping of these words to the model's commands.
            if let error = request.command.flatMap(perform) { return .error(error.description) }
            return .ok(status())
        case .status, .subscribe, .subscribeChanges:
            return .ok(status())
        case .list:
            return .ok(["count": .int(album.pictureCount), "images": .array(album.paths.map { .string($0) }),
                        "hidden": .array(album.hidden.sorted().map { .string($0) })])
        case .version:
            return .ok(["version": .string(CarouselVersion.string)])
        case .screenshot, .screenshotPixels:
            // Written off the loop and answered later: the socket's and MQTT's services take it.
            return .error("screenshot is taken through the control socket or MQTT")
        case let .set(key, value):
            return set(key, value)
        case let .keep(key, value):
            return keep(key, value)
        case let .forget(key):
            return forget(key)
        case let .hide(name):
            return hide(name)
        case let .unhide(name):
            return unhide(name)
        case .reload:
            return reload()
        case .help:
            return ControlReply.help
        case let .display(setting):
            if let error = setDisplayPower(setting) {
                return .error("display \(setting.rawValue): \(error)")
            }
            return .ok(status())
        case let .brightness(percent):
            if let error = setBrightness(percent: percent) { return .error("brightness \(percent): \(error)") }
            return .ok(status())
        case .declared:
            // A capability's own requests: the service that serves it carries them out.
            switch services.handle(request, now: clock()) {
            case .done?: return .ok(status())
            case let .failed(error)?: return .error(error)
            case let .answered(fields)?: return .ok(fields)
            case nil: return .error("\(request.refusalName) is not served on this frame")
            }
        }
    }

    public func status() -> [String: JSONValue] {
        let now = clock()
        let snap = model.snapshot(at: Timestamp(microseconds: now))
        let autoplay: [String: JSONValue] = [
            // On or off as a user switches it (`[autoplay] enabled`, then `pause`/`resume`): Home Assistant's switch.
            "enabled": .bool(snap.autoplay.enabled),
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
            "dimmed": .bool(power.dimmed),
            "dim_ms": dimDeadline.map { .int(Int(uptimeMilliseconds($0))) } ?? .null,
        ]
        var fields: [String: JSONValue] = [
            "index": .int(snap.index), "count": .int(album.count), "offset": .double(snap.offset),
            "page": .int(snap.page), "state": .string(snap.state.rawValue), "autoplay": .object(autoplay),
            "display": .object(display), "image": album.pictures(snap.index).first.map { .string($0) } ?? .null,
            // The page's pictures (two where portraits are paired), and how many pictures the album has.
            "images": .array(album.pictures(snap.index).map { .string($0) }), "pictures": .int(album.pictureCount),
            "frames": .int(frames.pacer.framesPresented), "uptime_ms": .int(Int(uptimeMilliseconds(now))),
            "version": .string(CarouselVersion.string),
            // The zoomed picture's scale now, and where a zoom in flight is heading.
            "zoom": .double(model.zoomScale(at: Timestamp(microseconds: now))), "zoom_target": .double(model.zoomTarget),
            // What `carouseld sync` last did (its file in the folder), with [sync] set.
            "sync": SyncStatusFile.read(for: config) ?? .null,
            // `[power] presence`: whether someone is there, and since when (the sensor's last word).
            "presence": config[PresenceSettings.self].source.map { source -> JSONValue in
                .object(["source": .string(source.description), "present": .bool(power.present),
                         "since_ms": power.presenceChanged.map { .int(Int(uptimeMilliseconds($0))) } ?? .null])
            } ?? .null,
        ]
        // The services' own fields: the pushed text on screen and where it
        // comes from (`overlay`), the clip on the page (`video`).
        services.status(now: now, into: &fields)
        return fields
    }

    /// Every model event as an event line to the services that take them
    /// (the socket's subscribers all, MQTT all but the per-frame ones).
    func broadcast(_ event: CarouselEvent) {
        publishEvent(LoopEvent.Name(event.kind.name), eventFields(event), perFrame: event.kind.isPerFrame)
    }

    func eventFields(_ event: CarouselEvent) -> [String: JSONValue] {
        var fields: [String: JSONValue] = ["t": .int(Int(uptimeMilliseconds(event.time.microseconds)))]
        switch event.kind {
        case let .didScroll(offset): fields["offset"] = .double(offset)
        case let .didEndDragging(willDecelerate): fields["willDecelerate"] = .bool(willDecelerate)
        case let .didZoom(scale), let .didEndZooming(scale): fields["scale"] = .double(scale)
        default: break
        }
        if let index = event.kind.index {
            fields["index"] = .int(index)
            // The page's pictures; a tap or long press names the one under the finger.
            fields["images"] = .array(album.pictures(index).map { .string($0) })
            switch event.kind {
            case .didSelectItem, .longPress: fields["image"] = pressedPicture(index).map { .string($0) } ?? .null
            default: break
            }
        }
        return fields
    }

    /// The picture under the last press on page `index`: of a pair, the
    /// half the finger was over (the gap split down its middle).
    func pressedPicture(_ index: Int) -> String? {
        let shown = album.pictures(index)
        guard shown.count == 2, let press = model.lastPress, press.index == index else { return shown.first }
        let halves = ItemCache.pairHalves(box: layout.compositor.itemPixelSize, gap: layout.pairGap)
        let split = Double(halves.left.width + halves.rightX) / 2 * press.width / Double(layout.compositor.itemPixelSize.width)
        return press.x < split ? shown[0] : shown[1]
    }
}
