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
    public private(set) var settings: CarouselSettings
    public private(set) var autoplaySettings: AutoplaySettings
    public private(set) var geometry: Geometry
    public private(set) var lattice: PageLattice
    public private(set) var zoomSettings: ZoomSettings

    /// The instant of the latest call: time never runs backwards in the model.
    public private(set) var clock: Timestamp

    private var motion: Motion {
        // Where a motion is heading is known the moment it starts: that is
        // when the daemon should start decoding what will be on screen there.
        didSet {
            if let heading = motion.heading, heading != oldValue.heading {
                outbox.prefetch = items(visibleAt: heading)
            }
        }
    }
    /// Recognises what the fingers mean; the model acts on its intents.
    private var gesture: Gesture
    /// The finger holding the carousel, as far as the model is concerned.
    private var hold: Hold?
    /// Effects accumulated since the last `takeEffects()`.
    private var outbox: Outbox
    /// `willBeginDecelerating` was emitted and `didEndDecelerating` is owed.
    private var decelerating = false
    /// A finger or a command touched the carousel since it last rested: the
    /// next rest counts as the end of an interaction (resume_delay), even if
    /// an automatic advance was in flight.
    private var interacted = false
    private var pausedByCommand = false
    /// The zoomed picture (`nil`: none, every picture at scale 1). While it
    /// exists autoplay is paused (the `zoom` source) and one finger pans it.
    private var zoom: ZoomState?
    /// The last scale reported through `didZoom`.
    private var reportedScale = 1.0
    /// Zoom events of a rest that had no event list at hand, delivered with the next report.
    private var pendingZoomEvents: [CarouselEvent] = []
    private var displayOff = false
    private var autoplayDeadline: Timestamp?
    /// When the carousel goes back to the start item (`idle_return`): armed
    /// when it rests after an interaction, disarmed when one begins.
    private var idleReturnDeadline: Timestamp?
    /// The last offset and index reported through events.
    private var reportedOffset: Double
    private var reportedIndex: Int

    private enum Motion: Sendable {
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
    private struct Hold: Sendable {
        /// Touch down stopped a moving carousel: on lift it settles on a page.
        let caught: Bool
        /// The offset when the finger came down (long press looks up the item there).
        let touchOffset: Double
        var drag: Drag?
    }

    private struct Drag: Sendable {
        /// The unbounded offset where the drag began.
        let anchorRaw: Double
    }

    /// What `takeEffects()` reports: accumulated parts, and what the last
    /// report said, to report the differences.
    private struct Outbox: Sendable {
        var layoutChanged = true
        var selected: Int?
        var longPressed: Int?
        var prefetch: [Int] = []
        var reportedShownOffset: Double?
        var reportedMoving = false
        var reportedIndex: Int
        var reportedZoom: ZoomView?
    }

    /// What brought the carousel to rest, for the autoplay deadline.
    private enum RestCause { case start, advance, interaction }

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
    private static func startOffset(index: Int, lattice: PageLattice, settings: CarouselSettings) -> Double {
        guard lattice.count > 0 else { return 0 }
        let i = min(max(index, 0), lattice.count - 1)
        return targetOffset(forItem: i, lattice: lattice, paging: settings.paging)
    }

    private static func targetOffset(forItem i: Int, lattice: PageLattice, paging: Bool) -> Double {
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
        if lattice.count == 0 { reasons.append(.noImages) }
        if settings.autoscroll != 0 { reasons.append(.autoscroll) }
        return reasons
    }

    public var autoplayStatus: AutoplayStatus {
        let reasons = pausedBy
        let running = autoplaySettings.enabled && reasons.isEmpty
        return AutoplayStatus(running: running, pausedBy: reasons, next: running ? autoplayDeadline : nil)
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

    private var motionEnd: Timestamp? {
        switch motion {
        case .rest, .held: nil
        case .drift(let d): d.stop?.time
        case .settle(let s), .bounce(let s): s.end
        case .momentum(let m): m.end
        case .animation(let e, _): e.end
        case .fade(let f, _): f.end
        }
    }

    // MARK: - Time

    /// Runs the model's own transitions up to `now` and reports what happened.
    public mutating func advance(to now: Timestamp) -> [CarouselEvent] {
        var events: [CarouselEvent] = []
        advance(to: now, into: &events)
        return events
    }

    /// `advance(to:)`, what happened appended to `events` (a caller that
    /// keeps the array allocates nothing per frame).
    public mutating func advance(to now: Timestamp, into events: inout [CarouselEvent]) {
        let now = max(now, clock)
        while let deadline = nextDeadline, deadline <= now {
            clock = max(clock, deadline)
            fire(deadline, into: &events)
        }
        clock = now
        apply(gesture.advance(to: now), at: now, into: &events)
        reportScroll(at: now, into: &events)
        reportZoom(at: now, into: &events)
    }

    private mutating func fire(_ deadline: Timestamp, into events: inout [CarouselEvent]) {
        if let end = motionEnd, end == deadline {
            finishMotion(at: deadline, into: &events)
        } else if let lp = gesture.nextDeadline, lp == deadline {
            apply(gesture.advance(to: deadline), at: deadline, into: &events)
        } else if let ap = autoplayDeadline, ap == deadline {
            autoplayDeadline = nil
            fireAutoplay(at: deadline, into: &events)
        } else if let ir = idleReturnDeadline, ir == deadline {
            idleReturnDeadline = nil
            returnToStart(at: deadline, into: &events)
        } else if var z = zoom, let end = z.end, end == deadline {
            z.finishTracks(upTo: deadline)
            zoom = z
            reportZoom(at: deadline, into: &events)
            zoomRested(at: deadline, into: &events)
        }
    }

    private mutating func finishMotion(at time: Timestamp, into events: inout [CarouselEvent]) {
        switch motion {
        case .rest, .held:
            return
        case .drift(let d):
            motion = .rest(d.offset(at: time))
            reportScroll(at: time, into: &events)
        case .settle(let s), .bounce(let s):
            motion = .rest(s.target)
            reportScroll(at: time, into: &events)
            endDeceleration(at: time, into: &events)
            enterRest(at: time, cause: .interaction)
        case .momentum(let m):
            let position = m.offset(at: time)
            if m.hitsEdge != nil, settings.bounces {
                let v = clampSpeed(m.velocity(at: time), Physics.bounceMaxSpeed)
                let spring = SpringMotion(from: position, velocity: v, target: position, pitch: geometry.pitch,
                                          omega: Physics.bounceOmega, at: time)
                if spring.end > time {
                    motion = .bounce(spring)
                    return
                }
            }
            motion = .rest(position)
            reportScroll(at: time, into: &events)
            endDeceleration(at: time, into: &events)
            enterRest(at: time, cause: .interaction)
        case .animation(_, let autoplay), .fade(_, let autoplay):
            motion = .rest(motion.heading ?? offset(at: time))
            reportScroll(at: time, into: &events)
            events.append(CarouselEvent(time: time, kind: .didEndScrollingAnimation))
            enterRest(at: time, cause: autoplay ? .advance : .interaction)
        }
    }

    /// The carousel has come to rest at `time`: fold the offset into one
    /// cycle, resume autoscroll, and schedule the next automatic advance.
    private mutating func enterRest(at time: Timestamp, cause: RestCause) {
        var x = offset(at: time)
        if settings.wrap { x = displayOffset(x) }
        motion = .rest(x)
        reportedOffset = x
        // A pan handed over to paging took the carousel to another page: the
        // zoomed picture is off screen, and comes back at scale 1.
        if let z = zoom, z.pan == nil, z.pinch == nil, abs(displayOffset(z.baseOffset) - displayOffset(x)) > 1e-9 {
            var ignored: [CarouselEvent] = []
            dropZoom(at: time, into: &ignored)
            pendingZoomEvents += ignored
        }
        if var z = zoom { z.baseOffset = x; zoom = z }
        guard hold == nil else { return }
        startDriftIfNeeded(from: x, at: time)
        scheduleAutoplay(after: interacted ? .interaction : cause, at: time)
        if interacted { armIdleReturn(at: time) }
        interacted = false
    }

    private mutating func armIdleReturn(at time: Timestamp) {
        idleReturnDeadline = settings.idleReturn > 0 ? time.adding(seconds: settings.idleReturn) : nil
    }

    /// Nobody touched the carousel for `idle_return` seconds: back to the
    /// start item, as an automatic advance does it (the transition, then
    /// autoplay's interval). Not a new interaction, so it does not re-arm
    /// itself; already there, nothing moves.
    private mutating func returnToStart(at time: Timestamp, into events: inout [CarouselEvent]) {
        guard hold == nil, lattice.count > 0 else { return }
        let start = Self.startOffset(index: settings.startIndex, lattice: lattice, settings: settings)
        let x = offset(at: time)
        if case .rest = motion, lattice.itemIndex(at: x) == lattice.itemIndex(at: start) {
            // The start picture itself, zoomed: the next visitor sees it whole.
            if zoom != nil { zoom(to: 1, at: time) }
            return
        }
        scroll(toOffset: lattice.nearestCopy(of: start, to: x), duration: autoplaySettings.transition,
               autoplay: true, effect: autoplaySettings.effect, at: time, into: &events)
    }

    private mutating func startDriftIfNeeded(from x: Double, at time: Timestamp) {
        // A zoomed picture holds still under the eye.
        guard settings.autoscroll != 0, lattice.count > 0, zoom == nil else { return }
        let drift = DriftMotion(from: x, speed: settings.autoscroll, range: lattice.range, at: time)
        if let stop = drift.stop, stop.time <= time { return }
        motion = .drift(drift)
    }

    private mutating func scheduleAutoplay(after cause: RestCause, at time: Timestamp) {
        // Nothing is scheduled that would not happen: with at_end = stop on
        // the last page there is no next advance until someone moves away.
        guard autoplayStatus.running, autoplayTarget(from: offset(at: time)) != nil else {
            autoplayDeadline = nil
            return
        }
        let delay: Double
        switch cause {
        case .start: delay = autoplaySettings.effectiveStartDelay
        case .advance: delay = autoplaySettings.interval
        case .interaction: delay = autoplaySettings.resumeDelay
        }
        autoplayDeadline = time.adding(seconds: delay)
    }

    /// The page an automatic advance from offset `x` goes to, or `nil` when
    /// there is none (fewer than two pages, or stopped at the end).
    private func autoplayTarget(from x: Double) -> Int? {
        guard lattice.pageCount > 1 else { return nil }
        let step = autoplaySettings.direction == .forward ? 1 : -1
        let target = lattice.nearestPage(to: x) + step
        if settings.wrap || (0..<lattice.pageCount).contains(target) { return target }
        switch autoplaySettings.atEnd {
        case .rewind: return step > 0 ? 0 : lattice.pageCount - 1
        case .stop: return nil
        }
    }

    private mutating func fireAutoplay(at time: Timestamp, into events: inout [CarouselEvent]) {
        guard autoplayStatus.running, hold == nil, case .rest(let x) = motion,
              let target = autoplayTarget(from: x) else { return }
        scroll(toOffset: lattice.offset(ofPage: target), duration: autoplaySettings.transition,
               autoplay: true, effect: autoplaySettings.effect, at: time, into: &events)
    }

    private mutating func endDeceleration(at time: Timestamp, into events: inout [CarouselEvent]) {
        if decelerating {
            decelerating = false
            events.append(CarouselEvent(time: time, kind: .didEndDecelerating))
        }
    }

    /// Emits `didScroll` and `currentItemIndexDidChange` if the offset at `time`
    /// differs from the last one reported.
    private mutating func reportScroll(at time: Timestamp, into events: inout [CarouselEvent]) {
        let x = offset(at: time)
        let shown = displayOffset(x)
        if shown != displayOffset(reportedOffset) {
            events.append(CarouselEvent(time: time, kind: .didScroll(offset: shown)))
        }
        reportedOffset = x
        let index = lattice.itemIndex(at: x)
        if index != reportedIndex {
            reportedIndex = index
            events.append(CarouselEvent(time: time, kind: .currentItemIndexDidChange(index: index)))
        }
    }

    // MARK: - Touch

    /// Feeds one touch event. `time` is the event's own timestamp (libinput's
    /// µs clock): velocity uses it as is, state changes never go back before `clock`.
    ///
    /// The gesture stage recognises what the finger means; the model then
    /// carries out its intents (`apply`).
    /// `device` names the touchscreen (or pointer) the input came from: the
    /// gesture stage learns each one's sample rate and noise.
    public mutating func handle(_ input: TouchInput, at time: Timestamp, device: Int = 0) -> [CarouselEvent] {
        var events: [CarouselEvent] = []
        advance(to: time, into: &events)
        let target = TouchTarget(isCatchable: catchable, isScrollable: settings.scrollEnabled && lattice.count > 0,
                                 isZoomable: isZoomable, isZoomed: zoom != nil)
        apply(gesture.handle(input, at: time, target: target, device: device), at: clock, into: &events)
        reportZoom(at: clock, into: &events)
        zoomRested(at: clock, into: &events)
        return events
    }

    /// What the gesture stage learned of `device` (sample interval, noise).
    public func panelTraits(of device: Int) -> PanelTraits? { gesture.panels[device] }

    /// Forgets what was learned of `device`: it was unplugged or replaced.
    public mutating func forget(device: Int) { gesture.forget(device: device) }

    /// A finger coming down now stops the motion (a catch: not a tap).
    private var catchable: Bool {
        if let z = zoom, !z.isStill { return true }
        switch motion {
        case .settle, .momentum, .bounce, .animation, .fade: return settings.scrollEnabled
        case .rest, .held, .drift: return false
        }
    }

    /// A second finger now would pinch: zoom is on, there is a picture, and
    /// the carousel stands still under a finger that does not drag it.
    private var isZoomable: Bool {
        guard zoomSettings.enabled, zoomSettings.maxScale > 1, lattice.count > 0, hold?.drag == nil else { return false }
        switch motion {
        case .rest, .held: return true
        default: return false
        }
    }

    private mutating func apply(_ intents: [GestureIntent], at now: Timestamp, into events: inout [CarouselEvent]) {
        for intent in intents {
            switch intent {
            case .touchBegan:
                touchBegan(at: now, into: &events)
            case .dragBegan:
                guard var h = hold else { break }
                // The drag starts here: content follows the finger from this
                // point on, so the slop distance is not jumped over.
                let x = offset(at: now)
                h.drag = Drag(anchorRaw: unbounded(x))
                hold = h
                events.append(CarouselEvent(time: now, kind: .willBeginDragging))
            case .dragMoved(let translation):
                guard let drag = hold?.drag else { break }
                let raw = drag.anchorRaw - translation / geometry.pitch
                motion = .held(bounded(raw))
                reportScroll(at: now, into: &events)
            case .released(let velocity, let travel, _):
                guard let h = hold, h.drag != nil else { break }
                hold = nil
                release(from: offset(at: now), fingerVelocity: velocity, travel: travel, at: now, into: &events)
            case .tapped(let point):
                if let i = geometry.item(at: point, offset: offset(at: now), count: lattice.count,
                                         wrap: settings.wrap) {
                    events.append(CarouselEvent(time: now, kind: .didSelectItem(index: i)))
                    outbox.selected = i
                }
            case .longPressed(let point):
                guard let h = hold else { break }
                if let i = geometry.item(at: point, offset: h.touchOffset, count: lattice.count,
                                         wrap: settings.wrap) {
                    events.append(CarouselEvent(time: now, kind: .longPress(index: i)))
                    outbox.longPressed = i
                }
            case .touchEnded:
                guard let h = hold else { break }
                hold = nil
                let x = offset(at: now)
                // A zoom caught by the finger (or left out of range) springs back.
                zoomSettleBack(at: now)
                if h.caught {
                    // A caught carousel may have stopped between pages: settle it,
                    // quietly (no drag happened, so no deceleration events).
                    settleQuietly(from: x, at: now, into: &events)
                } else if !isMoving {
                    motion = .rest(x)
                    enterRest(at: now, cause: .interaction)
                }
                // Otherwise a programmatic scroll the finger could not catch
                // (scrolling disabled) goes on; its end schedules autoplay.
            case .pinchBegan(let a, let b):
                pinchBegan(a, b, at: now)
            case .pinchMoved(let a, let b):
                pinchMoved(a, b, at: now)
            case .pinchEnded:
                pinchEnded(at: now)
            case .panBegan:
                guard var z = zoom, hold != nil else { break }
                z.freeze(at: now)
                let t = z.translation(at: now), s = z.scaleValue(at: now)
                let vertical = geometry.vertical
                func widened(_ b: ClosedRange<Double>, _ v: Double) -> ClosedRange<Double> {
                    min(b.lowerBound, v)...max(b.upperBound, v)
                }
                let (a, c) = vertical ? (t.y, t.x) : (t.x, t.y)
                let (axisSize, crossSize) = vertical ? (z.height, z.width) : (z.width, z.height)
                z.pan = ZoomState.Pan(start: t, carouselStart: unbounded(offset(at: now)),
                                      axisBounds: widened(ZoomState.bounds(scale: s, extent: axisSize), a),
                                      crossBounds: widened(ZoomState.bounds(scale: s, extent: crossSize), c))
                zoom = z
            case .panMoved(let translation):
                panMoved(translation, at: now, into: &events)
            case .panEnded(let velocity):
                panEnded(velocity, at: now, into: &events)
            case .doubleTapped(let point):
                doubleTapped(at: point, now: now)
            }
        }
    }

    private mutating func touchBegan(at now: Timestamp, into events: inout [CarouselEvent]) {
        let x = offset(at: now)
        let caught = catchable
        switch motion {
        case .rest, .held:
            break
        case .drift:
            // Autoscroll stops while touched; a touch on it can still be a tap.
            motion = .held(x)
        case .settle, .momentum, .bounce, .animation, .fade:
            guard caught else { break }
            // Catch the moving carousel: it stops where it is and the touch
            // is not a tap. A crossfade stops on the picture that shows more
            // (`offset(at:)`): the smaller jump of the two, and the page the
            // finger then drags from, as on a slide caught half-way.
            if isScrolling {
                events.append(CarouselEvent(time: now, kind: .didEndScrollingAnimation))
            }
            motion = .held(x)
            endDeceleration(at: now, into: &events)
        }
        if case .rest = motion { motion = .held(x) }
        // A zoom moving by itself stops under the finger too.
        if var z = zoom {
            z.freeze(at: now)
            zoom = z
        }
        interacted = true
        idleReturnDeadline = nil
        hold = Hold(caught: caught, touchOffset: x)
        autoplayDeadline = nil
    }

    /// Paging: spring to the first page past `x` in the fling's direction,
    /// or to the nearest page without a fling. Without paging: momentum, then
    /// bounce back if past an end.
    private mutating func release(from x: Double, fingerVelocity: Double, travel: Double,
                                  at now: Timestamp, into events: inout [CarouselEvent]) {
        let pitch = geometry.pitch
        // Content moves against the finger: a finger moving right scrolls back.
        var velocity = -fingerVelocity
        var overshootPx = 0.0
        if let range = lattice.range {
            if x > range.upperBound { overshootPx = (x - range.upperBound) * pitch }
            if x < range.lowerBound { overshootPx = (x - range.lowerBound) * pitch }
        }
        if overshootPx != 0 {
            if settings.bounces {
                // Under the rubber band the content moves slower than the finger.
                let rawOvershoot = RubberBand.raw(overshootPx, extent: geometry.axisExtent)
                velocity *= RubberBand.slope(rawOvershoot, extent: geometry.axisExtent)
            } else {
                velocity = 0
            }
        }

        if settings.paging {
            // Decided from where the content is at the lift (SPEC 3 and 7): a
            // fling goes to the first page past it in the fling's direction,
            // anything else to the nearest page. The content moves against
            // the finger, whatever the rubber band left of the velocity.
            let target: Int
            if abs(fingerVelocity) >= Physics.flingSpeed, travel >= settings.touchSlop {
                target = lattice.firstPage(past: x, forward: fingerVelocity < 0)
            } else {
                target = lattice.nearestPage(to: x)
            }
            let spring = SpringMotion(from: x, velocity: velocity, target: lattice.offset(ofPage: target),
                                      pitch: pitch, omega: Physics.settleOmega, at: now)
            motion = spring.end > now ? .settle(spring) : .rest(spring.target)
        } else if let range = lattice.range, overshootPx != 0 {
            let edge = overshootPx > 0 ? range.upperBound : range.lowerBound
            let spring = SpringMotion(from: x, velocity: clampSpeed(velocity, Physics.bounceMaxSpeed),
                                      target: edge, pitch: pitch, omega: Physics.bounceOmega, at: now)
            motion = spring.end > now ? .bounce(spring) : .rest(edge)
        } else if abs(velocity) > Physics.restSpeed {
            motion = .momentum(MomentumMotion(from: x, velocity: velocity, pitch: pitch,
                                              rate: settings.decelerationRate, range: lattice.range, at: now))
        } else {
            motion = .rest(x)
        }

        let willDecelerate = isMoving
        events.append(CarouselEvent(time: now, kind: .didEndDragging(willDecelerate: willDecelerate)))
        if willDecelerate {
            decelerating = true
            events.append(CarouselEvent(time: now, kind: .willBeginDecelerating))
            // A momentum that starts at an edge turns into a bounce at once.
            if let end = motionEnd, end <= now { finishMotion(at: now, into: &events) }
        } else {
            reportScroll(at: now, into: &events)
            enterRest(at: now, cause: .interaction)
        }
    }

    private mutating func settleQuietly(from x: Double, at now: Timestamp, into events: inout [CarouselEvent]) {
        let pitch = geometry.pitch
        var target = x
        var omega = Physics.settleOmega
        if settings.paging {
            target = lattice.offset(ofPage: lattice.nearestPage(to: x))
        } else if let range = lattice.range {
            target = min(max(x, range.lowerBound), range.upperBound)
            omega = Physics.bounceOmega
        }
        let spring = SpringMotion(from: x, velocity: 0, target: target, pitch: pitch, omega: omega, at: now)
        if spring.end > now {
            motion = .settle(spring)
        } else {
            motion = .rest(target)
            reportScroll(at: now, into: &events)
            enterRest(at: now, cause: .interaction)
        }
    }

    /// The offset a finger at raw offset `raw` shows: itself in range (or with
    /// wrap), rubber-banded past an end with `bounces`, clamped without.
    private func bounded(_ raw: Double) -> Double {
        guard let range = lattice.range else { return raw }
        let edge: Double
        if raw > range.upperBound { edge = range.upperBound } else if raw < range.lowerBound { edge = range.lowerBound } else { return raw }
        guard settings.bounces else { return edge }
        let overshoot = (raw - edge) * geometry.pitch
        return edge + RubberBand.shown(overshoot, extent: geometry.axisExtent) / geometry.pitch
    }

    /// The inverse of `bounded` for a shown offset (a drag that starts on a
    /// carousel caught mid-bounce continues from the same rubber band).
    private func unbounded(_ shown: Double) -> Double {
        guard let range = lattice.range, settings.bounces else { return shown }
        let edge: Double
        if shown > range.upperBound { edge = range.upperBound } else if shown < range.lowerBound { edge = range.lowerBound } else { return shown }
        return edge + RubberBand.raw((shown - edge) * geometry.pitch, extent: geometry.axisExtent) / geometry.pitch
    }

    // MARK: - Zoom

    /// The zoomed picture at `time`, for drawing; `nil` when every picture shows at scale 1.
    public func zoomView(at time: Timestamp) -> ZoomView? {
        guard let z = zoom else { return nil }
        return ZoomView(item: z.item, scale: z.scaleValue(at: time), translation: z.translation(at: time))
    }

    /// The scale of the zoomed picture at `time` (1 when none is).
    public func zoomScale(at time: Timestamp) -> Double { zoom?.scaleValue(at: time) ?? 1 }

    /// The scale the zoom comes to rest at (1 when nothing is zoomed, or a
    /// pinch holds it: then where it is now).
    public var zoomTarget: Double {
        guard let z = zoom else { return 1 }
        if case .spring(let s) = z.scale { return s.target }
        return z.scaleValue(at: clock)
    }

    /// The zoom moves by itself (springs back, pans on, bounces): the display needs frames.
    public var isZoomMoving: Bool { zoom.map { !$0.isStill } ?? false }

    /// A zoom gesture (pinch or pan) holds the picture.
    public var isZooming: Bool { zoom.map { $0.pinch != nil || $0.pan != nil } ?? false }

    /// Emits `didZoom` when the shown scale changed since the last report
    /// (after the zoom events a rest left pending).
    private mutating func reportZoom(at time: Timestamp, into events: inout [CarouselEvent]) {
        events += pendingZoomEvents
        pendingZoomEvents.removeAll()
        let scale = zoomScale(at: time)
        if scale != reportedScale {
            reportedScale = scale
            events.append(CarouselEvent(time: time, kind: .didZoom(scale: scale)))
        }
    }

    /// The item whose frame holds `point` at the carousel's offset now, and
    /// where that frame lies (layout pixels).
    private func itemFrame(at point: Point, now: Timestamp) -> (item: Int, origin: Point)? {
        let x = offset(at: now)
        guard let slots = geometry.visibleSlots(offset: x, count: lattice.count, wrap: settings.wrap) else { return nil }
        let a = geometry.axis(point), c = geometry.cross(point)
        guard c >= 0, c < geometry.crossExtent else { return nil }
        for slot in slots {
            let start = geometry.start(ofSlot: slot, offset: x)
            guard a >= start, a < start + geometry.itemExtent,
                  let i = Geometry.index(ofSlot: slot, count: lattice.count, wrap: settings.wrap) else { continue }
            return (i, geometry.vertical ? Point(x: 0, y: start) : Point(x: start, y: 0))
        }
        return nil
    }

    /// A zoom of the picture under `point`, at scale 1.
    private func newZoom(at point: Point, now: Timestamp) -> ZoomState? {
        guard let (item, origin) = itemFrame(at: point, now: now) else { return nil }
        let along = geometry.itemExtent, across = geometry.crossExtent
        return ZoomState(item: item, origin: origin, width: geometry.vertical ? across : along,
                         height: geometry.vertical ? along : across, baseOffset: offset(at: now),
                         scale: .still(1), tx: .still(0), ty: .still(0))
    }

    private mutating func pinchBegan(_ a: Point, _ b: Point, at now: Timestamp) {
        guard hold != nil, zoomSettings.enabled else { return }
        let mid = Point(x: (a.x + b.x) / 2, y: (a.y + b.y) / 2)
        guard var z = zoom ?? newZoom(at: mid, now: now) else { return }
        z.freeze(at: now)
        z.pan = nil
        let s = z.scaleValue(at: now), t = z.translation(at: now)
        let m = Point(x: mid.x - z.origin.x, y: mid.y - z.origin.y)
        let distance = ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot()
        z.pinch = ZoomState.Pinch(startRaw: ZoomPhysics.raw(s, max: zoomSettings.maxScale),
                                  startDistance: max(distance, 1),
                                  content: Point(x: (m.x - t.x) / s, y: (m.y - t.y) / s), midpoint: m)
        z.zooming = true
        zoom = z
    }

    /// 1:1 with the fingers: the scale is their distance over the distance
    /// they started at, times the scale then (rubber-banded past either
    /// end), and the picture's point that was under their midpoint stays
    /// under it (so moving the midpoint pans).
    private mutating func pinchMoved(_ a: Point, _ b: Point, at now: Timestamp) {
        guard var z = zoom, var p = z.pinch else { return }
        let distance = ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot()
        let s = ZoomPhysics.shown(p.startRaw * max(distance, 1) / p.startDistance, max: zoomSettings.maxScale)
        let m = Point(x: (a.x + b.x) / 2 - z.origin.x, y: (a.y + b.y) / 2 - z.origin.y)
        p.midpoint = m
        z.pinch = p
        z.scale = .still(s)
        z.tx = .still(m.x - s * p.content.x)
        z.ty = .still(m.y - s * p.content.y)
        zoom = z
    }

    /// The pinch is over: springs back into `1...max_scale` about the
    /// fingers' last midpoint, and into the frame.
    private mutating func pinchEnded(at now: Timestamp) {
        guard var z = zoom, let p = z.pinch else { return }
        z.pinch = nil
        let s = z.scaleValue(at: now)
        z.animate(to: min(max(s, 1), zoomSettings.maxScale), focus: p.midpoint, omega: Physics.bounceOmega, at: now)
        zoom = z
    }

    /// One finger pans the zoomed picture. Across the scroll axis past an
    /// edge it rubber-bands; along it, what the finger pushes past the edge
    /// moves the carousel instead (Photos' handover: the pan becomes a
    /// drag of the pages, and back again if the finger returns).
    private mutating func panMoved(_ d: Point, at now: Timestamp, into events: inout [CarouselEvent]) {
        guard var z = zoom, var pan = z.pan, var h = hold else { return }
        let s = z.scaleValue(at: now)
        let vertical = geometry.vertical
        let (axisSize, crossSize) = vertical ? (z.height, z.width) : (z.width, z.height)
        let wantAxis = vertical ? pan.start.y + d.y : pan.start.x + d.x
        let wantCross = vertical ? pan.start.x + d.x : pan.start.y + d.y
        let crossBounds = pan.crossBounds
        let axisBounds = pan.axisBounds
        func banded(_ v: Double, _ b: ClosedRange<Double>, _ extent: Double) -> Double {
            if v > b.upperBound { return b.upperBound + RubberBand.shown(v - b.upperBound, extent: extent) }
            if v < b.lowerBound { return b.lowerBound + RubberBand.shown(v - b.lowerBound, extent: extent) }
            return v
        }
        let shownCross = banded(wantCross, crossBounds, crossSize)
        var shownAxis = wantAxis
        var overflow = 0.0
        if settings.scrollEnabled {
            shownAxis = min(max(wantAxis, axisBounds.lowerBound), axisBounds.upperBound)
            overflow = wantAxis - shownAxis
        } else {
            shownAxis = banded(wantAxis, axisBounds, axisSize)
        }
        z.tx = .still(vertical ? shownCross : shownAxis)
        z.ty = .still(vertical ? shownAxis : shownCross)
        // Bounds widened for a caught picture close in behind it as it comes back.
        func narrowed(_ b: ClosedRange<Double>, to v: Double, resting r: ClosedRange<Double>) -> ClosedRange<Double> {
            let lo = b.lowerBound < r.lowerBound ? min(max(b.lowerBound, v), r.lowerBound) : b.lowerBound
            let hi = b.upperBound > r.upperBound ? max(min(b.upperBound, v), r.upperBound) : b.upperBound
            return lo...hi
        }
        pan.axisBounds = narrowed(axisBounds, to: shownAxis, resting: ZoomState.bounds(scale: s, extent: axisSize))
        pan.crossBounds = narrowed(crossBounds, to: shownCross, resting: ZoomState.bounds(scale: s, extent: crossSize))
        pan.overflow = overflow
        z.pan = pan
        zoom = z
        if overflow != 0, h.drag == nil {
            h.drag = Drag(anchorRaw: pan.carouselStart)
            hold = h
            events.append(CarouselEvent(time: now, kind: .willBeginDragging))
        }
        if hold?.drag != nil {
            motion = .held(bounded(pan.carouselStart - overflow / geometry.pitch))
            reportScroll(at: now, into: &events)
        }
    }

    /// The panning finger lifted: the picture pans on with its velocity and
    /// bounces off the edges (UIScrollView's deceleration); a pan handed
    /// over to paging releases the carousel as a drag would.
    private mutating func panEnded(_ velocity: Point, at now: Timestamp, into events: inout [CarouselEvent]) {
        guard let h = hold else { return }
        guard var z = zoom, let pan = z.pan else {
            // The zoom went away under the finger (new [zoom] settings) or
            // never came (a pinch over a gap): the touch ends as a drag or a
            // touch would.
            hold = nil
            let x = offset(at: now)
            if h.drag != nil {
                release(from: x, fingerVelocity: geometry.vertical ? velocity.y : velocity.x, travel: 0, at: now,
                        into: &events)
            } else {
                settleQuietly(from: x, at: now, into: &events)
            }
            return
        }
        hold = nil
        z.pan = nil
        let handedOver = h.drag != nil
        let s = z.scaleValue(at: now)
        func decelerate(_ track: ZoomTrack, velocity v: Double, extent: Double) -> ZoomTrack {
            let x = track.value(at: now)
            let b = ZoomState.bounds(scale: s, extent: extent)
            if x < b.lowerBound || x > b.upperBound {
                let edge = min(max(x, b.lowerBound), b.upperBound)
                let speed = min(max(v, -Physics.bounceMaxSpeed), Physics.bounceMaxSpeed)
                return .spring(from: x, velocity: speed, to: edge, pitch: 1, omega: Physics.bounceOmega, at: now)
            }
            guard abs(v) > Physics.restSpeed else { return .still(x) }
            var t = ZoomTrack.momentum(MomentumMotion(from: x, velocity: v, pitch: 1, rate: settings.decelerationRate,
                                                      range: b, at: now), bounds: b)
            while let end = t.end, end <= now { t.finish(at: end) }
            return t
        }
        let vertical = geometry.vertical
        // Along the axis a pan handed over keeps no velocity of its own (the
        // carousel took it): it stays at the edge, or springs back to it
        // from where a finger caught it outside.
        z.tx = decelerate(z.tx, velocity: handedOver && !vertical ? 0 : velocity.x, extent: z.width)
        z.ty = decelerate(z.ty, velocity: handedOver && vertical ? 0 : velocity.y, extent: z.height)
        // A scale the finger caught out of range (mid-spring) springs back, translation with it.
        if s < 1 || s > zoomSettings.maxScale {
            z.animate(to: min(max(s, 1), zoomSettings.maxScale), focus: Point(x: z.width / 2, y: z.height / 2),
                      omega: Physics.bounceOmega, at: now)
        }
        zoom = z
        let x = offset(at: now)
        if handedOver {
            release(from: x, fingerVelocity: vertical ? velocity.y : velocity.x, travel: abs(pan.overflow),
                    at: now, into: &events)
        } else if h.caught || abs(displayOffset(x) - displayOffset(z.baseOffset)) > 1e-9 {
            settleQuietly(from: x, at: now, into: &events)
        } else {
            motion = .rest(x)
            enterRest(at: now, cause: .interaction)
        }
    }

    /// A double tap: zoomed in, back to 1; at 1, in to 2.5x (or the
    /// maximum, if lower) about the tapped point.
    private mutating func doubleTapped(at point: Point, now: Timestamp) {
        guard zoomSettings.enabled, zoomSettings.doubleTap, isZoomable else { return }
        guard var z = zoom ?? newZoom(at: point, now: now) else { return }
        let heading: Double
        if case .spring(let spring) = z.scale { heading = spring.target } else { heading = z.scaleValue(at: now) }
        let target = heading > 1 + 1e-6 ? 1 : zoomSettings.doubleTapTarget
        z.animate(to: target, focus: Point(x: point.x - z.origin.x, y: point.y - z.origin.y),
                  omega: Physics.settleOmega, at: now)
        z.zooming = true
        zoom = z
    }

    /// `zoom SCALE` and `zoom reset`: the current picture to `scale`
    /// (within `1...max_scale`) about its centre.
    private mutating func zoom(to scale: Double, at now: Timestamp) {
        let target = min(max(scale, 1), zoomSettings.maxScale)
        if zoom == nil {
            guard target > 1 else { return }
            let index = lattice.itemIndex(at: offset(at: now))
            // The frame of the current item: its copy nearest the viewport's lead.
            let x = offset(at: now)
            guard let slots = geometry.visibleSlots(offset: x, count: lattice.count, wrap: settings.wrap),
                  let slot = slots.filter({ Geometry.index(ofSlot: $0, count: lattice.count, wrap: settings.wrap) == index })
                      .min(by: { abs(geometry.start(ofSlot: $0, offset: x) - geometry.lead)
                               < abs(geometry.start(ofSlot: $1, offset: x) - geometry.lead) }) else { return }
            let start = geometry.start(ofSlot: slot, offset: x) + geometry.itemExtent / 2
            let centre = geometry.vertical ? Point(x: geometry.crossExtent / 2, y: start)
                : Point(x: start, y: geometry.crossExtent / 2)
            zoom = newZoom(at: centre, now: now)
        }
        guard var z = zoom else { return }
        z.animate(to: target, focus: Point(x: z.width / 2, y: z.height / 2), omega: Physics.settleOmega, at: now)
        z.zooming = true
        zoom = z
    }

    /// A zoom left out of range (a finger caught it mid-spring) springs back.
    private mutating func zoomSettleBack(at now: Timestamp) {
        guard var z = zoom, z.pinch == nil, z.pan == nil, z.isStill else { return }
        let s = z.scaleValue(at: now)
        z.animate(to: min(max(s, 1), zoomSettings.maxScale), focus: Point(x: z.width / 2, y: z.height / 2),
                  omega: Physics.bounceOmega, at: now)
        zoom = z
    }

    /// The zoom came to rest: `didEndZooming` for the gesture or animation
    /// that moved it, and at scale 1 the zoom is over (autoplay resumes
    /// `resume_delay` from now).
    private mutating func zoomRested(at time: Timestamp, into events: inout [CarouselEvent]) {
        guard var z = zoom, hold == nil, z.pinch == nil, z.pan == nil, z.isStill else { return }
        let s = z.scaleValue(at: time)
        if z.zooming {
            z.zooming = false
            events.append(CarouselEvent(time: time, kind: .didEndZooming(scale: s)))
        }
        zoom = z
        let t = z.translation(at: time)
        guard abs(s - 1) < 1e-9, abs(t.x) < 1e-6, abs(t.y) < 1e-6 else { return }
        zoom = nil
        zoomEnded(at: time)
    }

    /// Ends the zoom at once, the picture back at scale 1 (another picture
    /// comes, the items or layout changed).
    private mutating func dropZoom(at time: Timestamp, into events: inout [CarouselEvent]) {
        guard zoom != nil else { return }
        zoom = nil
        reportZoom(at: time, into: &events)
        events.append(CarouselEvent(time: time, kind: .didEndZooming(scale: 1)))
        zoomEnded(at: time)
    }

    /// No picture is zoomed any more: a carousel at rest drifts again and
    /// counts the zoom as an interaction that just ended.
    private mutating func zoomEnded(at time: Timestamp) {
        guard hold == nil, case .rest(let x) = motion else { return }
        startDriftIfNeeded(from: x, at: time)
        scheduleAutoplay(after: .interaction, at: time)
        armIdleReturn(at: time)
    }

    // MARK: - Commands and programmatic scrolling

    /// Carries out `command` at `now`. Scrolling commands are refused while a
    /// finger holds the carousel (the finger owns it).
    public mutating func perform(_ command: CarouselCommand, at now: Timestamp) -> Result<[CarouselEvent], CommandError> {
        var events: [CarouselEvent] = []
        advance(to: now, into: &events)
        let now = clock
        // A command counts as an interaction for idle_return: one that does
        // not move the carousel moves the return's time on.
        if idleReturnDeadline != nil { armIdleReturn(at: now) }
        switch command {
        case .pause:
            pausedByCommand = true
            autoplayDeadline = nil
            return .success(events)
        case .zoom where !zoomSettings.enabled:
            return .failure(.zoomDisabled)
        case .resume:
            resumeFromCommand(at: now)
            return .success(events)
        case .togglePause:
            if pausedByCommand { resumeFromCommand(at: now) } else {
                pausedByCommand = true
                autoplayDeadline = nil
            }
            return .success(events)
        default:
            break
        }
        guard hold == nil else { return .failure(.touchInProgress) }
        guard lattice.count > 0 else { return .failure(.noItems) }
        interacted = true
        idleReturnDeadline = nil
        let duration = autoplaySettings.transition
        switch command {
        case .next, .previous:
            guard lattice.pageCount > 1 else { break }
            let base = lattice.nearestPage(to: restingTarget(at: now))
            let target = lattice.clampPage(base + (command == .next ? 1 : -1))
            if target != base || settings.wrap {
                scroll(toOffset: lattice.offset(ofPage: target), duration: duration, autoplay: false,
                       effect: autoplaySettings.effect, at: now, into: &events)
            } else if case .rest = motion {
                // Nothing past the end, but a key press is still an interaction.
                scheduleAutoplay(after: .interaction, at: now)
                armIdleReturn(at: now)
            }
        case .first, .last, .goto:
            let index: Int
            var d = duration
            switch command {
            case .first: index = 0
            case .last: index = lattice.count - 1
            case .goto(let i, let given):
                guard (0..<lattice.count).contains(i) else {
                    return .failure(.indexOutOfRange(index: i, count: lattice.count))
                }
                index = i
                if let given { d = given }
            default: return .success(events)
            }
            scrollToItem(index, duration: d, effect: autoplaySettings.effect, at: now, into: &events)
        case .zoom(let scale):
            guard !isMoving else { return .failure(.carouselMoving) }
            zoom(to: scale, at: now)
            reportZoom(at: now, into: &events)
            zoomRested(at: now, into: &events)
        default:
            break
        }
        return .success(events)
    }

    private mutating func resumeFromCommand(at now: Timestamp) {
        guard pausedByCommand else { return }
        pausedByCommand = false
        if case .rest = motion { scheduleAutoplay(after: .interaction, at: now) }
    }

    /// Marks the display switched off or on (a pause source of its own):
    /// off, autoplay has no deadline; on again, it counts from now as after
    /// an interaction, so the picture on screen is seen before it moves.
    public mutating func setDisplayOff(_ value: Bool, at now: Timestamp) -> [CarouselEvent] {
        var events: [CarouselEvent] = []
        advance(to: now, into: &events)
        guard displayOff != value else { return events }
        displayOff = value
        if value { autoplayDeadline = nil } else if case .rest = motion {
            scheduleAutoplay(after: .interaction, at: clock)
        }
        return events
    }

    /// `[power] wake = next`: the display comes back after autoplay would
    /// have moved on, so one picture `direction` (+1 forward, -1 back) is
    /// shown at once (a jump, as a frame that had stayed on would have moved
    /// on), when autoplay is paused by nothing but the display. Without
    /// wrap the last picture stays.
    public mutating func advanceAfterDark(direction: Int, at now: Timestamp) -> [CarouselEvent] {
        let count = lattice.count
        guard count > 1 else { return [] }
        let snap = snapshot(at: now)
        guard snap.autoplay.pausedBy.allSatisfy({ $0 == .display }) else { return [] }
        var next = snap.index + direction
        if settings.wrap {
            next = (next % count + count) % count
        } else if !(0..<count).contains(next) {
            return []
        }
        guard case .success(let events) = perform(.goto(index: next, duration: 0), at: now) else { return [] }
        return events
    }

    /// Where the carousel is heading: the target of a settle or animation in
    /// flight, else where it is. "Next" counts from there, so two quick
    /// `next` commands move two pages.
    private func restingTarget(at now: Timestamp) -> Double {
        switch motion {
        case .animation(let e, _): e.to
        case .fade(let f, _): f.to
        case .settle(let s): s.target
        default: offset(at: now)
        }
    }

    /// Scrolls so that item `index` is shown (with paging: its page),
    /// the shortest way round with wrap. SwipeView's `scrollToItemAtIndex:duration:`.
    public mutating func scrollToItem(_ index: Int, duration: Double, at now: Timestamp) -> [CarouselEvent] {
        var events: [CarouselEvent] = []
        advance(to: now, into: &events)
        guard hold == nil, lattice.count > 0 else { return events }
        scrollToItem(min(max(index, 0), lattice.count - 1), duration: duration, at: clock, into: &events)
        return events
    }

    /// Scrolls to page `page` (`0 ..< numberOfPages`).
    public mutating func scrollToPage(_ page: Int, duration: Double, at now: Timestamp) -> [CarouselEvent] {
        var events: [CarouselEvent] = []
        advance(to: now, into: &events)
        guard hold == nil, lattice.pageCount > 0 else { return events }
        let p = min(max(page, 0), lattice.pageCount - 1)
        let target = lattice.nearestCopy(of: lattice.offset(ofCyclePage: p), to: offset(at: clock))
        scroll(toOffset: target, duration: duration, autoplay: false, at: clock, into: &events)
        return events
    }

    /// Scrolls by `count` items (negative: backwards), from where the carousel is heading.
    public mutating func scrollByItems(_ count: Int, duration: Double, at now: Timestamp) -> [CarouselEvent] {
        var events: [CarouselEvent] = []
        advance(to: now, into: &events)
        guard hold == nil, lattice.count > 0 else { return events }
        var target = restingTarget(at: clock).rounded() + Double(count)
        if let range = lattice.range { target = min(max(target, range.lowerBound), range.upperBound) }
        scroll(toOffset: target, duration: duration, autoplay: false, at: clock, into: &events)
        return events
    }

    /// Scrolls to `offset` (items); with wrap the shortest way round, without clamped to the range.
    public mutating func scrollToOffset(_ offset: Double, duration: Double, at now: Timestamp) -> [CarouselEvent] {
        var events: [CarouselEvent] = []
        advance(to: now, into: &events)
        guard hold == nil, lattice.count > 0 else { return events }
        var target = offset
        if let range = lattice.range { target = min(max(target, range.lowerBound), range.upperBound) }
        target = lattice.nearestCopy(of: target, to: self.offset(at: clock))
        scroll(toOffset: target, duration: duration, autoplay: false, at: clock, into: &events)
        return events
    }

    private mutating func scrollToItem(_ index: Int, duration: Double, effect: TransitionEffect = .slide,
                                       at now: Timestamp, into events: inout [CarouselEvent]) {
        let target = Self.targetOffset(forItem: index, lattice: lattice, paging: settings.paging)
        scroll(toOffset: lattice.nearestCopy(of: target, to: offset(at: now)), duration: duration,
               autoplay: false, effect: effect, at: now, into: &events)
    }

    /// Starts an eased scroll to the unwrapped offset `target` (a jump when
    /// `duration` is 0). A deceleration in flight ends; an animation in flight
    /// is redirected (one occurrence, one `didEndScrollingAnimation`).
    ///
    /// `effect` is how the change looks: a slide, a crossfade of the same
    /// duration, or a cut (at once, yet ending with `didEndScrollingAnimation`
    /// as a slide would: subscribers see the same events for every effect).
    private mutating func scroll(toOffset target: Double, duration: Double, autoplay: Bool,
                                 effect: TransitionEffect = .slide, at now: Timestamp,
                                 into events: inout [CarouselEvent]) {
        // Another picture is coming: the zoomed one goes back to scale 1.
        dropZoom(at: now, into: &events)
        let x = offset(at: now)
        let wasAnimating = isScrolling
        endDeceleration(at: now, into: &events)
        autoplayDeadline = nil
        let cut = effect == .cut && target != x
        if duration <= 0 || target == x || cut {
            motion = .rest(target)
            reportScroll(at: now, into: &events)
            if wasAnimating || cut { events.append(CarouselEvent(time: now, kind: .didEndScrollingAnimation)) }
            enterRest(at: now, cause: autoplay ? .advance : .interaction)
            return
        }
        if effect == .crossfade {
            motion = .fade(FadeMotion(from: x, to: target, duration: duration, at: now), autoplay: autoplay)
        } else {
            motion = .animation(EaseMotion(from: x, to: target, duration: duration, at: now), autoplay: autoplay)
        }
    }

    // MARK: - The items change

    /// The album changed (files added, removed or replaced): the carousel now
    /// has `count` items and shows item `index` (the caller keeps the current
    /// image where it still exists). Motion stops; a finger on the screen
    /// must lift and touch again; autoplay keeps its schedule (or starts, when
    /// the first images arrive).
    public mutating func replaceItems(count: Int, showing index: Int, at now: Timestamp) -> [CarouselEvent] {
        var events: [CarouselEvent] = []
        advance(to: now, into: &events)
        let now = clock
        let hadItems = lattice.pageCount > 1
        stopAndShow(item: index, of: count, at: now, into: &events)
        let deadline = autoplayDeadline
        enterRest(at: now, cause: hadItems ? .advance : .start)
        // A schedule already running stays as it was.
        if hadItems, let deadline, autoplayDeadline != nil { autoplayDeadline = deadline }
        return events
    }

    /// Ends whatever holds or moves the carousel (a finger must lift and
    /// touch again; the events of a drag, an animation or a deceleration are
    /// closed), lays `count` items out with the current settings and rests
    /// on item `index`.
    private mutating func stopAndShow(item index: Int, of count: Int, at now: Timestamp,
                                      into events: inout [CarouselEvent]) {
        if let h = hold {
            hold = nil
            if h.drag != nil {
                events.append(CarouselEvent(time: now, kind: .didEndDragging(willDecelerate: false)))
            }
        }
        gesture.reset()
        dropZoom(at: now, into: &events)
        outbox.layoutChanged = true
        if isScrolling { events.append(CarouselEvent(time: now, kind: .didEndScrollingAnimation)) }
        endDeceleration(at: now, into: &events)
        lattice = PageLattice(count: count, settings: settings)
        let x = count > 0 ? Self.targetOffset(forItem: min(max(index, 0), count - 1), lattice: lattice,
                                              paging: settings.paging) : 0
        motion = .rest(x)
        reportScroll(at: now, into: &events)
    }

    // MARK: - New settings at run time

    /// New settings while running (a configuration reload, a `set` request).
    ///
    /// Settings that only change how the next gesture or advance behaves
    /// (slop, deceleration, bounces, scroll_enabled, start_index, every
    /// autoplay key) apply in place: nothing in flight is interrupted. A new
    /// layout (wrap, orientation, paging, item size, spacing, alignment,
    /// autoscroll, the viewport, the item count) stops motion like
    /// `replaceItems` and shows item `index` (the caller keeps the current
    /// image where it still exists).
    ///
    /// The autoplay schedule is kept when it would run the same way (same
    /// interval, still running); otherwise the next advance is `interval`
    /// from now.
    public mutating func reconfigure(settings new: CarouselSettings, autoplay: AutoplaySettings, viewport: Viewport,
                                     count: Int, showing index: Int, zoom newZoom: ZoomSettings? = nil,
                                     at now: Timestamp) -> [CarouselEvent] {
        var events: [CarouselEvent] = []
        advance(to: now, into: &events)
        let now = clock
        // New zoom settings: the picture goes back to scale 1 (it may be past the new maximum).
        if let newZoom, newZoom != zoomSettings {
            zoomSettings = newZoom
            gesture.doubleTap = newZoom.enabled && newZoom.doubleTap && newZoom.maxScale > 1
            dropZoom(at: now, into: &events)
        }
        let oldAutoplay = autoplaySettings
        let wasRunning = autoplayStatus.running
        let deadline = autoplayDeadline
        var live = settings
        live.bounces = new.bounces
        live.scrollEnabled = new.scrollEnabled
        live.decelerationRate = new.decelerationRate
        live.startIndex = new.startIndex
        live.idleReturn = new.idleReturn
        live.touchSlop = new.touchSlop
        let relayout = live != new || viewport != geometry.viewport || count != lattice.count
            || index != lattice.itemIndex(at: offset(at: now))
        settings = new
        autoplaySettings = autoplay
        gesture.touchSlop = new.touchSlop
        gesture.vertical = new.vertical
        if relayout {
            geometry = Geometry(viewport: viewport, settings: new)
            stopAndShow(item: index, of: count, at: now, into: &events)
            enterRest(at: now, cause: .advance)
        } else if hold == nil, case .rest = motion {
            scheduleAutoplay(after: .advance, at: now)
        } else if hold == nil, case .drift = motion {
            scheduleAutoplay(after: .advance, at: now)
        }
        // A return already armed keeps its time; turned off, it is disarmed.
        if new.idleReturn <= 0 { idleReturnDeadline = nil }
        // A schedule that would run the same way is kept as it was.
        if wasRunning, let deadline, autoplayDeadline != nil, oldAutoplay.interval == autoplay.interval {
            autoplayDeadline = deadline
        }
        return events
    }

    private func clampSpeed(_ v: Double, _ limit: Double) -> Double { min(max(v, -limit), limit) }

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
        outbox = Outbox(reportedShownOffset: shown, reportedMoving: moving, reportedIndex: reportedIndex,
                        reportedZoom: zoomed)
        outbox.layoutChanged = false
        return effects
    }

    /// The items drawn when the carousel shows `offset`, each once, leading first.
    private func items(visibleAt offset: Double) -> [Int] {
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
