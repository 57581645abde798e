// The zoom of one picture: pinch, pan, double tap, and the springs that bring it to rest.
// The stored state and reading are in Carousel.swift.

extension Carousel {
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
    mutating func reportZoom(at time: Timestamp, into events: inout [CarouselEvent]) {
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
    func itemFrame(at point: Point, now: Timestamp) -> (item: Int, origin: Point)? {
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
    func newZoom(at point: Point, now: Timestamp) -> ZoomState? {
        guard let (item, origin) = itemFrame(at: point, now: now) else { return nil }
        let along = geometry.itemExtent, across = geometry.crossExtent
        return ZoomState(item: item, origin: origin, width: geometry.vertical ? across : along,
                         height: geometry.vertical ? along : across, baseOffset: offset(at: now),
                         scale: .still(1), tx: .still(0), ty: .still(0))
    }

    mutating func pinchBegan(_ a: Point, _ b: Point, at now: Timestamp) {
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
    mutating func pinchMoved(_ a: Point, _ b: Point, at now: Timestamp) {
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
    mutating func pinchEnded(at now: Timestamp) {
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
    mutating func panMoved(_ d: Point, at now: Timestamp, into events: inout [CarouselEvent]) {
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
    mutating func panEnded(_ velocity: Point, at now: Timestamp, into events: inout [CarouselEvent]) {
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
    mutating func doubleTapped(at point: Point, now: Timestamp) {
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
    mutating func zoom(to scale: Double, at now: Timestamp) {
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
    mutating func zoomSettleBack(at now: Timestamp) {
        guard var z = zoom, z.pinch == nil, z.pan == nil, z.isStill else { return }
        let s = z.scaleValue(at: now)
        z.animate(to: min(max(s, 1), zoomSettings.maxScale), focus: Point(x: z.width / 2, y: z.height / 2),
                  omega: Physics.bounceOmega, at: now)
        zoom = z
    }

    /// The zoom came to rest: `didEndZooming` for the gesture or animation
    /// that moved it, and at scale 1 the zoom is over (autoplay resumes
    /// `resume_delay` from now).
    mutating func zoomRested(at time: Timestamp, into events: inout [CarouselEvent]) {
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
    mutating func dropZoom(at time: Timestamp, into events: inout [CarouselEvent]) {
        guard zoom != nil else { return }
        zoom = nil
        reportZoom(at: time, into: &events)
        events.append(CarouselEvent(time: time, kind: .didEndZooming(scale: 1)))
        zoomEnded(at: time)
    }

    /// No picture is zoomed any more: a carousel at rest drifts again and
    /// counts the zoom as an interaction that just ended.
    mutating func zoomEnded(at time: Timestamp) {
        guard hold == nil, case .rest(let x) = motion else { return }
        startDriftIfNeeded(from: x, at: time)
        scheduleAutoplay(after: .interaction, at: time)
        armIdleReturn(at: time)
    }
}
