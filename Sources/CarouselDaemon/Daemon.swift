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

/// The running carousel: one loop over the services registered on it
/// (`LoopService`: input, the display's flips and hotplug, the control
/// socket, MQTT, the folder watch, the work handed off the loop, signals,
/// the watchdog, the clock overlay, pushed text, the wall clock), and the interpreter
/// of what they ask (`ask`). Nothing on the loop blocks; at rest it sleeps
/// in `epoll_wait` until a descriptor is ready or the earliest deadline.
///
/// The flow is one way: input and commands go into the model, the model's
/// events come back and are carried out (logged, published to the services
/// that take events, status), and frames are drawn when the picture
/// changed, paced by `FramePacer` (Frames.swift).
public final class Daemon {
    /// The configuration running now (after reloads and `set` requests).
    public internal(set) var config: Configuration
    /// The file `reload` and SIGHUP read again.
    public let configPath: String
    /// The display; an `AbsentDisplay` while its device is away.
    public internal(set) var backend: DisplayBackend {
        didSet { backendGeneration += 1 }
    }
    /// Counts the displays held, so that a new one's descriptor is told from the old one's.
    private(set) var backendGeneration: UInt64 = 0
    let reopenDisplay: (@Sendable (Configuration) throws -> DisplayBackend)?
    public internal(set) var layout: Layout
    public var rotation: Rotation { layout.rotation }
    public internal(set) var model: Carousel
    public internal(set) var album: AlbumState
    /// Where the daemon keeps what outlives a restart (`Options.stateDirectory`).
    let stateDirectory: String?
    let cache: ItemCache
    var compositor: Compositor { layout.compositor }
    let epoll: Epoll
    /// Every source on the loop.
    let services: LoopServices
    /// The one way off the loop and back (decodes, screenshots).
    let executor: LoopExecutor
    /// systemd's notification socket (does nothing outside systemd).
    let notifier: ServiceNotifier
    /// The loop's clock, µs of CLOCK_MONOTONIC (tests pass a manual one).
    let clock: () -> Int64
    /// CLOCK_MONOTONIC at start, µs: the origin of uptime_ms.
    let startTime: Int64
    let startedAt: Int64
    let enteredMain: Int64?
    /// Kept between passes of the loop (their storage, not their contents):
    /// the model's events of a pass, and the descriptors epoll found ready.
    private var eventBatch: [CarouselEvent] = []
    private var ready: [(token: UInt64, events: UInt32)] = []
    /// The loop's one timer, armed for the earliest deadline.
    private let timer: Timer
    /// Local time for `[power] schedule` and the clock.
    let localClock: LocalClock
    /// `[overlay] clock`: its stamp and the next minute (ClockOverlay.swift).
    let clockOverlay = ClockOverlay()
    /// Clips (`[video]`): the one that plays, its frames (VideoService.swift).
    private(set) var video: VideoService?
    /// The screen's power: the policy and its deadline (DisplayPower.swift).
    private(set) var screenPower: ScreenPowerService!
    let backlightRoot: String?
    /// The clock is the monotonic clock (see `Options.realTime`).
    let realTime: Bool
    private var running = true
    /// Frames: what the screen shows, written and presented when due (Frames.swift).
    public private(set) var frames: FramePath!
    /// Sees every model event the daemon carries out, after the log and the
    /// subscribers (tests observe taps and selections through it).
    public var onEvent: ((CarouselEvent) -> Void)?

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
        startedAt = options.startedAt ?? startTime
        enteredMain = options.enteredMain
        layout = Layout(config: config, backend: backend, boardMemory: options.boardMemory ?? PixelMemory.boardBytes)
        localClock = options.localClock ?? .system
        backlightRoot = options.backlightRoot
        realTime = options.realTime
        reopenDisplay = options.reopenDisplay

        epoll = try Epoll()
        timer = try Timer()
        services = LoopServices(epoll: epoll)
        executor = try LoopExecutor()
        // Signals are blocked before the decoder thread starts, so it inherits the mask.
        let signals: SignalService? = options.signals ? try SignalService() : nil
        let decoded = executor.doorbell()
        cache = ItemCache(settings: layout.cacheSettings(config), prepare: options.prepare ?? ItemCache.prepare,
                          onReady: { decoded.ring() })

        var initial = AlbumState(portraitProbe: layout.portraitProbe(config))
        let listed = Self.listAlbum(config, noting: &initial)
        _ = initial.replace(with: listed, current: 0)
        if config.images.order == .shuffle, config.images.files.isEmpty { initial.shuffleAll() }
        album = initial
        model = Carousel(settings: layout.settings, autoplay: config.autoplay, viewport: layout.viewport,
                         count: album.count, zoom: config.zoom, at: Timestamp(microseconds: startTime))
        try epoll.add(timer.fd.raw, token: LoopServices.loopToken)
        stateDirectory = options.stateDirectory
        frames = FramePath(daemon: self)
        screenPower = ScreenPowerService(daemon: self, at: startTime)
        openBacklight()
        executor.answer(decoded) { [unowned self] in self.decodesFinished() }
        registerServices(options, signals: signals)
        // The start picture is decoded (on the decoder thread) from here on,
        // while the rest of the start runs (input devices wait for the first
        // frame): the first frame would ask for it only once all that is done.
        frames.requestPictures(at: model.offset(at: Timestamp(microseconds: startTime)))
        // The first frame waits for the start picture (the modeset already
        // shows a black buffer): a black frame drawn meanwhile costs a full
        // frame's writing the decode needs, and shows nothing new. A picture
        // that takes longer gets the placeholder frame after this hold.
        if !album.isEmpty { frames.holdUntil = startTime + Self.startHoldMicroseconds }
        log(.info, "display: \(backend.summary), rotation \(rotation.rawValue)")
        if let line = layout.slopLine(configured: config.carousel.touchSlop) { log(.info, line) }
        log(.info, "images: \(album.pictureCount) in \(config.albumSource)"
            + (album.portraitProbe == nil ? "" : ", on \(album.count) pages with portraits paired"))
        log(.info, layout.cacheLine(config))
        log(.info, layout.decodeLine(config))
    }

    /// Every source on the loop, in the order their deadlines are run.
    /// A new source is one line here.
    private func registerServices(_ options: Options, signals: SignalService?) {
        services.register(executor)
        // First: it may start the carousel on another picture, which the start decodes.
        if let directory = stateDirectory { services.register(PositionService(daemon: self, directory: directory)) }
        if let signals {
            signals.attach(configPath: configPath) { [unowned self] in self.ask($0) }
            services.register(signals)
        }
        if let watchdog = WatchdogService(notifier: notifier, now: startTime) { services.register(watchdog) }
        services.register(screenPower)
        services.register(PresenceService(daemon: self))
        services.register(DisplayFlipService(daemon: self))
        if options.hotplug, backend.hotplugDevice != nil, let hotplug = DisplayHotplugService(daemon: self) {
            services.register(hotplug)
        }
        services.register(FolderWatchService(daemon: self))
        if options.localClock == nil, let wallClock = WallClockService(onSet: { [unowned self] in self.wallClockWasSet(now: $0) }) {
            services.register(wallClock)
        }
        if options.controlSocket, let control = ControlService(daemon: self) { services.register(control) }
        clockOverlay.daemon = self
        clockOverlay.reconfigure(layout.clockLook(config))
        services.register(clockOverlay)
        services.register(PushedTextService(daemon: self))
        video = VideoService(daemon: self)
        services.register(video!)
        services.register(MQTTService(daemon: self))
        services.register(AutoplayReadinessService(daemon: self))
        // Input last: it opens once the first frame is handed to the display.
        if options.input { services.register(InputService(daemon: self, openBy: startTime + Self.startHoldMicroseconds)) }
    }

    // MARK: - The loop

    /// Runs until SIGTERM or SIGINT; returns the exit status.
    public func run() -> Int32 {
        while running {
            let now = clock()
            step(now: now)
            services.synchronize()
            do {
                try timer.arm(at: nextWake(now: now))
                try epoll.wait(into: &ready)
            } catch {
                log(.error, "event loop: \(error)")
                restoreBacklight()
                backend.restore()
                return 1
            }
            dispatchReady()
        }
        notifier.stopping()
        services.stopAll()
        restoreBacklight()
        backend.restore()
        log(.info, frames.pacer.summary)
        log(.info, "stopped; display restored")
        return 0
    }

    /// Hands what epoll found ready to the services (the loop's timer is the loop's own).
    private func dispatchReady() {
        for (token, events) in ready {
            if token == LoopServices.loopToken {
                timer.acknowledge()
            } else {
                _ = services.dispatch(token: token, events: events, now: clock())
            }
        }
    }

    /// Waits up to `timeoutMilliseconds` for the services' descriptors and
    /// hands them over, without arming the loop's timer: tests on a manual
    /// clock run the deadlines themselves with `step`, and the descriptors
    /// (a real control socket) with this.
    public func dispatchDescriptors(timeoutMilliseconds: Int32) throws(SystemCallError) {
        services.synchronize()
        try epoll.wait(timeoutMilliseconds: timeoutMilliseconds, into: &ready)
        dispatchReady()
    }

    /// One pass of the loop without waiting: the model's deadlines up to
    /// `now`, the services' deadlines, the screen's power rules, and a frame
    /// if one is due.
    public func step(now: Int64? = nil) {
        let now = now ?? clock()
        // The model's events through a kept array: no allocation per frame.
        var batch = eventBatch
        eventBatch = []
        batch.removeAll(keepingCapacity: true)
        model.advance(to: Timestamp(microseconds: now), into: &batch)
        deliver(batch)
        eventBatch = batch
        services.runDue(now: now)
        frames.drawIfNeeded(now: now)
    }

    /// When the loop must wake up by itself: the model's next deadline, the
    /// services' and the screen's power rules', and while something moves
    /// on a backend without flip events, the next frame.
    func nextWake(now: Int64) -> Int64? {
        var wake = model.nextDeadline.map(\.microseconds)
        func consider(_ due: Int64?) { if let due { wake = min(wake ?? due, due) } }
        consider(services.earliestDeadline)
        if let holdEnd = frames.holdEnd(now: now) {
            // Waiting for pictures: the decoder's wake-up or the end of the hold.
            return min(wake ?? holdEnd, holdEnd)
        }
        // No display, no frames: the model's own deadlines (autoplay) still run.
        consider(frames.nextFrame(now: now))
        return wake
    }

    /// Whether frames can be shown now: the display is there and on.
    var screenIsShowing: Bool { !power.isOff && backend.isPresent }

    /// What the screen shows for `key`: a playing clip's frame, else the decode cache's picture.
    func picture(for key: PageKey) -> DecodedImage? {
        video?.picture(for: key) ?? cache.image(for: key)
    }

    /// The `STATUS=` text for systemd: what is on screen.
    public var statusLine: String {
        guard !album.isEmpty else { return "no pictures in \(config.albumSource)" }
        let index = model.currentItemIndex(at: Timestamp(microseconds: clock()))
        return "showing \(index + 1) of \(album.count): \(album.pageName(index))"
    }

    // MARK: - What services ask

    /// Carries out what a service asks (the interpreter of `LoopAsk`).
    func ask(_ ask: LoopAsk) {
        switch ask {
        case .frame:
            frames.needsFrame = true
        case let .stop(reason):
            log(.info, "\(reason), stopping")
            running = false
        case .reload:
            _ = reload()
        case .rescanAlbum:
            rescanAlbum()
        case .flipCompleted:
            frames.flipCompleted()
        case let .displayGone(why):
            displayWentAway(why)
        case .displayMayBeBack:
            displayMayBeBack()
        case .displayChanged:
            displayChanged()
        }
    }

    /// Tells every service what happened.
    func tell(_ happening: LoopHappening) { services.tell(happening, now: clock()) }

    /// The decoder finished pictures (or failed on some): failed files leave
    /// the album, a frame is due.
    func decodesFinished() {
        let failures = cache.drainFailures()
        if !failures.isEmpty { skip(failures) }
        frames.needsFrame = true
        tell(.decoded)
    }

    /// Waits for the decoder to finish what it was asked for, then takes
    /// its results as the loop would on its wake-up (tests, `render`).
    public func settleDecodes() {
        cache.waitUntilIdle()
        decodesFinished()
    }

    /// The wall clock was set (NTP, by hand): the schedule and the clock look again.
    func wallClockWasSet(now: Int64) {
        applySchedule(now: now, recompute: true)
        services.tell(.wallClockSet, now: now)
    }

    // MARK: - Into the model, and what comes back

    /// Carries out what the model returned: its events (the log, the
    /// subscribers, each at its exact model time), then its effects (a
    /// frame, frames while moving, decoding ahead, systemd's status).
    func deliver(_ events: [CarouselEvent]) {
        for e in events {
            switch e.kind {
            case _ where e.kind.isPerFrame: break  // every frame of a motion: subscribers only
            // With the picture under the finger (of a pair, the half it was on).
            case .didSelectItem(let i): log(.info, "select \(i) (\(pressedPicture(i) ?? "nothing"))")
            case .longPress(let i): log(.info, "long press \(i) (\(pressedPicture(i) ?? "nothing"))")
            default:
                if Log.enabled(.debug) { log(.debug, "event \(e.kind.name)\(e.kind.index.map { " \($0)" } ?? "")") }
            }
            broadcast(e)
            onEvent?(e)
        }
        apply(model.takeEffects())
    }

    func apply(_ effects: CarouselEffects) {
        frames.apply(effects, now: clock())
        if effects.indexChanged != nil, frames.firstFrameShown { notifier.status(statusLine) }
        tell(.modelChanged)
        reshuffleAtRest()
    }


    /// Publishes an event line (`controlEventLine`) to every service that
    /// takes events (the socket's subscribers, MQTT's event topic).
    func publishEvent(_ name: String, _ fields: @autoclosure () -> [String: JSONValue], perFrame: Bool = false) {
        if !perFrame { tell(.stateChanged) }
        services.publish(perFrame: perFrame) { controlEventLine(name, fields()) }
    }
}
