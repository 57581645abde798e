// Time: the model advanced to an instant, its deadlines (motion ending, autoplay, the idle return, drift) fired in order.
// The stored state and reading are in Carousel.swift.

extension Carousel {
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

    mutating func fire(_ deadline: Timestamp, into events: inout [CarouselEvent]) {
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

    mutating func finishMotion(at time: Timestamp, into events: inout [CarouselEvent]) {
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
    mutating func enterRest(at time: Timestamp, cause: RestCause) {
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

    mutating func armIdleReturn(at time: Timestamp) {
        idleReturnDeadline = settings.idleReturn > 0 ? time.adding(seconds: settings.idleReturn) : nil
    }

    /// Nobody touched the carousel for `idle_return` seconds: back to the
    /// start item, as an automatic advance does it (the transition, then
    /// autoplay's interval). Not a new interaction, so it does not re-arm
    /// itself; already there, nothing moves.
    mutating func returnToStart(at time: Timestamp, into events: inout [CarouselEvent]) {
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

    mutating func startDriftIfNeeded(from x: Double, at time: Timestamp) {
        // A zoomed picture holds still under the eye.
        guard settings.autoscroll != 0, lattice.count > 0, zoom == nil else { return }
        let drift = DriftMotion(from: x, speed: settings.autoscroll, range: lattice.range, at: time)
        if let stop = drift.stop, stop.time <= time { return }
        motion = .drift(drift)
    }

    mutating func scheduleAutoplay(after cause: RestCause, at time: Timestamp) {
        // Nothing is scheduled that would not happen: with at_end = stop on
        // the last page there is no next advance until someone moves away.
        autoplayWaiting = false
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
    func autoplayTarget(from x: Double) -> Int? {
        guard lattice.pageCount > 1 else { return nil }
        let step = autoplaySettings.direction == .forward ? 1 : -1
        let target = lattice.nearestPage(to: x) + step
        if settings.wrap || (0..<lattice.pageCount).contains(target) { return target }
        switch autoplaySettings.atEnd {
        case .rewind: return step > 0 ? 0 : lattice.pageCount - 1
        case .stop: return nil
        }
    }

    mutating func fireAutoplay(at time: Timestamp, into events: inout [CarouselEvent]) {
        guard autoplayStatus.running, hold == nil, case .rest(let x) = motion,
              let target = autoplayTarget(from: x) else { return }
        // The next picture is still being decoded: a slide now would bring a
        // blank page. Wait for it (`setUpcomingReady`), one interval at most.
        if !upcomingReady && !autoplayWaiting {
            autoplayWaiting = true
            autoplayDeadline = time.adding(seconds: max(autoplaySettings.interval, 1))
            return
        }
        autoplayWaiting = false
        scroll(toOffset: lattice.offset(ofPage: target), duration: autoplaySettings.transition,
               autoplay: true, effect: autoplaySettings.effect, at: time, into: &events)
    }

    mutating func endDeceleration(at time: Timestamp, into events: inout [CarouselEvent]) {
        if decelerating {
            decelerating = false
            events.append(CarouselEvent(time: time, kind: .didEndDecelerating))
        }
    }

    /// Emits `didScroll` and `currentItemIndexDidChange` if the offset at `time`
    /// differs from the last one reported.
    mutating func reportScroll(at time: Timestamp, into events: inout [CarouselEvent]) {
        let x = offset(at: time)
        noteHeading(from: reportedOffset, to: x)
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

    /// Which way the content moved from `a` to `b` (unwrapped offsets): only
    /// while it moves or follows a finger, and with wrap the shorter way round.
    mutating func noteHeading(from a: Double, to b: Double) {
        guard isMoving || isDragging else { return }
        var d = b - a
        if settings.wrap, lattice.count > 0 {
            let n = Double(lattice.count)
            d -= n * (d / n).rounded()
        }
        if d != 0 { outbox.heading = d > 0 ? 1 : -1 }
    }
}
