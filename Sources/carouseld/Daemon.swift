import CarouselAlbum
import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselDisplay
import CarouselImaging
import CarouselPlatform
import CarouselRender
#if canImport(Glibc)
import Glibc
#endif

/// The running carousel: one loop, every source a descriptor in one epoll
/// set (the display's flip events, input, one timer for the model's earliest
/// deadline, signals, the folder watch, the decoder's wake-up). Nothing on
/// the loop blocks; at rest it sleeps in `epoll_wait` until something happens.
final class Daemon {
    enum Token: UInt64 {
        case timer = 1, signals, wakeup, display, input, watcher, hotplug
    }

    /// The configuration running now (after reloads and `set` requests).
    var config: Configuration
    /// The file `reload` and SIGHUP read again.
    let configPath: String
    let backend: DisplayBackend
    var layout: Layout
    var rotation: Rotation { layout.rotation }
    var model: Carousel
    var paths: [String]
    var entries: [AlbumEntry]
    let cache: ItemCache
    private var compositor: Compositor { layout.compositor }
    /// The frame in layout orientation, what `screenshot` writes.
    var shadow: Frame
    let epoll: Epoll
    /// systemd's notification socket (does nothing outside systemd).
    let notifier: ServiceNotifier
    /// When the next `WATCHDOG=1` is due (µs), if systemd wants them.
    private var nextWatchdog: Int64?
    /// Until then (µs), a frame whose pictures are not decoded yet is not
    /// presented: after a reload that changed how pictures are scaled, the
    /// old frame stays on screen rather than empty slots.
    var holdUntil: Int64 = 0
    /// Switches the display mode (DRM); nil where there are no modes (offscreen).
    var changeMode: ((ModeRequest?) throws -> Bool)?
    /// Called after the configuration or the panel changed (input follows).
    var onReconfigured: () -> Void = {}
    let screenshots = ScreenshotJobs()
    /// The control socket, if it could be opened.
    var control: ControlServer?
    /// CLOCK_MONOTONIC at start, µs: the origin of uptime_ms.
    let startTime = MonotonicClock.now()
    private let timer: Timer
    private let signals: Signals
    let wakeup: Wakeup
    private var watcher: FolderWatcher?
    /// The picture changed without motion (a decode finished, the album changed).
    var needsFrame = true
    /// A frame was presented and its flip has not completed.
    private var framePending = false
    private(set) var framesPresented = 0
    private var lastPresent: Int64 = 0
    private var intervals = (count: 0, sum: Int64(0), max: Int64(0))
    /// One line about frame pacing while moving, for the log at exit.
    var frameSummary: String {
        guard intervals.count > 0 else { return "presented \(framesPresented) frames" }
        let mean = Double(intervals.sum) / Double(intervals.count) / 1000
        return "presented \(framesPresented) frames; while moving, one every \((mean * 10).rounded() / 10) ms on average, "
            + "the longest gap \(Double(intervals.max / 100) / 10) ms"
    }
    /// The offset of the frame on screen (NaN before the first).
    private var lastDrawnOffset = Double.nan
    private var lastFrameTime: Int64 = 0
    private var running = true
    /// Called for each model event (logs now; the control socket's subscribers later).
    var onEvent: (CarouselEvent) -> Void = { _ in }
    /// Called once the first frame is on screen (its flip completed).
    var onFirstFrame: () -> Void = {}
    private(set) var firstFrameShown = false
    /// Called once a frame with every picture on screen decoded has been presented.
    var onFirstPicture: () -> Void = {}
    private var pictureShown = false

    init(config: Configuration, path: String, backend: DisplayBackend, notifier: ServiceNotifier) throws {
        self.config = config
        configPath = path
        self.backend = backend
        self.notifier = notifier
        layout = Layout(config: config, backend: backend)
        shadow = Frame(width: layout.size.width, height: layout.size.height)

        // Signals are blocked before the decoder thread starts, so it inherits the mask.
        signals = try Signals([SIGTERM, SIGINT, SIGHUP])
        epoll = try Epoll()
        timer = try Timer()
        let wake = try Wakeup()
        wakeup = wake
        cache = ItemCache(settings: layout.cacheSettings(config)) { wake.signal() }

        (entries, paths) = Daemon.listAlbum(config)
        model = Carousel(settings: layout.settings, autoplay: config.autoplay, viewport: layout.viewport,
                         count: paths.count, at: Timestamp(microseconds: MonotonicClock.now()))
        try epoll.add(timer.fd.raw, token: Token.timer.rawValue)
        try epoll.add(signals.fd.raw, token: Token.signals.rawValue)
        try epoll.add(wakeup.fd.raw, token: Token.wakeup.rawValue)
        if let fd = backend.fileDescriptor { try epoll.add(fd, token: Token.display.rawValue) }
        watchAlbum()
        if let interval = notifier.watchdogInterval {
            nextWatchdog = MonotonicClock.now()
            log(.info, "systemd watchdog: a keep-alive every \(interval / 2000) ms")
        }
        log(.info, "display: \(backend.summary), rotation \(rotation.rawValue)")
        if let line = layout.slopLine(configured: config.carousel.touchSlop) { log(.info, line) }
        log(.info, "images: \(paths.count) in \(albumSource)")
    }

    /// Where the pictures come from, for log lines.
    var albumSource: String { config.images.files.isEmpty ? config.images.path : "the [images] files list" }

    /// Watches the images folder (not an explicit file list) for changes.
    func watchAlbum() {
        if let old = watcher {
            epoll.remove(old.fileDescriptor)
            watcher = nil
        }
        guard config.images.files.isEmpty else { return }
        do {
            let w = try FolderWatcher(folder: config.images.path)
            try epoll.add(w.fileDescriptor, token: Token.watcher.rawValue)
            watcher = w
        } catch {
            log(.warning, "not watching \(config.images.path) for changes: \(error)")
        }
    }

    /// The album as the configuration says; problems are logged, never fatal
    /// (an empty carousel shows the empty-folder picture and waits).
    static func listAlbum(_ config: Configuration) -> ([AlbumEntry], [String]) {
        do {
            let listing = config.images.files.isEmpty
                ? try Album.scanListing(folder: config.images.path, order: config.albumOrder)
                : Album.explicit(files: config.images.files)
            for skipped in listing.skipped { log(.warning, "skipping \(skipped)") }
            return (listing.entries, listing.entries.map(\.path))
        } catch {
            log(.warning, "\(error)")
            return ([], [])
        }
    }

    /// Adds a descriptor of another room (input) to the loop.
    func watch(_ fd: Int32, token: Token) throws { try epoll.add(fd, token: token.rawValue) }

    /// The handler for input readiness; set by whoever owns the input context.
    var onInputReady: () -> Void = {}

    /// Runs until SIGTERM or SIGINT; returns the exit status.
    func run() -> Int32 {
        while running {
            let now = MonotonicClock.now()
            if let due = nextWatchdog, now >= due, let interval = notifier.watchdogInterval {
                // From the loop itself: a loop that hangs stops these, and systemd restarts us.
                notifier.watchdog()
                nextWatchdog = now + interval / 2
            }
            deliver(model.advance(to: Timestamp(microseconds: now)))
            drawIfNeeded(now: now)
            do {
                try timer.arm(at: nextWake(now: now))
                for (token, events) in try epoll.wait() {
                    if token >= Daemon.controlTokenBase {
                        control?.handle(readyDescriptor: Int32(token - Daemon.controlTokenBase), events: events)
                        try synchronizeControl()
                    } else {
                        handle(Token(rawValue: token))
                    }
                }
            } catch {
                log(.error, "event loop: \(error)")
                backend.restore()
                return 1
            }
        }
        notifier.stopping()
        control?.close()
        backend.restore()
        log(.info, frameSummary)
        log(.info, "stopped; display restored")
        return 0
    }

    /// When the loop must wake up by itself: the model's next deadline, and
    /// while something moves on a backend without flip events, the next frame.
    private func nextWake(now: Int64) -> Int64? {
        var wake = model.nextDeadline.map(\.microseconds)
        if let due = nextWatchdog { wake = min(wake ?? due, due) }
        if holding(now), !model.isMoving {
            // Waiting for pictures: the decoder's wake-up or the end of the hold.
            return min(wake ?? holdUntil, holdUntil)
        }
        let moving = model.isMoving || needsFrame
        if moving, !framePending {
            let frame = max(lastFrameTime + backend.framePeriodMicroseconds - 1000, now)
            wake = min(wake ?? frame, frame)
        }
        return wake
    }

    private func handle(_ token: Token?) {
        switch token {
        case .timer:
            timer.acknowledge()
        case .signals:
            for signal in signals.read() {
                switch signal {
                case SIGTERM, SIGINT:
                    log(.info, "received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"), stopping")
                    running = false
                case SIGHUP:
                    log(.info, "SIGHUP: reloading \(configPath)")
                    _ = reload()
                default:
                    break
                }
            }
        case .wakeup:
            wakeup.acknowledge()
            finishScreenshots()
            let failures = cache.drainFailures()
            if !failures.isEmpty { skip(failures) }
            needsFrame = true
        case .display:
            do {
                if try backend.dispatch() {
                    framePending = false
                    frameOnScreen()
                }
            } catch {
                log(.error, "display: \(error)")
            }
        case .input:
            onInputReady()
        case .watcher:
            folderChanged()
        case .hotplug:
            displayChanged()
        case nil:
            break
        }
    }

    // MARK: - Drawing

    private func drawIfNeeded(now: Int64) {
        // The last frame of a motion is drawn where it came to rest: a settle
        // ends between two frames, exactly on the page.
        if !needsFrame, model.offset(at: Timestamp(microseconds: now)) != lastDrawnOffset { needsFrame = true }
        guard model.isMoving || needsFrame else { return }
        // Never faster than the panel refreshes: flip events pace real
        // hardware, the clock paces the rest (1 ms of slack for jitter).
        if framesPresented > 0, now < lastFrameTime + backend.framePeriodMicroseconds - 1000 { return }
        guard !framePending else { return }
        let t = Timestamp(microseconds: now)
        let x = model.offset(at: t)
        let snapshot = model.snapshot(at: t)
        let placed = compositor.placements(offset: x, count: paths.count, wrap: config.carousel.wrap)
        cache.want(wantedPaths(placed, current: snapshot.index))
        if holding(now), !model.isMoving,
           !placed.allSatisfy({ $0.index < paths.count && cache.image(for: paths[$0.index]) != nil }) {
            return  // the old frame stays until the pictures are ready (or the hold ends)
        }
        guard let buffer = backend.acquire() else { return }
        holdUntil = 0
        lastDrawnOffset = x
        var complete = !placed.isEmpty
        compositor.compose(into: shadow, placements: placed, count: paths.count,
                           page: snapshot.page, pageCount: model.numberOfPages) { i in
            let image = i < self.paths.count ? self.cache.image(for: self.paths[i]) : nil
            if image == nil { complete = false }
            return image
        }
        Scanout.write(shadow, rotation: rotation, to: buffer.pixels, stride: buffer.stride,
                      panelWidth: buffer.size.width, panelHeight: buffer.size.height)
        do {
            try backend.present(buffer)
        } catch {
            log(.error, "display: \(error)")
            return
        }
        framePending = backend.fileDescriptor != nil
        needsFrame = false
        lastFrameTime = now
        framesPresented += 1
        // Without flip events a presented frame is on screen at once.
        if backend.fileDescriptor == nil { frameOnScreen() }
        if complete, !pictureShown {
            pictureShown = true
            onFirstPicture()
        }
        // Frame intervals while something moves (a gap over 100 ms is a new motion).
        if lastPresent > 0, now - lastPresent < 100_000 {
            intervals.count += 1
            intervals.sum += now - lastPresent
            intervals.max = max(intervals.max, now - lastPresent)
        }
        lastPresent = now
    }

    /// The display was set up anew (a hotplug, a new mode): a flip in flight
    /// was completed or dropped by the backend, so no flip event will come
    /// for it; draw a whole new frame.
    func displayWasRemodeset() {
        framePending = false
        needsFrame = true
    }

    private func holding(_ now: Int64) -> Bool { now < holdUntil && needsFrame }

    /// A presented frame reached the screen.
    private func frameOnScreen() {
        guard !firstFrameShown else { return }
        firstFrameShown = true
        onFirstFrame()
        notifier.ready(status: statusLine)
    }

    /// The `STATUS=` text for systemd: what is on screen.
    var statusLine: String {
        guard !paths.isEmpty else { return "no pictures in \(albumSource)" }
        let index = model.currentItemIndex(at: Timestamp(microseconds: MonotonicClock.now()))
        return "showing \(index + 1) of \(paths.count): \(paths[index])"
    }

    /// What the cache should hold: the items on screen, then the neighbours,
    /// two ahead in the direction of travel and one behind.
    private func wantedPaths(_ placed: [Compositor.Placement], current: Int) -> [String] {
        guard !paths.isEmpty else { return [] }
        var indices = placed.map(\.index)
        let n = paths.count
        let forward = config.autoplay.direction == .forward ? 1 : -1
        for step in [forward, 2 * forward, -forward] {
            var i = current + step
            if config.carousel.wrap { i = ((i % n) + n) % n }
            if (0..<n).contains(i), !indices.contains(i) { indices.append(i) }
        }
        return indices.map { paths[$0] }
    }

    /// The handler for hotplug readiness (set by the owner of the udev monitor);
    /// returns whether a display hotplug happened.
    var onHotplugReady: () -> Bool = { false }

    /// A display was plugged or unplugged: look again; a new mode of the same
    /// size is simply drawn into, a different size is laid out again.
    private func displayChanged() {
        guard onHotplugReady() else { return }
        let before = backend.panelSize
        do {
            guard try backend.reprobe() else { return }
        } catch {
            log(.warning, "display hotplug: \(error)")
            return
        }
        log(.info, "display re-modeset: \(backend.summary)")
        displayWasRemodeset()
        if backend.panelSize != before {
            log(.info, "display is now \(backend.panelSize) (was \(before)); laying out again")
            relayout()
        }
    }

    // MARK: - The album changes

    /// Files that cannot be decoded are skipped: one log line each, and the
    /// carousel goes on without them.
    private func skip(_ failures: [ItemCache.Failure]) {
        for f in failures { log(.warning, "skipping \(f.message)") }
        let failed = Set(failures.map(\.path))
        let old = entries
        entries.removeAll { failed.contains($0.path) }
        applyAlbum(old: old, new: entries)
    }

    private func folderChanged() {
        guard let w = watcher else { return }
        do {
            let change = try w.drain()
            if change.folderVanished {
                log(.warning, "\(config.images.path) was removed; showing nothing until it is back and the daemon restarts")
            }
            guard !change.isEmpty else { return }
        } catch {
            log(.warning, "watching \(config.images.path): \(error)")
            return
        }
        let old = entries
        let (fresh, _) = Daemon.listAlbum(config)
        // Replaced files, and new ones: a file skipped while half-copied comes
        // back complete under the same name and must be decoded again.
        let diff = AlbumDiff(old: old, new: fresh, currentIndex: 0)
        cache.forget(diff.replaced + diff.added)
        entries = fresh
        applyAlbum(old: old, new: fresh)
    }

    private func applyAlbum(old: [AlbumEntry], new: [AlbumEntry]) {
        let now = Timestamp(microseconds: MonotonicClock.now())
        let current = model.currentItemIndex(at: now)
        let index = AlbumDiff.reconcile(old: old, new: new, currentIndex: current)
        paths = new.map(\.path)
        deliver(model.replaceItems(count: paths.count, showing: index, at: now))
        log(.info, "images: \(paths.count) now, showing \(paths.isEmpty ? "nothing" : paths[index])")
        notifier.status(statusLine)
        needsFrame = true
    }

    // MARK: - Model events

    func deliver(_ events: [CarouselEvent]) {
        for e in events {
            onEvent(e)
            broadcast(e)
            if case .currentItemIndexDidChange = e.kind, firstFrameShown { notifier.status(statusLine) }
        }
    }

    /// Feeds input the input room translated into the model's terms.
    func feed(_ input: TouchInput, at time: Int64) {
        deliver(model.handle(input, at: Timestamp(microseconds: time)))
    }

    func perform(_ command: CarouselCommand) -> CommandError? {
        switch model.perform(command, at: Timestamp(microseconds: MonotonicClock.now())) {
        case .success(let events):
            deliver(events)
            return nil
        case .failure(let error):
            return error
        }
    }
}
