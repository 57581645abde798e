// Touch: what the gesture stage recognised, carried out with geometry and motion (catching, following the finger, release and paging, taps).
// The stored state and reading are in Carousel.swift.

extension Carousel {
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
    var catchable: Bool {
        if let z = zoom, !z.isStill { return true }
        switch motion {
        case .settle, .momentum, .bounce, .animation, .fade: return settings.scrollEnabled
        case .rest, .held, .drift: return false
        }
    }

    /// A second finger now would pinch: zoom is on, there is a picture, and
    /// the carousel stands still under a finger that does not drag it.
    var isZoomable: Bool {
        guard zoomSettings.enabled, zoomSettings.maxScale > 1, lattice.count > 0, hold?.drag == nil else { return false }
        switch motion {
        case .rest, .held: return true
        default: return false
        }
    }

    mutating func apply(_ intents: [GestureIntent], at now: Timestamp, into events: inout [CarouselEvent]) {
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
                if let hit = geometry.hit(at: point, offset: offset(at: now), count: lattice.count, wrap: settings.wrap) {
                    let i = hit.index
                    lastPress = hit
                    events.append(CarouselEvent(time: now, kind: .didSelectItem(index: i)))
                    outbox.selected = i
                }
            case .longPressed(let point):
                guard let h = hold else { break }
                if let hit = geometry.hit(at: point, offset: h.touchOffset, count: lattice.count, wrap: settings.wrap) {
                    let i = hit.index
                    lastPress = hit
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

    mutating func touchBegan(at now: Timestamp, into events: inout [CarouselEvent]) {
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
    mutating func release(from x: Double, fingerVelocity: Double, travel: Double,
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

    mutating func settleQuietly(from x: Double, at now: Timestamp, into events: inout [CarouselEvent]) {
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
    func bounded(_ raw: Double) -> Double {
        guard let range = lattice.range else { return raw }
        let edge: Double
        if raw > range.upperBound { edge = range.upperBound } else if raw < range.lowerBound { edge = range.lowerBound } else { return raw }
        guard settings.bounces else { return edge }
        let overshoot = (raw - edge) * geometry.pitch
        return edge + RubberBand.shown(overshoot, extent: geometry.axisExtent) / geometry.pitch
    }

    /// The inverse of `bounded` for a shown offset (a drag that starts on a
    /// carousel caught mid-bounce continues from the same rubber band).
    func unbounded(_ shown: Double) -> Double {
        guard let range = lattice.range, settings.bounces else { return shown }
        let edge: Double
        if shown > range.upperBound { edge = range.upperBound } else if shown < range.lowerBound { edge = range.lowerBound } else { return shown }
        return edge + RubberBand.raw((shown - edge) * geometry.pitch, extent: geometry.axisExtent) / geometry.pitch
    }
}
