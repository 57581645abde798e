import CarouselAlbum
import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselDisplay
import CarouselDRM
import CarouselImaging
import CarouselInput
import CarouselPlatform
import CarouselRender
#if canImport(Glibc)
import Glibc
#endif

/// The running carousel: one loop, every source a descriptor in one epoll
/// set (the display's flip events, input, one timer for the model's earliest
/// deadline, signals, the folder watch, the decoder's wake-up, display
/// hotplug, the control socket). Nothing on the loop blocks; at rest it
/// sleeps in `epoll_wait` until something happens.
///
/// The flow is one way: input and commands go into the model, the model's
/// events come back and are carried out (logged, broadcast, status), and
/// frames are drawn when the picture changed, paced by `FramePacer`.
public final class Daemon {
    enum Token: UInt64 {
        case timer = 1, signals, wakeup, display, input, watcher, hotplug, mounts, clockSet
        /// The MQTT broker's socket, and the wake-up of a connect or a screenshot off the loop (MQTT.swift).
        case mqttSocket, mqttWake
    }

    /// What the daemon opens besides the display. Tests on the offscreen
    /// display turn off what needs a seat, a socket path or signals.
    public struct Options: Sendable {
        /// libinput on `[input] seat`.
        public var input = true
        /// The control socket at `[control] socket` (or systemd's).
        public var controlSocket = true
        /// SIGTERM, SIGINT and SIGHUP through a signalfd (blocked for the
        /// calling thread and the threads it starts).
        public var signals = true
        /// udev's display hotplug events (DRM only).
        public var hotplug = true
        /// Opens the display again after its device went away and a card
        /// appeared (`displayMayBeBack`). Default: the DRM display the
        /// configuration names, for a DRM backend; none for others.
        public var reopenDisplay: (@Sendable (Configuration) throws -> DisplayBackend)?
        /// Local time for `[power] schedule`; nil: the system's.
        public var localClock: LocalClock?
        /// CLOCK_MONOTONIC when the process started (µs), for the
        /// "first frame ... ms after start" lines.
        public var startedAt: Int64?
        /// CLOCK_MONOTONIC when `run` began (µs): how much of the start
        /// went before it is said once, with the first picture.
        public var enteredMain: Int64?
        /// Where the picture on screen is kept across restarts (`[images]
        /// resume`); nil keeps none. `carouseld run` passes systemd's
        /// `$STATE_DIRECTORY` or /var/lib/carouseld (`stateDirectory(environment:)`).
        public var stateDirectory: String?
        /// Reads, decodes and scales a picture for the cache; nil: the real
        /// one (`ItemCache.prepare`). A seam for tests that hold a decode in flight.
        public var prepare: ItemCache.Prepare?
        /// Where the kernel lists backlights (`carouseld run`:
        /// /sys/class/backlight); nil drives none.
        public var backlightRoot: String?
        public init() {}

        /// `$STATE_DIRECTORY`'s first path, else /var/lib/carouseld.
        public static func stateDirectory(environment value: String?) -> String {
            PositionStore.directory(environment: value)
        }
    }

    /// The configuration running now (after reloads and `set` requests).
    public internal(set) var config: Configuration
    /// The file `reload` and SIGHUP read again.
    public let configPath: String
    /// The display; an `AbsentDisplay` while its device is away.
    public internal(set) var backend: DisplayBackend
    /// The backend's descriptor in the epoll set, if it has one.
    private var displayDescriptor: Int32?
    private let reopenDisplay: (@Sendable (Configuration) throws -> DisplayBackend)?
    public internal(set) var layout: Layout
    public var rotation: Rotation { layout.rotation }
    public internal(set) var model: Carousel
    public internal(set) var album: AlbumState
    /// The picture on screen, kept for the next start (`Options.stateDirectory`).
    var position: PositionStore?
    /// order = shuffle: the generator, and the item the album was last
    /// reshuffled at (once per rest; see `reshuffleAtRest`).
    var shuffleGenerator: SeededGenerator
    var shuffledAt: Int?
    public internal(set) var pacer: FramePacer
    let cache: ItemCache
    var compositor: Compositor { layout.compositor }
    /// Writes frames into the display's buffers (only what changed) and
    /// keeps the scene on screen, which `screenshot` composes again.
    var writer: ScreenWriter
    /// The items on screen at the last frame (storage reused: a frame allocates nothing).
    private var placements: [Compositor.Placement] = []
    /// The writer whose scene is on screen (until a frame after a relayout
    /// is presented, the one from before it): what `screenshot` composes.
    var shown: ScreenWriter?
    /// How far the display lets the scan-out window move along the panel
    /// axis (pixels of room in its buffers; 0: every frame is written).
    var windowRoom = 0
    /// The room is to be asked for at the next frame.
    private var windowRoomDue = false
    let epoll: Epoll
    /// systemd's notification socket (does nothing outside systemd).
    let notifier: ServiceNotifier
    /// The loop's clock, µs of CLOCK_MONOTONIC (tests pass a manual one).
    let clock: () -> Int64
    /// CLOCK_MONOTONIC at start, µs: the origin of uptime_ms.
    let startTime: Int64
    private let startedAt: Int64
    private let enteredMain: Int64?
    /// When the next `WATCHDOG=1` is due (µs), if systemd wants them.
    private var nextWatchdog: Int64?
    /// Until then (µs), a frame whose pictures are not decoded yet is not
    /// presented: after a reload that changed how pictures are scaled, the
    /// old frame stays on screen rather than empty slots.
    var holdUntil: Int64 = 0
    /// Input devices wait until the first frame is presented (or this time,
    /// if no frame comes: the display off by the schedule at start): opening
    /// them (udev enumeration, libinput's quirks files) took a third of the
    /// CPU between main and the first picture on a one-core board, and on one
    /// core every bit of that delays the start picture's decode.
    private var inputDueAt: Int64?
    /// Kept between passes of the loop (their storage, not their contents):
    /// the model's events of a pass, and the descriptors epoll found ready.
    private var eventBatch: [CarouselEvent] = []
    private var ready: [(token: UInt64, events: UInt32)] = []
    let screenshots = ScreenshotJobs()
    /// The control socket, if it could be opened.
    var control: ControlServer?
    /// The MQTT client, while `[mqtt] broker` is set (MQTT.swift).
    var mqtt: MQTTSession?
    private let timer: Timer
    /// Local time for `[power] schedule`, and the watch on the wall clock being set.
    let localClock: LocalClock
    private var clockChanges: ClockChangeWatch?
    /// `[overlay] clock`: its stamp and the next minute (ClockOverlay.swift).
    let clockOverlay = ClockOverlay()
    private let signals: Signals?
    let wakeup: Wakeup
    var watcher: FolderWatcher?
    var input: InputSource?
    /// The touchscreen's size, once one reported it (the slop follows it).
    var touchscreen: TouchDensitySource?
    private var hotplug: HotplugMonitor?
    /// The display's power: off, nothing is drawn (see DisplayPower.swift).
    var power = DisplayPowerState()
    /// The panel's backlight, if there is one to drive (BacklightControl.swift).
    var backlight = BacklightState()
    let backlightRoot: String?
    /// What is on screen is stale (the model said so, a decode finished,
    /// the album or the layout changed): draw one frame.
    var needsFrame = true
    /// The content moves with time (a settle, momentum, an animation, a
    /// drift), as the model's effects said: draw every frame until it stops.
    private(set) var moving = false
    /// The items where the motion in flight comes to rest (the model's
    /// prefetch effect): decoded ahead of the frames that will show them.
    private var prefetchTarget: [Int] = []
    /// Presenting failed this many times in a row (logged once, then now and then).
    private var presentFailures = 0
    /// The offset of the frame on screen (NaN before the first).
    private var lastDrawnOffset = Double.nan
    /// Which way the content last moved: +1 forward, -1 back (prefetch
    /// looks ahead that way); the autoplay direction until something moved.
    public private(set) var travel = 1
    private var running = true
    /// Sees every model event the daemon carries out, after the log and the
    /// subscribers (tests observe taps and selections through it).
    public var onEvent: ((CarouselEvent) -> Void)?
    public private(set) var firstFrameShown = false
    private(set) var pictureShown = false
    /// The first complete picture was presented; its line is logged when
    /// the display took it (`frameOnScreen`), after the first frame's.
    private var firstPictureInFlight = false

    public init(config: Configuration, path: String, backend: DisplayBackend,
                notifier: ServiceNotifier = ServiceNotifier(), options: Options = Options(),
                clock: @escaping () -> Int64 = MonotonicClock.now) throws {
        guard backend.pixelFormat == .xrgb8888 else {
            throw DisplayError("the display scans out \(backend.pixelFormat); carouseld draws XRGB8888")
        }
        self.config = config
        configPath = path
        self.backend = backend
        self.notifier = notifier
        self.clock = clock
        startTime = clock()
        power.lastActivity = startTime
        startedAt = options.startedAt ?? startTime
        enteredMain = options.enteredMain
        layout = Layout(config: config, backend: backend)
        writer = ScreenWriter(compositor: layout.compositor)
        pacer = FramePacer(period: backend.framePeriodMicroseconds)
        travel = config.autoplay.direction == .forward ? 1 : -1

        // Signals are blocked before the decoder thread starts, so it inherits the mask.
        signals = options.signals ? try Signals([SIGTERM, SIGINT, SIGHUP]) : nil
        epoll = try Epoll()
        timer = try Timer()
        let wake = try Wakeup()
        wakeup = wake
        cache = ItemCache(settings: layout.cacheSettings(config), prepare: options.prepare ?? ItemCache.prepare) { wake.signal() }

        var initial = AlbumState()
        let listed = Self.listAlbum(config, noting: &initial)
        _ = initial.replace(with: listed, current: 0)
        shuffleGenerator = SeededGenerator(seed: UInt64.random(in: .min ... .max))
        if config.images.order == .shuffle, config.images.files.isEmpty { initial.shuffleAll(using: &shuffleGenerator) }
        album = initial
        model = Carousel(settings: layout.settings, autoplay: config.autoplay, viewport: layout.viewport,
                         count: album.count, zoom: config.zoom, at: Timestamp(microseconds: startTime))
        try epoll.add(timer.fd.raw, token: Token.timer.rawValue)
        if let signals { try epoll.add(signals.fd.raw, token: Token.signals.rawValue) }
        try epoll.add(wakeup.fd.raw, token: Token.wakeup.rawValue)
        if let fd = backend.fileDescriptor {
            try epoll.add(fd, token: Token.display.rawValue)
            displayDescriptor = fd
        }
        localClock = options.localClock ?? .system
        backlightRoot = options.backlightRoot
        if options.localClock == nil {
            // A clock set by NTP or by hand moves the schedule's next change.
            do {
                let watch = try ClockChangeWatch()
                try epoll.add(watch.fd.raw, token: Token.clockSet.rawValue)
                clockChanges = watch
            } catch {
                log(.warning, "the wall clock's changes are not watched (\(error)): [power] schedule may run late after one")
            }
        }
        let reopenDRM: @Sendable (Configuration) throws -> DisplayBackend = { try openDRMBackend($0) }
        reopenDisplay = options.reopenDisplay ?? (backend is DRMBackend ? reopenDRM : nil)
        if let directory = options.stateDirectory {
            position = PositionStore(directory: directory)
            if config.images.resume { resumePosition() }
        }
        openBacklight()
        // The start picture is decoded (on the decoder thread) from here on,
        // while the rest of the start runs (input devices wait for the first
        // frame, below): the first frame would ask for it only once all that
        // is done.
        requestPictures(at: model.offset(at: Timestamp(microseconds: startTime)))
        // The first frame waits for the start picture (the modeset already
        // shows a black buffer): a black frame drawn meanwhile costs a full
        // frame's writing the decode needs, and shows nothing new. A picture
        // that takes longer gets the placeholder frame after this hold.
        if !album.isEmpty { holdUntil = startTime + Self.startHoldMicroseconds }
        watchAlbum()
        if let interval = notifier.watchdogInterval {
            nextWatchdog = startTime
            log(.info, "systemd watchdog: a keep-alive every \(interval / 2000) ms")
        }
        log(.info, "display: \(backend.summary), rotation \(rotation.rawValue)")
        if let line = layout.slopLine(configured: config.carousel.touchSlop) { log(.info, line) }
        log(.info, "images: \(album.count) in \(config.albumSource)")
        log(.info, layout.cacheLine(config))
        if options.input { inputDueAt = startTime + Self.startHoldMicroseconds }
        if options.hotplug, backend is DRMBackend { openHotplug() }
        if options.controlSocket { openControlSocket() }
        clockOverlay.reconfigure(clockLook)
        startMQTT()
    }

    // MARK: - Sources

    /// Watches the images folder (not an explicit file list) for changes.
    func watchAlbum() {
        if let old = watcher {
            epoll.remove(old.fileDescriptor)
            if old.mountsDescriptor >= 0 { epoll.remove(old.mountsDescriptor) }
            watcher = nil
        }
        guard config.images.files.isEmpty else { return }
        do {
            let w = try FolderWatcher(folder: config.images.path, recursive: config.images.recursive)
            try epoll.add(w.fileDescriptor, token: Token.watcher.rawValue)
            if w.mountsDescriptor >= 0 {
                // Without it a file system mounted on the folder later goes unseen; not fatal.
                do {
                    try epoll.add(w.mountsDescriptor, token: Token.mounts.rawValue, events: Epoll.priority)
                } catch {
                    log(.warning, "not watching mounts for \(config.images.path): \(error)")
                }
            }
            watcher = w
            if let failure = w.takeNewWatchFailure() { log(.warning, "not watching for changes: \(failure)") }
        } catch {
            log(.warning, "not watching \(config.images.path) for changes: \(error)")
        }
    }

    /// The album as the configuration says; problems are logged (once per
    /// file for the life of the daemon), never fatal (an empty carousel shows
    /// the empty-folder picture and waits).
    func listAlbum() -> [AlbumEntry] { Self.listAlbum(config, noting: &album) }

    static func listAlbum(_ config: Configuration, noting album: inout AlbumState) -> [AlbumEntry] {
        do {
            let listing = try config.albumListing()
            for line in album.unreportedSkips(listing.skipped.map(\.description)) { log(.warning, "skipping \(line)") }
            return listing.entries
        } catch {
            log(.warning, "\(error)")
            return []
        }
    }

    /// Input: a missing seat or a permission problem is logged, and the
    /// carousel runs on (autoplay, commands) rather than not at all.
    private func openInput() {
        do {
            let source = try InputSource(config: config.input, rotation: rotation, panel: backend.panelSize)
            try epoll.add(source.context.fileDescriptor, token: Token.input.rawValue)
            input = source
        } catch {
            log(.warning, "no input: \(error)")
        }
    }

    /// Display hotplug (udev "drm" events): a monitor plugged in later, or
    /// back after standby.
    private func openHotplug() {
        do {
            let monitor = try HotplugMonitor()
            try epoll.add(monitor.fileDescriptor, token: Token.hotplug.rawValue)
            hotplug = monitor
        } catch {
            log(.warning, "no display hotplug: \(error)")
        }
    }

    // MARK: - The loop

    /// Runs until SIGTERM or SIGINT; returns the exit status.
    public func run() -> Int32 {
        while running {
            let now = clock()
            step(now: now)
            do {
                try timer.arm(at: nextWake(now: now))
                try epoll.wait(into: &ready)
                for (token, events) in ready {
                    if token >= Self.controlTokenBase {
                        control?.handle(readyDescriptor: Int32(token - Self.controlTokenBase), events: events)
                        try synchronizeControl()
                    } else if let mqttToken = Token(rawValue: token), mqttToken == .mqttSocket || mqttToken == .mqttWake {
                        mqttReady(mqttToken, events: events)
                    } else {
                        handle(Token(rawValue: token))
                    }
                }
            } catch {
                log(.error, "event loop: \(error)")
                restoreBacklight()
                backend.restore()
                return 1
            }
        }
        notifier.stopping()
        stopMQTT()
        control?.close()
        restoreBacklight()
        backend.restore()
        log(.info, pacer.summary)
        log(.info, "stopped; display restored")
        return 0
    }

    /// One pass of the loop without waiting: keep-alive, the model's
    /// deadlines up to `now`, and a frame if one is due.
    public func step(now: Int64? = nil) {
        let now = now ?? clock()
        if let due = nextWatchdog, now >= due, let interval = notifier.watchdogInterval {
            // From the loop itself: a loop that hangs stops these, and systemd restarts us.
            notifier.watchdog()
            nextWatchdog = now + interval / 2
        }
        if let due = control?.nextDeadline, now >= due {
            // Idle connections are closed; a listener paused for lack of
            // descriptors takes clients again.
            control?.tick(now: now)
            try? synchronizeControl()
        }
        // The model's events through a kept array: no allocation per frame.
        var batch = eventBatch
        eventBatch = []
        batch.removeAll(keepingCapacity: true)
        model.advance(to: Timestamp(microseconds: now), into: &batch)
        deliver(batch)
        eventBatch = batch
        applySchedule(now: now)
        applyIdleRule(now: now)
        applyDimRule(now: now)
        tickClock(now: now)
        serviceMQTT(now: now)
        drawIfNeeded(now: now)
        // Right after the first frame is handed to the display, while it
        // flips: "first frame on screen" (and READY=1), logged when the flip
        // is seen, then means touch works too.
        if let due = inputDueAt, pacer.framesPresented > 0 || now >= due {
            inputDueAt = nil
            openInput()
        }
    }

    /// When the loop must wake up by itself: the model's next deadline, and
    /// while something moves on a backend without flip events, the next frame.
    func nextWake(now: Int64) -> Int64? {
        var wake = model.nextDeadline.map(\.microseconds)
        // One by one, not through an array: this runs every pass of the loop.
        func consider(_ due: Int64?) { if let due { wake = min(wake ?? due, due) } }
        consider(nextWatchdog)
        consider(control?.nextDeadline)
        consider(idleOffDeadline)
        consider(dimDeadline)
        consider(power.nextScheduleChange)
        consider(mqttDeadline)
        consider(inputDueAt)
        // The clock's next minute, while there is a screen to show it on
        // (off, the first pass after waking draws the minute it is then).
        if let due = clockOverlay.nextTick, !power.isOff, !displayIsAway { wake = min(wake ?? due, due) }
        if holding(now), !moving {
            // Waiting for pictures: the decoder's wake-up or the end of the hold.
            return min(wake ?? holdUntil, holdUntil)
        }
        // No display, no frames: the model's own deadlines (autoplay) still run.
        if moving || needsFrame, !displayIsAway, !power.isOff, let frame = pacer.nextFrame(after: now) {
            wake = min(wake ?? frame, frame)
        }
        return wake
    }

    private func handle(_ token: Token?) {
        switch token {
        case .timer:
            timer.acknowledge()
        case .signals:
            for signal in signals?.read() ?? [] {
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
            decodesFinished()
        case .display:
            do {
                if try backend.dispatch() {
                    pacer.flipCompleted()
                    frameOnScreen()
                }
            } catch {
                log(.error, "display: \(error)")
            }
        case .input:
            for routed in input?.read() ?? [] { carryOut(routed) }
        case .watcher:
            folderChanged()
        case .mounts:
            if let change = watcher?.mountsChanged() { folderChanged(change) }
        case .clockSet:
            if clockChanges?.clockWasSet() == true {
                log(.info, "the wall clock was set: [power] schedule and [overlay] clock looked at again")
                wallClockWasSet(now: clock())
            }
        case .hotplug:
            guard let events = hotplug?.drain() else { break }
            if let drm = backend as? DRMBackend, events.removedCards.contains(drm.deviceNumber) {
                displayWentAway("its card was removed: driver unbound or unloaded?")
            }
            if displayIsAway {
                if events.count > 0 { displayMayBeBack() }
            } else if events.hotplug, !power.isOff {
                // Off, many monitors drop hotplug in standby: the mode is
                // kept, and waking looks again.
                displayChanged()
            }
        case .mqttSocket, .mqttWake, nil:
            break  // MQTT's tokens go to mqttReady in the loop
        }
    }

    /// The decoder finished pictures (or failed on some): finished
    /// screenshots reply, failed files leave the album, a frame is due.
    func decodesFinished() {
        finishScreenshots()
        let failures = cache.drainFailures()
        if !failures.isEmpty { skip(failures) }
        needsFrame = true
    }

    /// Waits for the decoder to finish what it was asked for, then takes
    /// its results as the loop would on its wake-up (tests, `render`).
    public func settleDecodes() {
        cache.waitUntilIdle()
        decodesFinished()
    }

    // MARK: - Drawing

    /// Draws a frame if the model's effects asked for one (or for every
    /// frame while moving) and the panel can take one now. The last frame of
    /// a motion is drawn where it came to rest: the model says `moving` is
    /// over, with `needsFrame`, at the instant a settle ends on its page.
    func drawIfNeeded(now: Int64) {
        guard moving || needsFrame, !power.isOff, pacer.mayDraw(at: now) else { return }
        if windowRoomDue, !displayIsAway { applyWindowRoom() }
        let x = model.offset(at: Timestamp(microseconds: now))
        noteTravel(to: x)
        // A crossfade shows the pictures at both ends: those it fades out
        // are asked for with the ones it fades in (the motion's heading).
        let crossfade = model.crossfade(at: Timestamp(microseconds: now))
        let placed = requestPictures(at: crossfade?.from ?? x)
        if holding(now), !moving,
           !placed.allSatisfy({ album.path($0.index).flatMap(cache.image(for:)) != nil }) {
            return  // the old frame stays until the pictures are ready (or the hold ends)
        }
        guard let buffer = backend.acquire() else { return }
        holdUntil = 0
        lastDrawnOffset = x
        let page = model.lattice.cyclePage(model.lattice.nearestPage(to: x))
        let zoom = zoomLayer(at: Timestamp(microseconds: now))
        // While the content moves, what comes next along the way is laid out
        // too where the buffers have room: the slide moves the window over it.
        // (A crossfade moves nothing: its frames are written whole. Nor while
        // a picture is zoomed: its pixels change with every frame.)
        let ahead = moving && windowRoom > 0 && crossfade == nil && zoom == nil ? travel * windowRoom : 0
        compositor.layOut(&writer.scene, offset: crossfade?.from ?? x, count: album.count, wrap: config.carousel.wrap,
                          page: page, pageCount: model.numberOfPages, ahead: ahead, zoom: zoom) { i in
            self.album.path(i).flatMap(self.cache.image(for:))
        }
        writer.fade = crossfade?.fraction
        if let crossfade {
            compositor.layOut(&writer.incoming, offset: crossfade.to, count: album.count, wrap: config.carousel.wrap,
                              page: page, pageCount: model.numberOfPages) { i in
                self.album.path(i).flatMap(self.cache.image(for:))
            }
        }
        writer.scene.stamp = clockOverlay.stamp
        let complete = !placed.isEmpty && writer.scene.complete
        let window = writer.draw(into: buffer)
        do {
            try backend.present(buffer, window: window)
        } catch where error.reason == .windowRefused {
            // The driver will not show a window of a buffer: whole frames from now on.
            log(.warning, "display: \(error); sliding by writing every frame instead")
            windowRoom = 0
            writer.invalidate()
            return
        } catch where error.reason == .gone {
            displayWentAway("\(error)")
            return
        } catch {
            // The frame stays due; try again a while later rather than on
            // every pass of the loop (which would spin and flood the log).
            presentFailures += 1
            if presentFailures == 1 || presentFailures % 60 == 0 {
                log(.error, "display: \(error)\(presentFailures > 1 ? " (\(presentFailures) times in a row)" : "")")
            }
            pacer.presentFailed(at: now)
            return
        }
        if presentFailures > 0 {
            log(.info, "display: presenting works again after \(presentFailures) failure\(presentFailures == 1 ? "" : "s")")
            presentFailures = 0
        }
        needsFrame = false
        shown = writer
        pacer.presented(at: now, onScreenLater: backend.presentsAsynchronously)
        if complete, !pictureShown {
            pictureShown = true
            firstPictureInFlight = true
            // Only now (taken once this frame is on screen): longer buffers
            // cost a reallocation the first picture should not wait for.
            reserveWindowRoom()
        }
        // Without flip events a presented frame is on screen at once.
        if !backend.presentsAsynchronously { frameOnScreen() }
    }

    /// The zoomed picture at `time`, if one is: asks the cache for a decode
    /// at the resolution the zoom is heading for (made off the loop; until
    /// then the screen-size picture is scaled up), and lets it go after.
    private func zoomLayer(at time: Timestamp) -> ZoomLayer? {
        guard let view = model.zoomView(at: time), let path = album.path(view.item) else {
            cache.wantZoom(path: nil, scale: 1)
            return nil
        }
        cache.wantZoom(path: path, scale: max(view.scale, model.zoomTarget))
        return ZoomLayer(view: view, picture: cache.zoomImage(for: path))
    }

    /// Asks the decode cache for what the screen shows at offset `x`, then
    /// where the motion in flight comes to rest, then the neighbours (see
    /// `AlbumState.wanted`); returns the placements of the items on screen.
    /// The wanted list is built only when what it is made of changed (the
    /// items on screen, the target, the current item, the direction, the
    /// album): while the content moves that is a few times a slide, not every frame.
    @discardableResult
    private func requestPictures(at x: Double) -> [Compositor.Placement] {
        let wrap = config.carousel.wrap
        compositor.placements(offset: x, count: album.count, wrap: wrap, into: &placements)
        let placed = placements
        // Placements are consecutive slots: the first index and the count name them all.
        let key = WantedKey(album: album.generation, firstOnScreen: placed.first?.index ?? -1, onScreen: placed.count,
                            heading: prefetchTarget, current: model.lattice.itemIndex(at: x), direction: travel, wrap: wrap)
        if key != wantedKey {
            wantedKey = key
            cache.want(album.wanted(onScreen: placed.map(\.index), heading: prefetchTarget,
                                    current: key.current, direction: travel, wrap: wrap))
        }
        return placed
    }

    /// What the last wanted list was made of (see `requestPictures`).
    private struct WantedKey: Equatable {
        var album: Int
        var firstOnScreen: Int
        var onScreen: Int
        var heading: [Int]
        var current: Int
        var direction: Int
        var wrap: Bool
    }
    private var wantedKey: WantedKey?

    /// Which way the content moves, from the offset of the last frame to
    /// `x`: only while it moves or follows a finger (a carousel coming to
    /// rest past the wrap seam folds its offset back, which is no motion),
    /// and the shorter way round with wrap.
    private func noteTravel(to x: Double) {
        guard lastDrawnOffset.isFinite, moving || model.isDragging else { return }
        var d = x - lastDrawnOffset
        if config.carousel.wrap, album.count > 0 {
            let n = Double(album.count)
            d -= n * (d / n).rounded()
        }
        if d != 0 { travel = d > 0 ? 1 : -1 }
    }

    /// The display was set up anew (a hotplug, a new mode): a flip in flight
    /// was completed or dropped by the backend, so no flip event will come
    /// for it; draw a whole new frame.
    func displayWasRemodeset() {
        pacer.displayReset()
        writer.invalidate()
        reserveWindowRoom()
        needsFrame = true
    }

    /// Asks the display for buffers one screen longer along the panel axis,
    /// so that a slide moves the scan-out window rather than the pixels:
    /// once the first picture is on screen (it must not wait for them), and
    /// only when no flip is in flight: when a frame reached the screen, or
    /// before the next one is drawn (a backend remaking its buffers must not
    /// swallow the flip event the pacer waits for).
    func reserveWindowRoom() {
        guard pictureShown else { return }
        windowRoomDue = true
    }

    private func applyWindowRoom() {
        windowRoomDue = false
        // `[display] zero_copy = false`: panel-sized buffers (a driver that shows the wrong window).
        let granted = backend.reserveWindowRoom(config.display.zeroCopy ? compositor.axisExtent : 0, along: writer.axis)
        if granted != windowRoom {
            log(.info, granted > 0
                ? "display: slides move the scan-out window over buffers \(granted) px longer \(writer.axis == .horizontal ? "across" : "down") (zero copy)"
                : "display: slides are written frame by frame (no room for a moving window)")
        }
        windowRoom = granted
    }

    private func holding(_ now: Int64) -> Bool { now < holdUntil && needsFrame }

    /// A presented frame reached the screen.
    private func frameOnScreen() {
        defer {
            // After the start lines: what they time is the screen, not this.
            if windowRoomDue, !displayIsAway { applyWindowRoom() }
        }
        noteFrameAfterWake()
        if !firstFrameShown {
            firstFrameShown = true
            log(.info, "first frame on screen \((clock() - startedAt) / 1000) ms after start")
            notifier.ready(status: statusLine)
        }
        if firstPictureInFlight {
            firstPictureInFlight = false
            let beforeMain = enteredMain.map { "; \(($0 - startedAt) / 1000) ms of it before main (exec, libraries, runtime)" } ?? ""
            log(.info, "first picture on screen \((clock() - startedAt) / 1000) ms after start\(beforeMain)")
        }
    }

    /// The `STATUS=` text for systemd: what is on screen.
    public var statusLine: String {
        guard !album.isEmpty else { return "no pictures in \(config.albumSource)" }
        let index = model.currentItemIndex(at: Timestamp(microseconds: clock()))
        return "showing \(index + 1) of \(album.count): \(album.paths[index])"
    }

    /// A display was plugged or unplugged: look again; a new mode of the same
    /// size is simply drawn into, a different size is laid out again.
    func displayChanged() {
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

    /// Whether the display's device is away (`AbsentDisplay` stands in).
    public var displayIsAway: Bool { backend is AbsentDisplay }

    /// The display's device went away under us (a `remove` event for its
    /// card, or ENODEV from presenting): one line, the stand-in takes its
    /// place, and the carousel runs on (autoplay, commands, input) without
    /// drawing until `displayMayBeBack` finds a display again.
    public func displayWentAway(_ why: String) {
        guard !displayIsAway else { return }
        if let fd = displayDescriptor {
            epoll.remove(fd)
            displayDescriptor = nil
        }
        let gone = backend
        backend = AbsentDisplay(replacing: gone)
        if let drm = gone as? DRMBackend { drm.abandon() } else { gone.restore() }
        log(.warning, "display: \(gone.summary) went away (\(why)); "
            + (reopenDisplay == nil ? "nothing will be drawn" : "the carousel runs on and draws again when it is back"))
        pacer.displayReset()
        needsFrame = true
    }

    /// A card appeared (or a connector changed) while the display was away:
    /// open it again; once it opens, draw a whole frame there (laid out
    /// anew if its size or orientation differs). Not there yet: wait for
    /// the next event, quietly.
    public func displayMayBeBack() {
        guard displayIsAway, let reopen = reopenDisplay else { return }
        let fresh: DisplayBackend
        do {
            fresh = try reopen(config)
        } catch {
            log(.debug, "display not back yet: \(error)")
            return
        }
        if let fd = fresh.fileDescriptor {
            do {
                try epoll.add(fd, token: Token.display.rawValue)
            } catch {
                log(.error, "display: cannot watch \(fresh.summary): \(error)")
                fresh.restore()
                return
            }
            displayDescriptor = fd
        }
        let before = backend
        backend = fresh
        log(.info, "display is back: \(fresh.summary)")
        if power.isOff {
            // It came back lit; it was switched off.
            do { try fresh.setPower(on: false) } catch { log(.error, "display: cannot switch \(fresh.summary) off again: \(error)") }
        }
        displayWasRemodeset()
        if fresh.panelSize != before.panelSize || fresh.panelRotation != before.panelRotation
            || fresh.physicalSize != before.physicalSize {
            relayout()
        }
    }

    // MARK: - The album changes

    /// Files that cannot be decoded are skipped: one log line each, and the
    /// carousel goes on without them.
    private func skip(_ failures: [ItemCache.Failure]) {
        for f in failures { log(.warning, "skipping \(f.message)") }
        let now = Timestamp(microseconds: clock())
        let change = album.remove(Set(failures.map(\.path)), current: model.currentItemIndex(at: now))
        albumChanged(change)
    }

    /// The watched folder changed (its descriptor is readable): list it again.
    public func folderChanged() {
        guard let w = watcher else { return }
        do {
            folderChanged(try w.drain())
        } catch {
            log(.warning, "watching \(config.images.path): \(error)")
        }
    }

    /// What the watcher saw (events, or a look after a mount or unmount).
    func folderChanged(_ change: FolderWatcher.Change) {
        if change.folderReplaced {
            log(.info, "\(config.images.path) is another folder now (re-created, moved in, or a file system mounted"
                + " or unmounted there); watching it")
        } else if change.folderVanished {
            log(.warning, "\(config.images.path) was removed or unmounted; showing nothing until it is back")
        }
        if let failure = watcher?.takeNewWatchFailure() { log(.warning, "not watching for changes: \(failure)") }
        guard !change.isEmpty else { return }
        rescanAlbum()
    }

    /// Lists the album again and shows the new list, keeping the picture on
    /// screen where it still exists.
    public func rescanAlbum() {
        let now = Timestamp(microseconds: clock())
        let listed = listAlbum()
        let change = album.replace(with: listed, current: model.currentItemIndex(at: now),
                                   keepingOrder: shuffles)
        cache.forget(change.stale)
        albumChanged(change)
    }

    private func albumChanged(_ change: AlbumState.Change) {
        let now = Timestamp(microseconds: clock())
        deliver(model.replaceItems(count: album.count, showing: change.index, at: now))
        log(.info, "images: \(album.count) now, showing \(album.path(change.index) ?? "nothing")")
        notifier.status(statusLine)
        needsFrame = true
        keepPosition()
        mqttStateMayHaveChanged()
    }

    // MARK: - Into the model, and what comes back

    /// Carries out what the model returned: its events (the log, the
    /// subscribers, each at its exact model time), then its effects (a
    /// frame, frames while moving, decoding ahead, systemd's status).
    func deliver(_ events: [CarouselEvent]) {
        for e in events {
            switch e.kind {
            case _ where e.kind.isPerFrame: break  // every frame of a motion: subscribers only
            case .didSelectItem(let i): log(.info, "select \(i)")
            case .longPress(let i): log(.info, "long press \(i)")
            default:
                if Log.enabled(.debug) { log(.debug, "event \(e.kind.name)\(e.kind.index.map { " \($0)" } ?? "")") }
            }
            broadcast(e)
            onEvent?(e)
        }
        apply(model.takeEffects())
    }

    private func apply(_ effects: CarouselEffects) {
        if effects.needsFrame { needsFrame = true }
        if let started = effects.moving {
            moving = started
            if !started { prefetchTarget = [] }
        }
        if !effects.prefetch.isEmpty {
            prefetchTarget = effects.prefetch
            // Ask now: the frame that would ask may wait for the panel.
            requestPictures(at: model.offset(at: Timestamp(microseconds: clock())))
        }
        if effects.indexChanged != nil, firstFrameShown { notifier.status(statusLine) }
        keepPosition()
        reshuffleAtRest()
    }

    // MARK: - The position across restarts

    /// How the position file names item `index`: relative to the images
    /// folder, or as the `[images] files` list gives it.
    func positionName(_ index: Int) -> String? {
        guard album.entries.indices.contains(index) else { return nil }
        return config.images.files.isEmpty ? album.entries[index].name : album.entries[index].path
    }

    /// At start: shows the picture the position file names, if it is still
    /// in the album; else start_index, with one line saying why.
    private func resumePosition() {
        guard var store = position else { return }
        defer { position = store }
        switch store.load() {
        case .missing:
            break
        case let .unusable(why):
            log(.warning, "position file \(store.path) unusable (\(why)); starting at start_index")
        case let .name(name):
            guard let index = album.entries.indices.first(where: { positionName($0) == name }) else {
                log(.info, "position: \(name) is no longer in \(config.albumSource); starting at start_index")
                return
            }
            _ = model.replaceItems(count: album.count, showing: index, at: Timestamp(microseconds: startTime))
            log(.info, "position: resuming at \(name)")
        }
    }

    /// Writes the picture on screen to the position file once it changed
    /// and the carousel is at rest: a fling across ten pictures is one
    /// write, not ten (each is an fsync on an SD card).
    private func keepPosition() {
        guard config.images.resume, position != nil, !moving, !model.isMoving else { return }
        let index = model.currentItemIndex(at: Timestamp(microseconds: clock()))
        guard let name = positionName(index), name != position?.saved else { return }
        position?.save(name)
    }

    /// Carries out one routed input event.
    public func carryOut(_ routed: RoutedInput) {
        if takenByDisplayPower(routed) { return }
        switch routed {
        case let .touch(input, time):
            feed(input, at: time)
        case let .command(command):
            if let error = perform(command) { log(.info, "key ignored: \(error)") }
        case let .touchscreenAdded(info, size):
            log(.info, InputRouter.added(info))
            touchscreen = .touchscreen(id: info.id, name: info.name, size: size)
            relayout()
        case let .touchscreenRemoved(info):
            log(.info, InputRouter.removed(info))
            model.forget(device: info.id)
            if case .touchscreen(info.id, _, _)? = touchscreen {
                touchscreen = nil
                relayout()
            }
        case let .note(line):
            log(.info, line)
        }
    }

    /// Feeds a touch (layout pixels) at its own time stamp (µs).
    public func feed(_ input: TouchInput, at time: Int64) {
        noteFinger(input)
        deliver(model.handle(input, at: Timestamp(microseconds: time), device: device(of: input)))
    }

    /// The key under which the gesture stage learns a panel's sample rate and
    /// noise: the pointer apart from the touchscreen (its input ids are the
    /// seat's slots, which do not say which device; the layout follows one
    /// touchscreen, the latest added).
    private func device(of input: TouchInput) -> Int {
        if input.touchID == InputRouter.pointerID { return -1 }
        if case .touchscreen(let device, _, _)? = touchscreen { return device }
        return 0
    }

    /// Carries out a command now; the model's refusal, if it refused.
    public func perform(_ command: CarouselCommand) -> CommandError? {
        let now = Timestamp(microseconds: clock())
        // What happened up to now is delivered first, also when the command
        // is refused (a refusal returns no events).
        deliver(model.advance(to: now))
        switch model.perform(command, at: now) {
        case .success(let events):
            deliver(events)
            return nil
        case .failure(let error):
            return error
        }
    }
}
