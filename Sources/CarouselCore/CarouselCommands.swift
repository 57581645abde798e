// Commands and programmatic scrolling, the items changing, and new settings at run time.
// The stored state and reading are in Carousel.swift.

extension Carousel {
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
            pauseFromCommand()
            return .success(events)
        case .zoom where !zoomSettings.enabled:
            return .failure(.zoomDisabled)
        case .resume:
            resumeFromCommand(at: now)
            return .success(events)
        case .play:
            playFromCommand(at: now)
            return .success(events)
        case .togglePause:
            // What the user sees decides: on goes off, off (paused, or
            // `enabled = false`) comes on. A clip on the page is what is
            // seen: it pauses, or plays on.
            if video != .none {
                if pausedByCommand { playFromCommand(at: now) } else { pauseFromCommand() }
            } else if autoplayEnabled {
                pauseFromCommand()
            } else {
                resumeFromCommand(at: now)
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

    mutating func pauseFromCommand() {
        pausedByCommand = true
        resumedByCommand = false
        autoplayDeadline = nil
    }

    /// Lifts a `pause` and nothing more: autoplay comes back only if it was
    /// on before (`[autoplay] enabled`, or a `resume`); a clip plays on.
    mutating func playFromCommand(at now: Timestamp) {
        guard pausedByCommand else { return }
        pausedByCommand = false
        if case .rest = motion { scheduleAutoplay(after: .interaction, at: now) }
    }

    /// Autoplay on, whatever `[autoplay] enabled` says: someone who asks it
    /// to play expects the pictures to move (Home Assistant's Autoplay
    /// switch turned on, the play key).
    mutating func resumeFromCommand(at now: Timestamp) {
        guard !autoplayEnabled else { return }
        pausedByCommand = false
        resumedByCommand = !autoplaySettings.enabled
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

    /// Says whether the current page is a clip and whether it plays (the
    /// daemon's player decides, see `ClipPlayback`). While one plays,
    /// autoplay waits (the `video` pause source); when it stops playing
    /// without ending (paused, the display off), autoplay counts from now
    /// as after an interaction.
    public mutating func setVideo(_ presence: VideoPresence, at now: Timestamp) -> [CarouselEvent] {
        var events: [CarouselEvent] = []
        advance(to: now, into: &events)
        guard video != presence else { return events }
        let wasPlaying = video == .playing
        video = presence
        if presence == .playing {
            autoplayDeadline = nil
        } else if wasPlaying, case .rest = motion {
            scheduleAutoplay(after: .interaction, at: clock)
        }
        return events
    }

    /// What `setUpcomingReady` said last (true until it is first called).
    public var isUpcomingReady: Bool { upcomingReady }

    /// Whether the page autoplay goes to next (`upcomingAutoplayItem`) can
    /// be shown: its picture is decoded (or known broken). When autoplay's
    /// moment came while it could not be, autoplay moves now.
    public mutating func setUpcomingReady(_ ready: Bool, at now: Timestamp) -> [CarouselEvent] {
        var events: [CarouselEvent] = []
        advance(to: now, into: &events)
        guard upcomingReady != ready else { return events }
        upcomingReady = ready
        if ready, autoplayWaiting {
            autoplayDeadline = clock
            advance(to: clock, into: &events)
        }
        return events
    }

    /// The item an automatic advance would bring to where the carousel
    /// rests now (the first of its page), if autoplay runs; nil while the
    /// carousel moves, is held or autoplay is paused.
    public var upcomingAutoplayItem: Int? {
        // At rest first: asked after every frame's events, and `autoplayStatus` builds a list.
        guard hold == nil, case .rest(let x) = motion, autoplayStatus.running,
              let target = autoplayTarget(from: x) else { return nil }
        return lattice.itemIndex(at: lattice.offset(ofPage: target))
    }

    /// The clip on the page came to its end (or autoplay waited
    /// `[video] max_seconds` for it): autoplay, if it runs, moves on now.
    public mutating func videoEnded(at now: Timestamp) -> [CarouselEvent] {
        var events: [CarouselEvent] = []
        advance(to: now, into: &events)
        if video == .playing { video = .stopped }
        guard case .rest = motion, hold == nil else { return events }
        if autoplayStatus.running, autoplayTarget(from: offset(at: clock)) != nil {
            autoplayDeadline = clock
            advance(to: clock, into: &events)
        }
        return events
    }

    /// `[power] wake = next`: the display comes back after autoplay would
    /// have moved on, so one picture `direction` (+1 forward, -1 back) is
    /// shown at once (a jump, as a frame that had stayed on would have moved
    /// on), when autoplay is on (`[autoplay] enabled`, or a `resume`) and
    /// paused by nothing but the display. Without wrap the last picture stays.
    public mutating func advanceAfterDark(direction: Int, at now: Timestamp) -> [CarouselEvent] {
        let count = lattice.count
        guard count > 1 else { return [] }
        let snap = snapshot(at: now)
        guard snap.autoplay.enabled, snap.autoplay.pausedBy.allSatisfy({ $0 == .display }) else { return [] }
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
    func restingTarget(at now: Timestamp) -> Double {
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

    mutating func scrollToItem(_ index: Int, duration: Double, effect: TransitionEffect = .slide,
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
    mutating func scroll(toOffset target: Double, duration: Double, autoplay: Bool,
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
    mutating func stopAndShow(item index: Int, of count: Int, at now: Timestamp,
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
        // A new `enabled` is the latest word on autoplay: it ends an earlier
        // `resume` of autoplay the old one kept off (a `pause` stays).
        if autoplay.enabled != oldAutoplay.enabled { resumedByCommand = false }
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

    func clampSpeed(_ v: Double, _ limit: Double) -> Double { min(max(v, -limit), limit) }
}
