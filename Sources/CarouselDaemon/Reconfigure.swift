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
            RestartKey("display.backend", \.display.backend),
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
        defer { if frames.firstFrameShown { notifier.ready(status: statusLine) } }
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

    /// `keep KEY VALUE`: `set`, and the value written into the frame's
    /// settings file, so that a restart keeps it. The file is written (and
    /// synced) before the value is applied and renamed into place after:
    /// refused, nothing changes; kept, both changed.
    public func keep(_ key: String, _ value: String) -> ControlReply {
        guard let spec = Schema.lookup(key) else { return set(key, value) }
        let name = "\(spec.section).\(spec.name)"
        if Schema.capability(of: spec) == .administer {
            return .error("keep \(name): a key that needs administer is set in \(configPath), never kept in the settings file")
        }
        guard let path = config.control.settings else {
            return .error("keep \(name): no settings file ([control] settings is empty); set changes it until a restart")
        }
        guard !value.contains(where: \.isNewline) else { return .error("keep \(name): a value is one line") }
        let text: String
        do {
            text = try SettingsFile.updated(access(path, F_OK) == 0 ? try readTextFile(path) : nil, file: path,
                                            section: spec.section, key: spec.name, value: value)
        } catch {
            return .error("keep \(name): the settings file cannot be read: \(error)")
        }
        let reply = set(name, value)
        guard case .ok = reply else { return reply }
        if let problem = SettingsFile.write(text, to: path) {
            log(.error, "keep \(name): \(problem); the value is set until a restart")
            return .error("keep \(name): \(problem); the value is set until a restart")
        }
        log(.info, "kept \(name) = \(value) in \(path)")
        return .ok(["key": .string(name), "value": .string(value), "file": .string(path)])
    }

    /// `forget KEY`: takes the key out of the settings file and reads the
    /// configuration again, so that carouseld.ini's value (or the default)
    /// runs.
    public func forget(_ key: String) -> ControlReply {
        guard let spec = Schema.lookup(key) else {
            return .error("unknown key '\(key)' (known: \(Schema.shortNames.joined(separator: ", ")), or section.key)")
        }
        let name = "\(spec.section).\(spec.name)"
        guard let path = config.control.settings, access(path, F_OK) == 0 else {
            return .ok(["key": .string(name), "kept": .bool(false)])
        }
        do {
            let text = try SettingsFile.updated(try readTextFile(path), file: path, section: spec.section, key: spec.name,
                                                value: nil)
            if let problem = SettingsFile.write(text, to: path) { return .error("forget \(name): \(problem)") }
        } catch {
            return .error("forget \(name): the settings file cannot be read: \(error)")
        }
        log(.info, "forgot \(name) in \(path)")
        var reply = reload()
        if case var .ok(fields) = reply {
            fields["key"] = .string(name)
            reply = .ok(fields)
        }
        return reply
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
        if new.power.backlight != old.power.backlight || new.power.brightness != old.power.brightness || backlight.device == nil {
            openBacklight()
        }
        Log.threshold = new.logLevel
        let rescan = new.images.path != old.images.path || new.images.files != old.images.files
            || new.images.order != old.images.order || new.images.recursive != old.images.recursive
        relayout(previousCache: previousCache, rescan: rescan, panelChanged: backend.panelSize != panelBefore)
        screenPowerFollows(old, now: clock())
        tell(.configured(old: old))
        return pending
    }

    /// Lays the carousel out again for the running configuration and panel
    /// (after a reload or a display change), keeping the current picture.
    /// `touchscreen`: a touchscreen that reported its size (`.some(nil)`:
    /// it went away); by default the layout's own is kept.
    func relayout(previousCache: ItemCache.Settings? = nil, rescan: Bool = false, panelChanged: Bool = true,
                  touchscreen: TouchDensitySource?? = nil) {
        let now = clock()
        let t = Timestamp(microseconds: now)
        let previous = previousCache ?? layout.cacheSettings(config)
        let before = layout
        layout = Layout(config: config, backend: backend, touchscreen: touchscreen ?? before.touchscreen,
                        boardMemory: before.boardMemory)
        frames.laidOut()
        let cacheSettings = layout.cacheSettings(config)
        if cacheSettings != previous {
            cache.reset(settings: cacheSettings)
            // Keep the old frame until the pictures are scaled anew (not on a
            // new panel: its buffers hold nothing worth keeping).
            if !panelChanged { frames.holdUntil = now + Self.reloadHoldMicroseconds }
        }
        var index = model.currentItemIndex(at: t)
        if layout.pairsPortraits(config) != (album.portraitProbe != nil) {
            index = album.pairPortraits(layout.portraitProbe(config), current: index)
            log(.info, "images: \(album.pictureCount) on \(album.count) pages\(album.portraitProbe == nil ? "" : ", portraits paired")")
        }
        if rescan {
            let listed = listAlbum()
            let change = album.replace(with: listed, current: index, keepingOrder: shuffles)
            index = change.index
            cache.forget(change.stale)
            log(.info, "images: \(album.count) in \(config.albumSource), showing \(album.pageName(index))")
        }
        deliver(model.reconfigure(settings: layout.settings, autoplay: config.autoplay, viewport: layout.viewport,
                                  count: album.count, showing: index, zoom: config.zoom, at: t))
        if layout.settings.touchSlop != before.settings.touchSlop, let line = layout.slopLine(configured: config.carousel.touchSlop) {
            log(.info, line)
        }
        tell(.laidOut)
        notifier.status(statusLine)
    }

    /// How long a reload keeps the old frame while new pictures are scaled.
    static let reloadHoldMicroseconds: Int64 = 3_000_000

    /// How long the first frame waits for the start picture's decode.
    public static let startHoldMicroseconds: Int64 = 2_000_000
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
