import CarouselConfig
import CarouselControl
import CarouselDisplay
import CarouselCore
import CarouselPlatform
import CarouselImaging
import CarouselRender
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// New configuration while running: `reload` and SIGHUP read the file
/// again, `set KEY VALUE` changes one key. Either is all or nothing: a value
/// that is refused changes nothing and the carousel runs on as it was.
extension Daemon {
    /// Keys that only a restart can change: they name the devices and the
    /// socket the daemon holds open. A reload that changes them applies the
    /// rest and says these wait.
    public static var restartKeys: [RestartKey] {
        [
            RestartKey("display.device", \.display.device),
            RestartKey("display.connector", \.display.connector),
            RestartKey("display.api", \.display.api),
            RestartKey("input.seat", \.input.seat),
            RestartKey("control.socket", \.control.socket),
            RestartKey("control.mode", \.control.mode),
            RestartKey("control.group", \.control.group),
        ]
    }

    /// Reads the configuration file again and applies it. A file that does
    /// not parse (or a mode the display lacks) is refused with one error
    /// line, and the running configuration stays.
    public func reload() -> ControlReply {
        notifier.reloading()
        // READY=1 again, whatever the outcome (systemd waits for it); before
        // the first frame, that first frame will say it.
        defer { if firstFrameShown { notifier.ready(status: statusLine) } }
        let fresh: Configuration
        do {
            fresh = try readConfiguration(configPath)
        } catch {
            log(.error, "reload refused, keeping the running configuration: \(error)")
            return .error("reload refused, the running configuration stays: \(error)")
        }
        do {
            let pending = try apply(fresh)
            if pending.isEmpty {
                log(.info, "configuration reloaded from \(configPath)")
            } else {
                log(.warning, "configuration reloaded from \(configPath); \(pending.joined(separator: ", ")) "
                    + "\(pending.count == 1 ? "takes" : "take") effect at the next restart")
            }
            return .ok(["file": .string(configPath), "restart_required": .array(pending.map { .string($0) })])
        } catch {
            log(.error, "reload refused, keeping the running configuration: \(error)")
            return .error("reload refused, the running configuration stays: \(error)")
        }
    }

    /// `set KEY VALUE`: one key changed in the running configuration (not in
    /// the file: a reload goes back to what the file says).
    public func set(_ key: String, _ value: String) -> ControlReply {
        guard let spec = Schema.lookup(key) else {
            return .error("unknown key '\(key)' (known: \(Schema.shortNames.joined(separator: ", ")), or section.key)")
        }
        let name = "\(spec.section).\(spec.name)"
        var fresh = config
        do {
            try fresh.set(name, value)
            // The files [mqtt] names are read when connecting: a missing one is refused now.
            if spec.section == "mqtt" { try fresh.mqtt.checkFiles() }
        } catch {
            return .error("\(name) = '\(value)': \(error)")
        }
        if let restart = Self.restartKeys.first(where: { $0.name == name }), restart.differs(fresh, config) {
            return .error("\(name) cannot change while carouseld runs: edit \(configPath) and restart it")
        }
        do {
            _ = try apply(fresh)
        } catch {
            return .error("\(name) = '\(value)': \(error)")
        }
        log(.info, "set \(name) = \(value)")
        return .ok(["key": .string(name), "value": .string(value)])
    }

    /// Applies `requested` as far as it can while running; returns the keys
    /// that wait for a restart (their running values stay). Throws, changing
    /// nothing, when the display cannot take the new mode.
    func apply(_ requested: Configuration) throws(ReloadError) -> [String] {
        let old = config
        var new = requested
        var pending: [String] = []
        for key in Self.restartKeys where key.differs(new, old) {
            pending.append(key.name)
            key.keep(&new, old)
        }
        // The mode first: the one change that can still fail, before anything else changed.
        let panelBefore = backend.panelSize
        if new.display.mode != old.display.mode {
            do {
                if try backend.changeMode(to: new.displayModeRequest) {
                    displayWasRemodeset()
                    log(.info, "display: \(backend.summary)")
                }
            } catch {
                throw ReloadError(message: "display.mode \(new.display.mode.map { "\($0)" } ?? "auto"): \(error)")
            }
        }
        let previousCache = layout.cacheSettings(old)
        config = new
        if new.power.schedule != old.power.schedule { applySchedule(now: clock(), recompute: true) }
        if new.power.backlight != old.power.backlight || new.power.brightness != old.power.brightness || backlight.device == nil {
            openBacklight()
        }
        Log.threshold = new.logLevel
        if let control {
            control.allowUIDs = new.control.allowUIDs.isEmpty ? nil : Set(new.control.allowUIDs)
            control.allowGIDs = new.control.allowGIDs.isEmpty ? nil : Set(new.control.allowGIDs)
            control.maxClients = new.control.maxClients
        }
        let rescan = new.images.path != old.images.path || new.images.files != old.images.files
            || new.images.order != old.images.order || new.images.recursive != old.images.recursive
        relayout(previousCache: previousCache, rescan: rescan, panelChanged: backend.panelSize != panelBefore)
        mqttConfigurationApplied(old: old)
        return pending
    }

    /// Lays the carousel out again for the running configuration and panel
    /// (after a reload or a display change), keeping the current picture.
    func relayout(previousCache: ItemCache.Settings? = nil, rescan: Bool = false, panelChanged: Bool = true) {
        let now = clock()
        let t = Timestamp(microseconds: now)
        let previous = previousCache ?? layout.cacheSettings(config)
        let before = layout
        layout = Layout(config: config, backend: backend, touchscreen: touchscreen)
        writer = ScreenWriter(compositor: layout.compositor)
        reserveWindowRoom()
        let cacheSettings = layout.cacheSettings(config)
        if cacheSettings != previous {
            cache.reset(settings: cacheSettings)
            // Keep the old frame until the pictures are scaled anew (not on a
            // new panel: its buffers hold nothing worth keeping).
            if !panelChanged { holdUntil = now + Self.reloadHoldMicroseconds }
        }
        var index = model.currentItemIndex(at: t)
        if rescan {
            let listed = listAlbum()
            let change = album.replace(with: listed, current: index, keepingOrder: shuffles)
            index = change.index
            cache.forget(change.stale)
            watchAlbum()
            log(.info, "images: \(album.count) in \(config.albumSource), showing \(album.path(index) ?? "nothing")")
        }
        deliver(model.reconfigure(settings: layout.settings, autoplay: config.autoplay, viewport: layout.viewport,
                                  count: album.count, showing: index, zoom: config.zoom, at: t))
        if layout.settings.touchSlop != before.settings.touchSlop, let line = layout.slopLine(configured: config.carousel.touchSlop) {
            log(.info, line)
        }
        input?.reconfigure(config: config.input, rotation: rotation, panel: backend.panelSize)
        clockOverlay.reconfigure(clockLook)
        tickClock(now: now)
        notifier.status(statusLine)
        needsFrame = true
    }

    /// How long a reload keeps the old frame while new pictures are scaled.
    static let reloadHoldMicroseconds: Int64 = 3_000_000

    /// How long the first frame waits for the start picture's decode.
    public static let startHoldMicroseconds: Int64 = 2_000_000

    // MARK: - Screenshots, off the loop

    /// Composes what is on screen once more (the scene of the last frame)
    /// and writes it upright, in layout orientation, as a PNG on a background
    /// thread; the reply follows when the file is complete. The loop only
    /// composes: no frame is kept for this between requests.
    func startScreenshot(to target: ScreenshotTarget, ticket: ControlTicket) {
        let (panel, rotation) = composeScreenshot()
        let jobs = screenshots
        let wake = wakeup
        Self.screenshotQueue.async {
            let copy = panel.upright(from: rotation)
            let reply: ControlReply
            do {
                switch target {
                case let .path(path):
                    try copy.writePNG(to: path)
                    reply = .ok(["path": .string(path)])
                case let .descriptor(file):
                    do throws(PNGWriteError) {
                        try copy.writePNG(toDescriptor: file.raw)
                        reply = .ok(["bytes": .int(Int(lseek(file.raw, 0, SEEK_CUR)))])
                    } catch {
                        // The client knows the file's name; the daemon only says why.
                        reply = .error("screenshot: \(error.reason)")
                    }
                }
            } catch {
                reply = .error("screenshot: \(error)")
            }
            jobs.finish(ticket, reply)
            wake.signal()
        }
    }

    /// What is on screen composed once more, with the panel's rotation (to
    /// be turned upright off the loop): the scene of the last frame, unless
    /// the layout turned or resized since: then the new layout (as laid out
    /// so far), as a screenshot follows the layout.
    func composeScreenshot() -> (Frame, Rotation) {
        let source = shown.flatMap { old in
            old.compositor.rotation == writer.compositor.rotation && old.compositor.panel == writer.compositor.panel
                ? old : nil
        } ?? writer
        let panel = Frame(width: source.compositor.panel.width, height: source.compositor.panel.height)
        source.render(source.scene, into: panel)
        return (panel, source.compositor.rotation)
    }

    /// Gives the replies of finished screenshots (called on the loop).
    func finishScreenshots() {
        let done = screenshots.drain()
        guard !done.isEmpty, let control else { return }
        for (ticket, reply) in done { control.complete(ticket, with: reply) }
        try? synchronizeControl()
    }

    static let screenshotQueue = DispatchQueue(label: "carouseld.screenshot", qos: .utility)
}

/// A key only a restart can change: how to tell it changed, and how to
/// keep its running value.
public struct RestartKey {
    public let name: String
    public let differs: (Configuration, Configuration) -> Bool
    public let keep: (inout Configuration, Configuration) -> Void

    init<Value: Equatable>(_ name: String, _ path: WritableKeyPath<Configuration, Value>) {
        self.name = name
        differs = { $0[keyPath: path] != $1[keyPath: path] }
        keep = { $0[keyPath: path] = $1[keyPath: path] }
    }
}

/// Why a new configuration could not be applied.
public struct ReloadError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// Where a screenshot goes: a path the daemon writes (atomically, under a
/// fresh name then renamed), or a file a client opened with its own rights
/// and sent over the socket.
enum ScreenshotTarget: Sendable {
    case path(String)
    case descriptor(FileDescriptor)

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

/// Screenshots written off the loop whose replies are due.
final class ScreenshotJobs: Sendable {
    private let done = Mutex<[(ControlTicket, ControlReply)]>([])

    func finish(_ ticket: ControlTicket, _ reply: ControlReply) {
        done.withLock { $0.append((ticket, reply)) }
    }

    func drain() -> [(ControlTicket, ControlReply)] {
        done.withLock { all in
            defer { all = [] }
            return all
        }
    }
}
