import CarouselAlbum
import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselDisplay
import CarouselDisplayServices
import CarouselImaging
import CarouselClips
import CarouselControlService
import CarouselInputService
import CarouselKenBurns
import CarouselLoop
import CarouselMQTTClient
import CarouselPairing
import CarouselPresence
import CarouselPushedText
import CarouselServices
import CarouselPlatform
import CarouselRender
#if canImport(Glibc)
import Glibc
#endif

/// The running carousel: one loop over the services registered on it
/// (`LoopService`, `registerServices` lists them), the view they read
/// (`LoopView`, LoopViewing.swift) and the interpreter of what they ask
/// (`ask`, LoopAsks.swift). At rest it sleeps in `epoll_wait` until a
/// descriptor is ready or the earliest deadline.
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
        didSet {
            backendGeneration += 1
            services.invalidate()
        }
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
    /// The model changed since services were last told (at start: they
    /// have not been told of it yet).
    private var modelChangeUntold = true
    /// CLOCK_MONOTONIC at start, µs: the origin of uptime_ms.
    public let startTime: Int64
    let startedAt: Int64
    let enteredMain: Int64?
    /// Kept between passes of the loop (their storage, not their contents):
    /// the model's events of a pass, and the descriptors epoll found ready.
    private var eventBatch: [CarouselEvent] = []
    private var ready: [(token: UInt64, events: UInt32)] = []
    /// The loop's one timer, armed for the earliest deadline.
    private let timer: Timer
    /// Local time for `[power] schedule` and the clock.
    public let localClock: LocalClock
    /// `[overlay] clock`: its stamp and the next minute (the CarouselServices room).
    private(set) var clockOverlay: ClockOverlay!
    /// The screen's power: the policy, the backlight it dims, a wake being
    /// timed (DisplayPower.swift); its deadline is `ScreenPowerService`'s.
    var screenPower: ScreenPower
    let backlightRoot: String?
    /// The clock is the monotonic clock (see `Options.realTime`).
    public let realTime: Bool
    /// Cleared by a stop (`LoopAsk.stop`): the loop ends after this pass.
    var running = true
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
        executor = try LoopExecutor()
        services = LoopServices(epoll: epoll, executor: executor)
        // Signals are blocked before the decoder thread starts, so it inherits the mask.
        let signals: SignalService? = options.signals ? try SignalService() : nil
        let decoded = executor.doorbell()
        cache = ItemCache(settings: layout.cacheSettings(config), prepare: options.prepare ?? ItemCache.prepare,
                          onReady: { decoded.ring() })

        var initial = AlbumState(portraitProbe: layout.portraitProbe(config))
        if let directory = options.stateDirectory { initial.hidden = HiddenPictures.read(directory) }
        let listed = Self.listAlbum(config, noting: &initial)
        _ = initial.replace(with: listed, current: 0)
        if config.images.order == .shuffle, config.images.files.isEmpty { initial.shuffleAll() }
        album = initial
        model = Carousel(settings: layout.settings, autoplay: config.autoplay, viewport: layout.viewport,
                         count: album.count, zoom: config.zoom, at: Timestamp(microseconds: startTime))
        try epoll.add(timer.fd.raw, token: LoopServices.loopToken)
        stateDirectory = options.stateDirectory
        screenPower = ScreenPower(config, at: startTime)
        frames = FramePath(daemon: self)
        services.view = self
        services.carryOut = { [unowned self] in self.ask($0) }
        openBacklight()
        executor.answer(decoded) { [unowned self] in self.decodesFinished() }
        registerServices(options, signals: signals)
        // What they asked while being made (the position: start on another picture).
        services.flush()
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
        // First: it may start the carousel on another picture, which the start decodes.
        if let directory = stateDirectory { services.register { PositionService(context: $0, directory: directory) } }
        if let signals { services.register { [configPath] in signals.attach($0, configPath: configPath) } }
        services.register { [notifier, startTime] _ in WatchdogService(notifier: notifier, now: startTime) }
        services.register { ScreenPowerService(context: $0) }
        services.register { PresenceService(context: $0) }
        services.register { DisplayFlipService(context: $0) }
        if options.hotplug, backend.hotplugDevice != nil { services.register { DisplayHotplugService(context: $0) } }
        services.register { FolderWatchService(context: $0) }
        if options.localClock == nil { services.register { WallClockService(context: $0) } }
        if options.controlSocket { services.register { ControlService(context: $0) } }
        clockOverlay = services.register { ClockOverlay(context: $0) }
        services.register { PushedTextService(context: $0) }
        services.register { VideoService(context: $0) }
        services.register { KenBurnsService(context: $0) }
        services.register { PairingService(context: $0) }
        services.register { MQTTService(context: $0) }
        services.register { AutoplayReadinessService(context: $0) }
        // Input last: it opens once the first frame is handed to the display.
        if options.input { services.register { InputService(context: $0, openBy: startTime + Self.startHoldMicroseconds) } }
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
        // What services asked outside a pass (a test settling a clip's thread).
        services.flush()
        // The model's events through a kept array: no allocation per frame.
        var batch = eventBatch
        eventBatch = []
        batch.removeAll(keepingCapacity: true)
        // A deadline of the model's that fires (a motion's end, autoplay, a
        // long press) changes more than where the content is.
        let fires = model.nextDeadline.map { $0.microseconds <= now } ?? false
        model.advance(to: Timestamp(microseconds: now), into: &batch)
        deliver(batch, onlyTime: !fires)
        eventBatch = batch
        services.runDue(now: now)
        frames.drawIfNeeded(now: now)
    }

    /// When the loop must wake up by itself: the model's next deadline, the
    /// services' and the screen's power rules', and while something moves
    /// on a backend without flip events, the next frame.
    public func nextWake(now: Int64) -> Int64? {
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
    public var screenIsShowing: Bool { !power.isOff && backend.isPresent }

    /// What the screen shows for `key`: a playing clip's frame, a framed
    /// page's picture at its still framing while the carousel moves, else
    /// the decode cache's picture.
    func picture(for key: PageKey) -> DecodedImage? {
        if let framed = frames.framed, framed.key == key { return framed.picture }
        if let baked = frames.baked[key] { return baked.picture }
        return cache.image(for: key)
    }

    /// The `STATUS=` text for systemd: what is on screen.
    public var statusLine: String {
        guard !album.isEmpty else { return "no pictures in \(config.albumSource)" }
        let index = model.currentItemIndex(at: Timestamp(microseconds: clock()))
        return "showing \(index + 1) of \(album.count): \(album.pageName(index))"
    }

    // MARK: - What happened, told to the services

    /// Tells the services that subscribe to it what happened. Beyond the
    /// model and the decoder, what happened may change what any service's
    /// deadline or descriptors depend on: all are asked again.
    func tell(_ happening: LoopHappening) {
        switch happening {
        case .modelChanged, .decoded, .stateChanged: break
        default: services.invalidate()
        }
        services.tell(happening, now: clock())
    }

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
        services.invalidate()
        services.tell(.wallClockSet, now: now)
    }

    // MARK: - Into the model, and what comes back

    /// Carries out what the model returned: its events (the log, the
    /// subscribers, each at its exact model time), then its effects (a
    /// frame, frames while moving, decoding ahead, systemd's status).
    /// `onlyTime`: the events of time passing, no deadline fired (a frame of
    /// a motion in flight): the services that follow the model are told only
    /// if something beyond the motion changed.
    func deliver(_ events: [CarouselEvent], onlyTime: Bool = false) {
        var changed = !onlyTime
        for e in events {
            if !e.kind.isPerFrame { changed = true }
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
        apply(model.takeEffects(), tell: changed)
    }

    func apply(_ effects: CarouselEffects, tell told: Bool = true) {
        frames.apply(effects, now: clock())
        if effects.indexChanged != nil, frames.firstFrameShown { notifier.status(statusLine) }
        if told || modelChangeUntold || effects.indexChanged != nil || effects.moving != nil || effects.selected != nil
            || effects.longPressed != nil {
            modelChangeUntold = false
            tell(.modelChanged)
        }
        reshuffleAtRest()
    }


    /// Publishes an event line (`controlEventLine`) to every service that
    /// takes events (the socket's subscribers, MQTT's event topic).
    func publishEvent(_ name: LoopEvent.Name, _ fields: @autoclosure () -> [String: JSONValue], perFrame: Bool = false) {
        if !perFrame { tell(.stateChanged) }
        services.publish(perFrame: perFrame) { controlEventLine(name.rawValue, fields()) }
    }
}
