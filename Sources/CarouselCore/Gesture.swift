/// What a finger means to the carousel, as the gesture stage recognises it
/// (SPEC.md sections 3 and 7). The model turns intents into motion: the
/// gesture knows nothing of offsets, springs or pages.
///
/// A touch that owns the gesture produces, in order:
///
/// * `touchBegan`, then either
/// * `dragBegan`, `dragMoved`*, `released` (a drag), or
/// * `longPressed`? then `tapped`? then `touchEnded` (a lift without a drag;
///   a long press and a tap never both happen), or
/// * `pinchBegan`, `pinchMoved`*, `pinchEnded`, then a pan with the finger
///   left (a second finger on a zoomable target), or
/// * `panBegan`, `panMoved`*, `panEnded` (one finger on a zoomed target).
public enum GestureIntent: Equatable, Sendable {
    /// The finger that owns the gesture came down at `point`: hold the
    /// carousel (and stop it, if it was moving and catchable).
    case touchBegan(at: Point)
    /// The finger left the touch slop along the scroll axis (directional
    /// lock passed) and the target scrolls: a drag starts here, at the
    /// finger's current position (no jump by the slop distance).
    case dragBegan
    /// The dragging finger is `translation` pixels along the scroll axis from
    /// where the drag began (positive: right or down).
    case dragMoved(translation: Double)
    /// The dragging finger lifted (or was cancelled: `velocity` is then 0).
    /// `velocity` is the finger's, px/s along the axis (positive: right or
    /// down); `travel` is how far it moved along the axis from touch down, px.
    case released(velocity: Double, travel: Double, cancelled: Bool)
    /// A tap: lift inside the slop within the tap timeout, not cancelled, not
    /// a caught carousel, not after a long press. `point` is where the finger
    /// came down. Followed by `touchEnded`; with `doubleTap` on it comes on
    /// its own instead, after that touch ended, when the double-tap window
    /// closes (from `advance`) or a touch too far or too soon comes down.
    case tapped(at: Point)
    /// The finger stayed inside the slop until the long-press deadline
    /// (not on a caught carousel). `point` is where it came down.
    case longPressed(at: Point)
    /// The finger lifted (or was cancelled) without having dragged.
    case touchEnded
    /// A second finger came down on a zoomable target (`TouchTarget.isZoomable`):
    /// the two fingers now pinch, at `a` and `b`. The owning finger neither
    /// drags, pans, taps nor long-presses any more.
    case pinchBegan(Point, Point)
    /// One of the pinching fingers moved; both positions.
    case pinchMoved(Point, Point)
    /// One of the pinching fingers lifted (or was cancelled). The other one
    /// pans on: `panBegan` follows at once.
    case pinchEnded
    /// The owning finger left the slop (in any direction) on a zoomed
    /// target (`TouchTarget.isZoomed`): it pans the picture from here.
    case panBegan
    /// The panning finger is `translation` layout pixels from where the pan began.
    case panMoved(translation: Point)
    /// The panning finger lifted (or was cancelled: `velocity` is then 0),
    /// with its velocity in px/s; it ends the touch.
    case panEnded(velocity: Point)
    /// A second tap inside the double-tap window and slop (SPEC.md section
    /// 7), at the point where it came down; the first tap is not reported.
    /// Always followed by `touchEnded`.
    case doubleTapped(at: Point)
}

/// What the gesture needs to know about the thing under the finger, at the
/// moment of an input. The model says it; the gesture never reads the model.
public struct TouchTarget: Equatable, Sendable {
    /// The target moves and a finger coming down now stops it: that touch is
    /// a catch, never a tap nor a long press.
    public var isCatchable: Bool
    /// A drag along the axis would move the target (scrolling is enabled and
    /// there is something to scroll). When false, a finger passing the slop
    /// is simply not a drag.
    public var isScrollable: Bool

    /// A second finger coming down now starts a pinch.
    public var isZoomable: Bool
    /// The target is zoomed: one finger pans it (any direction) instead of dragging.
    public var isZoomed: Bool

    public init(isCatchable: Bool = false, isScrollable: Bool = true, isZoomable: Bool = false, isZoomed: Bool = false) {
        self.isCatchable = isCatchable
        self.isScrollable = isScrollable
        self.isZoomable = isZoomable
        self.isZoomed = isZoomed
    }
}

/// The gesture stage: turns touch input into `GestureIntent`s.
///
/// It owns the touch slop, the directional lock, tap and long-press
/// recognition (with the long-press deadline, exposed as `nextDeadline` and
/// fired by `advance(to:)`), which finger owns the gesture, and the velocity
/// tracker. Like the model it is a value with a manual clock: time comes in
/// as arguments and never runs backwards.
///
/// The first finger down owns the gesture until it lifts. A second finger on
/// a zoomable target starts a pinch (the two fingers then drive it); other
/// fingers are ignored. With `doubleTap` on, a tap is held back for the
/// double-tap window: a second tap near it within the window is a
/// `doubleTapped` and neither tap is reported, otherwise the first is
/// reported as `tapped` when the window closes (UIKit's single tap that
/// requires the double tap to fail, Android's `onSingleTapConfirmed`).
public struct Gesture: Sendable {
    /// A lift within this many seconds of touch down (inside the slop) is a tap.
    public static let tapTimeout = 0.5
    /// A finger still inside the slop this many seconds after touch down is a long press.
    public static let longPressTimeout = 0.5

    /// Distance in layout pixels a finger must travel before a drag starts.
    public var touchSlop: Double
    /// The scroll axis is vertical (y) instead of horizontal (x).
    public var vertical: Bool
    /// The instant of the latest input or advance.
    public private(set) var clock: Timestamp

    private var owner: Finger?
    /// The other fingers down while the owner is, with their positions.
    private var others: [Int: Point] = [:]
    /// The two fingers of a pinch in progress (the owner's id first).
    private var pinch: (Int, Int)?
    /// A tap waiting for the double-tap window to close.
    private var pendingTap: PendingTap?
    /// Taps wait for a possible second tap (zoom's double tap is on).
    public var doubleTap = false

    private struct PendingTap: Sendable {
        let point: Point
        let liftTime: Timestamp
        var deadline: Timestamp { liftTime.adding(seconds: ZoomPhysics.doubleTapTimeout) }
    }
    /// What each touch device's samples taught: its sample interval (for the
    /// velocity tracker's stop rule) and its noise (for the slop).
    public private(set) var panels: [Int: PanelTraits] = [:]

    private struct Finger: Sendable {
        /// `panning`: moves a zoomed target; `pinching`: one of a pinch's fingers.
        enum Phase { case tracking, dragging, rejected, panning, pinching }
        let id: Int
        /// The device the finger is on (the key of `panels`).
        let device: Int
        let downPoint: Point
        let downTime: Timestamp
        /// Touch down stopped a moving target: never a tap or long press.
        let caught: Bool
        var phase = Phase.tracking
        var leftSlop = false
        var longPressDeadline: Timestamp?
        var longPressed = false
        var lastAxis: Double
        var lastTime: Timestamp
        /// The two latest positions while inside the slop, for the noise.
        var recent: [Point] = []
        /// The sum and count of the positions while inside the slop.
        var restSum: Point
        var restCount = 1
        var tracker = VelocityTracker()
        /// The finger's axis position where the drag began.
        var anchorAxis = 0.0
        /// Where the finger is now, and where a pan began.
        var point: Point
        var panAnchor = Point(x: 0, y: 0)
        /// Velocity across the axis (a pan moves both ways).
        var crossTracker = VelocityTracker()
        /// The finger came down as the second tap of a possible double tap.
        var secondTap = false
    }

    public init(vertical: Bool = false, touchSlop: Double = 10, at now: Timestamp = .zero) {
        self.vertical = vertical
        self.touchSlop = touchSlop
        clock = now
    }

    /// A finger owns the gesture (down and not yet lifted, cancelled or reset).
    public var isTouching: Bool { owner != nil }
    /// The owning finger is dragging.
    public var isDragging: Bool { owner?.phase == .dragging }
    /// The id of the finger that owns the gesture.
    public var ownerID: Int? { owner?.id }

    /// The long-press deadline of the owning finger, or the end of the
    /// double-tap window of a tap held back, whichever comes first.
    public var nextDeadline: Timestamp? {
        switch (owner?.longPressDeadline, pendingTap?.deadline) {
        case let (a?, b?): min(a, b)
        case let (a, b): a ?? b
        }
    }

    private func axis(_ p: Point) -> Double { vertical ? p.y : p.x }
    private func cross(_ p: Point) -> Double { vertical ? p.x : p.y }

    /// Fires what is due up to `now` (the long press) and moves the clock there.
    public mutating func advance(to now: Timestamp) -> [GestureIntent] {
        var intents: [GestureIntent] = []
        if let tap = pendingTap, tap.deadline <= now {
            // No second tap came: the first was a single tap after all.
            pendingTap = nil
            intents.append(.tapped(at: tap.point))
        }
        if var f = owner, let deadline = f.longPressDeadline, deadline <= now {
            f.longPressDeadline = nil
            if f.phase == .tracking, !f.leftSlop, !f.caught {
                f.longPressed = true
                intents.append(.longPressed(at: f.downPoint))
            }
            owner = f
        }
        clock = max(clock, now)
        return intents
    }

    /// Feeds one touch input. `time` is the event's own timestamp: the
    /// velocity tracker uses it as is; state changes (tap timeout, long-press
    /// deadline) use the clock, which never goes back. `device` says which
    /// touchscreen (or pointer) it came from: each has its own sample rate
    /// and noise, learned here.
    public mutating func handle(_ input: TouchInput, at time: Timestamp, target: TouchTarget,
                                device: Int = 0) -> [GestureIntent] {
        var intents = advance(to: time)
        let now = clock
        switch input {
        case .down(let id, let point):
            // The first finger owns the gesture; a second may pinch, later ones are ignored.
            guard owner == nil else {
                secondFinger(id, at: point, target: target, into: &intents)
                break
            }
            var secondTap = false
            if let tap = pendingTap {
                pendingTap = nil
                let dx = point.x - tap.point.x, dy = point.y - tap.point.y
                let since = now.seconds(since: tap.liftTime)
                if since >= ZoomPhysics.doubleTapMinTime,
                   dx * dx + dy * dy <= ZoomPhysics.doubleTapSlop * ZoomPhysics.doubleTapSlop {
                    secondTap = true
                } else {
                    // Too far or too soon for a double tap: the first stands alone.
                    intents.append(.tapped(at: tap.point))
                }
            }
            let caught = target.isCatchable
            var f = Finger(id: id, device: device, downPoint: point, downTime: now, caught: caught,
                           lastAxis: axis(point), lastTime: time, recent: [point], restSum: point, point: point)
            f.secondTap = secondTap
            f.tracker.add(axis(point), at: time)
            f.crossTracker.add(cross(point), at: time)
            if !caught { f.longPressDeadline = now.adding(seconds: Self.longPressTimeout) }
            owner = f
            intents.append(.touchBegan(at: point))
        case .move(let id, let point):
            if let pinch, pinch.0 == id || pinch.1 == id {
                if owner?.id == id { owner?.point = point } else { others[id] = point }
                intents.append(.pinchMoved(position(pinch.0), position(pinch.1)))
            } else if owner?.id == id {
                move(to: point, at: time, target: target, into: &intents)
            } else if others[id] != nil {
                others[id] = point
            }
        case .up(let id):
            release(id, cancelled: false, at: time, into: &intents)
        case .cancel(let id):
            release(id, cancelled: true, at: time, into: &intents)
        }
        return intents
    }

    private func position(_ id: Int) -> Point {
        owner?.id == id ? owner!.point : others[id] ?? Point(x: 0, y: 0)
    }

    /// A finger other than the owner came down: it starts a pinch where the
    /// target is zoomable and the owner neither drags nor pinches already.
    private mutating func secondFinger(_ id: Int, at point: Point, target: TouchTarget,
                                       into intents: inout [GestureIntent]) {
        guard var f = owner, f.id != id, others[id] == nil else { return }
        others[id] = point
        guard pinch == nil, target.isZoomable, [.tracking, .rejected, .panning].contains(f.phase) else { return }
        f.phase = .pinching
        f.longPressDeadline = nil
        owner = f
        pinch = (f.id, id)
        intents.append(.pinchBegan(f.point, point))
    }

    /// A finger lifted or was cancelled.
    private mutating func release(_ id: Int, cancelled: Bool, at time: Timestamp, into intents: inout [GestureIntent]) {
        guard let f = owner else { return }
        if let p = pinch, p.0 == id || p.1 == id {
            pinch = nil
            intents.append(.pinchEnded)
            // The finger left pans on from where it is (UIScrollView, Photos):
            // the owner now, with its velocity counted from here.
            let other = p.0 == id ? p.1 : p.0
            let point = position(other)
            others[id] = nil
            others[other] = nil
            var g = Finger(id: other, device: f.device, downPoint: f.downPoint, downTime: f.downTime, caught: true,
                           phase: .panning, leftSlop: true, lastAxis: axis(point), lastTime: time, restSum: point,
                           point: point)
            g.panAnchor = point
            g.tracker.add(axis(point), at: time)
            g.crossTracker.add(cross(point), at: time)
            owner = g
            intents.append(.panBegan)
            return
        }
        if f.id != id {
            others[id] = nil
            return
        }
        lift(cancelled: cancelled, at: time, into: &intents)
    }

    /// The slop for `device`: `touchSlop`, or more where the panel is noisy.
    public func slop(forDevice device: Int) -> Double {
        panels[device]?.noise.slop(atLeast: touchSlop) ?? touchSlop
    }

    /// Forgets what was learned of `device` (it was unplugged, or replaced).
    public mutating func forget(device: Int) {
        panels[device] = nil
    }

    /// Forgets the owning finger without an intent: the model stopped
    /// listening to it (new items, new layout). It must lift and touch again;
    /// until then its input is ignored.
    public mutating func reset() {
        owner = nil
        others.removeAll()
        pinch = nil
        pendingTap = nil
    }

    private mutating func move(to point: Point, at time: Timestamp, target: TouchTarget,
                               into intents: inout [GestureIntent]) {
        guard var f = owner else { return }
        let a = axis(point)
        f.tracker.add(a, at: time)
        f.crossTracker.add(cross(point), at: time)
        f.point = point
        f.lastAxis = a
        panels[f.device, default: PanelTraits()].cadence.add(interval: time.microseconds - f.lastTime.microseconds)
        f.lastTime = time
        let slop = slop(forDevice: f.device)
        // Where the finger rests: the touch-down point, or on a panel known
        // to be noisy the mean of the samples so far inside the slop (one
        // noisy sample is a poor origin: the difference of two scatters √2
        // times as far as one).
        let rest = slop > touchSlop && !f.leftSlop
            ? Point(x: f.restSum.x / Double(f.restCount), y: f.restSum.y / Double(f.restCount)) : f.downPoint
        let along = abs(a - axis(rest))
        let across = abs(cross(point) - cross(rest))
        // Near where it came down a finger holds still or is only starting
        // to move: what its positions do from sample to sample there is the
        // panel's noise. (Three slops, not one: on a noisy panel not yet
        // learned the noise alone leaves the base slop.)
        let dx = point.x - f.downPoint.x, dy = point.y - f.downPoint.y
        if dx * dx + dy * dy <= 9 * touchSlop * touchSlop {
            if f.recent.count == 2 {
                let (p0, p1) = (f.recent[0], f.recent[1])
                panels[f.device, default: PanelTraits()].noise.add(secondDifference: point.x - 2 * p1.x + p0.x)
                panels[f.device, default: PanelTraits()].noise.add(secondDifference: point.y - 2 * p1.y + p0.y)
                f.recent.removeFirst()
            }
            f.recent.append(point)
        } else {
            f.recent.removeAll()
        }
        if !f.leftSlop {
            f.restSum = Point(x: f.restSum.x + point.x, y: f.restSum.y + point.y)
            f.restCount += 1
        }
        if (along * along + across * across) > slop * slop { f.leftSlop = true }
        if f.leftSlop { f.longPressDeadline = nil }

        switch f.phase {
        case .tracking where target.isZoomed:
            // A zoomed picture pans whichever way the finger goes (no
            // directional lock), from where it leaves the slop.
            if f.leftSlop {
                f.phase = .panning
                f.panAnchor = point
                intents.append(.panBegan)
            }
        case .panning:
            intents.append(.panMoved(translation: Point(x: point.x - f.panAnchor.x, y: point.y - f.panAnchor.y)))
        case .pinching:
            break
        case .tracking:
            // Directional lock (Android ViewPager): along the axis past the
            // slop and twice the cross travel starts a drag; across the axis
            // past the slop first means "not a drag", for good.
            if along > slop, along > 2 * across {
                if target.isScrollable {
                    f.phase = .dragging
                    f.anchorAxis = a
                    intents.append(.dragBegan)
                } else {
                    f.phase = .rejected
                }
            } else if across > slop {
                f.phase = .rejected
            }
        case .dragging:
            intents.append(.dragMoved(translation: a - f.anchorAxis))
        case .rejected:
            break
        }
        owner = f
    }

    private mutating func lift(cancelled: Bool, at time: Timestamp, into intents: inout [GestureIntent]) {
        guard let f = owner else { return }
        owner = nil
        others.removeAll()
        if f.phase == .panning {
            var velocity = Point(x: 0, y: 0)
            if !cancelled {
                let panel = panels[f.device]
                let along = f.tracker.velocity(liftedAt: time, typicalInterval: panel?.cadence.typical,
                                               noise: panel?.noise.deviation)
                let across = f.crossTracker.velocity(liftedAt: time, typicalInterval: panel?.cadence.typical,
                                                     noise: panel?.noise.deviation)
                velocity = vertical ? Point(x: across, y: along) : Point(x: along, y: across)
            }
            intents.append(.panEnded(velocity: velocity))
            return
        }
        if f.phase == .dragging {
            // A cancel settles as if lifted with zero velocity.
            let panel = panels[f.device]
            let velocity = cancelled ? 0 : f.tracker.velocity(liftedAt: time, typicalInterval: panel?.cadence.typical,
                                                              noise: panel?.noise.deviation)
            let travel = abs(f.lastAxis - axis(f.downPoint))
            intents.append(.released(velocity: velocity, travel: travel, cancelled: cancelled))
            return
        }
        if f.phase == .tracking, !cancelled, !f.caught, !f.leftSlop, !f.longPressed,
           clock.seconds(since: f.downTime) < Self.tapTimeout {
            if f.secondTap {
                intents.append(.doubleTapped(at: f.downPoint))
            } else if doubleTap {
                pendingTap = PendingTap(point: f.downPoint, liftTime: clock)
            } else {
                intents.append(.tapped(at: f.downPoint))
            }
        }
        intents.append(.touchEnded)
    }
}
