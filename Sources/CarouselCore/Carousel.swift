/// The carousel: paging physics and autoplay as one value with no I/O and
/// no clock (SPEC.md sections 2, 3, 4 and 7).
///
/// Touch input goes through a stored `Gesture` first, which recognises what
/// the fingers mean (touch down, drag, release, tap, long press, pinch, pan,
/// double tap); the model carries out those intents with what needs geometry
/// and motion: catching, following the finger (anchor, rubber band), release
/// and paging, tap and long-press hit-testing, and the zoom of one picture
/// (`ZoomState`: scale and translation, each a spring or momentum of its own).
///
/// Every mutating call but `takeEffects()` takes the current instant and
/// returns the events that happened up to it, stamped with their own times. Deadlines (a settle
/// coming to rest, a long press, the next automatic advance) are exact
/// instants exposed by `nextDeadline`, so a daemon arms one timer for them
/// and a test steps a manual clock.
///
/// Two views of what happened come out. Each entry point returns its
/// delegate-style events, with their exact times (for subscribers and
/// tests). The model also accumulates effects for the display loop (draw a
/// frame, keep drawing, decode ahead, report an index or a selection),
/// which `takeEffects()` hands over and clears: see `CarouselEffects`.
///
/// Offsets are in items (SwipeView's `scrollOffset`); pixels appear only
/// through `geometry`, for input and physics. With wrap the stored offset is
/// unwrapped while anything moves (so motion is continuous across the seam)
/// and folded back into `0..<count` at rest.
public struct Carousel: Sendable {
    public internal(set) var settings: CarouselSettings
    public internal(set) var autoplaySettings: AutoplaySettings
    public internal(set) var geometry: Geometry
    public internal(set) var lattice: PageLattice
    public internal(set) var zoomSettings: ZoomSettings

    /// The instant of the latest call: time never runs backwards in the model.
    public internal(set) var clock: Timestamp

    var motion: Motion {
        // Where a motion is heading is known the moment it starts: that is
        // when the daemon should start decoding what will be on screen there.
        didSet {
            if let heading = motion.heading, heading != oldValue.heading {
                outbox.prefetch = items(visibleAt: heading)
            }
        }
    }
    /// Recognises what the fingers mean; the model acts on its intents.
    var gesture: Gesture
    /// The finger holding the carousel, as far as the model is concerned.
    var hold: Hold?
    /// Effects accumulated since the last `takeEffects()`.
    var outbox: Outbox
    /// Where the last tap or long press fell (the item and how far across
    /// it), read with its `didSelectItem` or `longPress` event.
    public internal(set) var lastPress: ItemHit?
    /// `willBeginDecelerating` was emitted and `didEndDecelerating` is owed.
    var decelerating = false
    /// A finger or a command touched the carousel since it last rested: the
    /// next rest counts as the end of an interaction (resume_delay), even if
    /// an automatic advance was in flight.
    var interacted = false
    var pausedByCommand = false
    /// `resume` turned on autoplay that `[autoplay] enabled = false` keeps
    /// off; a `pause` or a new `enabled` ends it.
    var resumedByCommand = false
    /// The zoomed picture (`nil`: none, every picture at scale 1). While it
    /// exists autoplay is paused (the `zoom` source) and one finger pans it.
    var zoom: ZoomState?
    /// The last scale reported through `didZoom`.
    var reportedScale = 1.0
    /// Zoom events of a rest that had no event list at hand, delivered with the next report.
    var pendingZoomEvents: [CarouselEvent] = []
    var displayOff = false
    /// Whether the current page is a clip, and whether it plays (then
    /// autoplay waits for its end: the `video` pause source).
    public internal(set) var video = VideoPresence.none
    var autoplayDeadline: Timestamp?
    /// Whether the page autoplay goes to next can be shown (its picture is
    /// decoded); the daemon says so (`setUpcomingReady`).
    var upcomingReady = true
    /// Autoplay's moment came while the page it goes to could not be shown
    /// yet: it moves when the page can be, or at `autoplayDeadline`, one
    /// more interval later, whatever the page shows then.
    var autoplayWaiting = false
    /// When the carousel goes back to the start item (`idle_return`): armed
    /// when it rests after an interaction, disarmed when one begins.
    var idleReturnDeadline: Timestamp?
    /// The last offset and index reported through events.
    var reportedOffset: Double
    var reportedIndex: Int

    enum Motion: Sendable {
        /// Still; `offset` in items.
        case rest(Double)
        /// A finger holds the carousel; the offset follows it.
        case held(Double)
        /// Autoscroll.
        case drift(DriftMotion)
        /// A spring toward a page (px); `afterDrag` tells whether the
        /// deceleration events frame it.
        case settle(SpringMotion)
        case momentum(MomentumMotion)
        case bounce(SpringMotion)
        /// A programmatic scroll; `autoplay` marks automatic advances.
        case animation(EaseMotion, autoplay: Bool)
        /// A programmatic change shown as a crossfade (`effect = crossfade`):
        /// nothing moves, the next picture fades in over the one on screen.
        case fade(FadeMotion, autoplay: Bool)

        /// The offset the motion comes to rest on, when it is known.
        var heading: Double? {
            switch self {
            case .settle(let s), .bounce(let s): s.target
            case .momentum(let m): m.offset(at: m.end)
            case .animation(let e, _): e.to
            case .fade(let f, _): f.to
            case .rest, .held, .drift: nil
            }
        }
    }

    /// What the model keeps of a touch: the gesture keeps the finger itself
    /// (slop, phase, velocity), the model what the touch did to the carousel.
    struct Hold: Sendable {
        /// Touch down stopped a moving carousel: on lift it settles on a page.
        let caught: Bool
        /// The offset when the finger came down (long press looks up the item there).
        let touchOffset: Double
        var drag: Drag?
    }

    struct Drag: Sendable {
        /// The unbounded offset where the drag began.
        let anchorRaw: Double
    }

    /// What `takeEffects()` reports: accumulated parts, and what the last
    /// report said, to report the differences.
    struct Outbox: Sendable {
        var layoutChanged = true
        var selected: Int?
        var longPressed: Int?
        var prefetch: [Int] = []
        var reportedShownOffset: Double?
        var reportedMoving = false
        var reportedIndex: Int
        var reportedZoom: ZoomView?
        /// Which way the content moved last since the last take (see `CarouselEffects.heading`).
        var heading: Int?
        /// The heading the last take reported.
        var reportedHeading: Int?
    }

    /// What brought the carousel to rest, for the autoplay deadline.
    enum RestCause { case start, advance, interaction }

    // MARK: - Creation

    /// A carousel of `count` items on `viewport`, showing `settings.startIndex`, at `now`.
    public init(
        settings: CarouselSettings = CarouselSettings(),
        autoplay: AutoplaySettings = AutoplaySettings(),
        viewport: Viewport,
        count: Int,
        zoom: ZoomSettings = ZoomSettings(),
        at now: Timestamp = .zero
    ) {
        self.settings = settings
        zoomSettings = zoom
        autoplaySettings = autoplay
        geometry = Geometry(viewport: viewport, settings: settings)
        lattice = PageLattice(count: count, settings: settings)
        clock = now
        let start = Self.startOffset(index: settings.startIndex, lattice: lattice, settings: settings)
        motion = .rest(start)
        gesture = Gesture(vertical: settings.vertical, touchSlop: settings.touchSlop, at: now)
        gesture.doubleTap = zoom.enabled && zoom.doubleTap && zoom.maxScale > 1
        reportedOffset = start
        reportedIndex = lattice.itemIndex(at: start)
        outbox = Outbox(reportedIndex: reportedIndex)
        enterRest(at: now, cause: .start)
    }

    /// The offset that shows item `index`: the item itself, or with paging
    /// the page that contains it, clamped to the items there are.
    static func startOffset(index: Int, lattice: PageLattice, settings: CarouselSettings) -> Double {
        guard lattice.count > 0 else { return 0 }
        let i = min(max(index, 0), lattice.count - 1)
        return targetOffset(forItem: i, lattice: lattice, paging: settings.paging)
    }

    static func targetOffset(forItem i: Int, lattice: PageLattice, paging: Bool) -> Double {
        if paging {
            let page = min(i / lattice.itemsPerPage, lattice.pageCount - 1)
            return lattice.offset(ofCyclePage: page)
        }
        let x = Double(i)
        if let range = lattice.range { return min(max(x, range.lowerBound), range.upperBound) }
        return x
    }

    // MARK: - Reading

    public var numberOfItems: Int { lattice.count }
    public var numberOfPages: Int { lattice.pageCount }
    public var isDragging: Bool { hold?.drag != nil }

    /// The offset where the motion in flight comes to rest (a settle, a
    /// fling's end, an animated step, a crossfade's end); nil at rest, while
    /// held and while drifting.
    public var restingOffset: Double? { motion.heading }
    public var isDecelerating: Bool {
        switch motion {
        case .settle, .momentum, .bounce: true
        default: false
        }
    }
    /// A programmatic scroll (command or autoplay) is in flight.
    public var isScrolling: Bool {
        switch motion {
        case .animation, .fade: true
        default: false
        }
    }
    /// Something moves: the display needs frames.
    public var isMoving: Bool {
        switch motion {
        case .rest, .held: false
        default: true
        }
    }

    /// The unwrapped offset at `time` (for drawing between events).
    public func offset(at time: Timestamp) -> Double {
        switch motion {
        case .rest(let x), .held(let x): x
        case .drift(let d): d.offset(at: time)
        case .settle(let s), .bounce(let s):
            // A spring toward the first or last page may overshoot it; without
            // `bounces` the content never shows past an end.
            if !settings.bounces, let range = lattice.range {
                min(max(s.offset(at: time), range.lowerBound), range.upperBound)
            } else {
                s.offset(at: time)
            }
        case .momentum(let m): m.offset(at: time)
        case .animation(let e, _): e.offset(at: time)
        case .fade(let f, _): f.offset(at: time)
        }
    }

    /// The crossfade on screen at `time`, if a change is shown as one: the
    /// offset fading out, the offset fading in and how far (0 to 1, eased)
    /// the second has replaced the first. `offset(at:)` is meanwhile the
    /// one that shows more (as the nearest item of a slide).
    public func crossfade(at time: Timestamp) -> Crossfade? {
        guard case .fade(let f, _) = motion, time < f.end else { return nil }
        return Crossfade(from: f.from, to: f.to, fraction: f.fraction(at: time))
    }

    /// `offset` folded into `0..<count` with wrap (what a user would call "the offset").
    public func displayOffset(_ offset: Double) -> Double {
        guard settings.wrap, lattice.count > 0 else { return offset }
        let n = Double(lattice.count)
        var x = offset - (offset / n).rounded(.down) * n
        // Values a rounding error below a whole cycle are the start of the next.
        if x >= n - 1e-9 { x = 0 }
        if abs(x - x.rounded()) < 1e-9 { x = x.rounded() }
        return x
    }

    public func currentItemIndex(at time: Timestamp) -> Int { lattice.itemIndex(at: offset(at: time)) }

    public func currentPage(at time: Timestamp) -> Int {
        lattice.cyclePage(lattice.nearestPage(to: offset(at: time)))
    }

    public var motionState: MotionState {
        if let hold { return hold.drag != nil ? .dragging : .tracking }
        switch motion {
        case .rest, .held, .drift: return .idle
        case .settle, .bounce: return .settling
        case .momentum: return .decelerating
        case .animation, .fade: return .animating
        }
    }

    public var pausedBy: [PauseReason] {
        var reasons: [PauseReason] = []
        if hold != nil { reasons.append(.touch) }
        if pausedByCommand { reasons.append(.command) }
        if zoom != nil { reasons.append(.zoom) }
        if displayOff { reasons.append(.display) }
        if video == .playing { reasons.append(.video) }
        if lattice.count == 0 { reasons.append(.noImages) }
        if settings.autoscroll != 0 { reasons.append(.autoscroll) }
        return reasons
    }

    /// Autoplay is on: the configuration's `enabled` as the last `pause` or `resume` changed it.
    public var autoplayEnabled: Bool { (autoplaySettings.enabled || resumedByCommand) && !pausedByCommand }

    public var autoplayStatus: AutoplayStatus {
        let reasons = pausedBy
        let enabled = autoplayEnabled
        let running = enabled && reasons.isEmpty
        return AutoplayStatus(enabled: enabled, running: running, pausedBy: reasons, next: running ? autoplayDeadline : nil)
    }

    public func snapshot(at time: Timestamp) -> CarouselSnapshot {
        let x = offset(at: time)
        return CarouselSnapshot(
            offset: displayOffset(x),
            index: lattice.itemIndex(at: x),
            page: lattice.cyclePage(lattice.nearestPage(to: x)),
            state: motionState,
            autoplay: autoplayStatus,
            zoom: zoomScale(at: time)
        )
    }

    /// The item under `point` right now, taking wrap, alignment, item size and spacing into account.
    public func item(at point: Point, time: Timestamp) -> Int? {
        geometry.item(at: point, offset: offset(at: time), count: lattice.count, wrap: settings.wrap)
    }

    /// The earliest instant at which the model changes by itself: a motion
    /// ending, a long press, the next automatic advance. Motion in between
    /// needs frames (`CarouselEffects.moving`) but no deadline.
    public var nextDeadline: Timestamp? {
        var earliest = motionEnd
        if let lp = gesture.nextDeadline { earliest = min(earliest ?? lp, lp) }
        if let ap = autoplayDeadline { earliest = min(earliest ?? ap, ap) }
        if let ir = idleReturnDeadline { earliest = min(earliest ?? ir, ir) }
        if let ze = zoom?.end { earliest = min(earliest ?? ze, ze) }
        return earliest
    }

    var motionEnd: Timestamp? {
        switch motion {
        case .rest, .held: nil
        case .drift(let d): d.stop?.time
        case .settle(let s), .bounce(let s): s.end
        case .momentum(let m): m.end
        case .animation(let e, _): e.end
        case .fade(let f, _): f.end
        }
    }

    // MARK: - Effects

    /// What the daemon must do because of everything the model did since the
    /// previous call (input, commands, time, new items or settings), and
    /// empties the outbox. See `CarouselEffects` for how to carry them out.
    ///
    /// The entry points keep returning their events; effects are a second,
    /// coarser view of the same happenings for the display loop, so a caller
    /// that only needs events never has to take them.
    public mutating func takeEffects() -> CarouselEffects {
        let shown = displayOffset(offset(at: clock))
        let moving = isMoving || isZoomMoving
        let zoomed = zoomView(at: clock)
        var effects = CarouselEffects()
        if moving != outbox.reportedMoving { effects.moving = moving }
        effects.needsFrame = outbox.layoutChanged || shown != outbox.reportedShownOffset || effects.moving != nil
            || zoomed != outbox.reportedZoom
        if reportedIndex != outbox.reportedIndex { effects.indexChanged = reportedIndex }
        effects.selected = outbox.selected
        effects.longPressed = outbox.longPressed
        effects.prefetch = outbox.prefetch
        if let heading = outbox.heading, heading != outbox.reportedHeading { effects.heading = heading }
        outbox = Outbox(reportedShownOffset: shown, reportedMoving: moving, reportedIndex: reportedIndex,
                        reportedZoom: zoomed, reportedHeading: outbox.heading ?? outbox.reportedHeading)
        outbox.layoutChanged = false
        return effects
    }

    /// The items drawn when the carousel shows `offset`, each once, leading first.
    func items(visibleAt offset: Double) -> [Int] {
        guard let slots = geometry.visibleSlots(offset: offset, count: lattice.count, wrap: settings.wrap) else {
            return []
        }
        var items: [Int] = []
        var seen = Set<Int>()
        for slot in slots {
            guard let i = Geometry.index(ofSlot: slot, count: lattice.count, wrap: settings.wrap) else { continue }
            if seen.insert(i).inserted { items.append(i) }
            // With wrap and few items every item is already there.
            if items.count == lattice.count { break }
        }
        return items
    }
}
