import RealModule

/// Closed-form motions along the scroll axis, in content pixels
/// (`offset × pitch`). Each is a pure function of time since its start, so
/// the position at any instant is exact and independent of the frame rate.
public enum Physics {
    /// Settle spring for paging: stiffness 200 /s², critically damped (ω₀ ≈ 14.1 /s).
    public static let settleOmega = 200.0.squareRoot()
    /// Bounce-back spring: ω₀ = 10 /s, critically damped.
    public static let bounceOmega = 10.0
    /// Maximum speed a bounce-back starts with, px/s.
    public static let bounceMaxSpeed = 5_000.0
    /// A spring ends once within this distance (px) of its target…
    public static let restDistance = 0.5
    /// … and slower than this (px/s); momentum stops below this speed too.
    public static let restSpeed = 20.0
    /// Release speed (px/s) at or above which a paging release is a fling.
    public static let flingSpeed = 300.0
    /// UIScrollView's rubber-band coefficient.
    public static let rubberBand = 0.55
}

/// A critically damped spring toward `target`: d(t) = (A + Bt)·e^(−ωt), with
/// the physics in pixels (the thresholds are pixels) and positions in items.
struct SpringMotion: Equatable, Sendable {
    let start: Timestamp
    /// The offset it comes to rest on, exactly (items).
    let target: Double
    let pitch: Double
    let omega: Double
    let a: Double   // px
    let b: Double   // px/s
    /// When the spring is within 0.5 px and slower than 20 px/s: it then rests exactly on `target`.
    let end: Timestamp

    /// A spring from offset `from` moving at `velocity` px/s toward offset `target`.
    init(from: Double, velocity: Double, target: Double, pitch: Double, omega: Double, at start: Timestamp) {
        self.start = start
        self.target = target
        self.pitch = pitch
        self.omega = omega
        a = (from - target) * pitch
        b = velocity + omega * a
        // Scan forward in 1 ms steps for the first instant at rest: the curve
        // is not monotonic (it may overshoot once), so no closed form.
        var ms = 0
        while ms < 20_000 {
            let t = Double(ms) / 1000
            let e = Double.exp(-omega * t)
            let d = (a + b * t) * e
            let v = (b - omega * (a + b * t)) * e
            if abs(d) < Physics.restDistance && abs(v) < Physics.restSpeed { break }
            ms += 1
        }
        end = start.adding(seconds: Double(ms) / 1000)
    }

    func offset(at time: Timestamp) -> Double {
        if time >= end { return target }
        let t = max(0, time.seconds(since: start))
        return target + (a + b * t) * Double.exp(-omega * t) / pitch
    }

    /// Velocity in px/s.
    func velocity(at time: Timestamp) -> Double {
        if time >= end { return 0 }
        let t = max(0, time.seconds(since: start))
        return (b - omega * (a + b * t)) * Double.exp(-omega * t)
    }
}

/// Momentum with exponential decay: v(t) = v₀·rᵗ (t in ms), so
/// x(t) = x₀ + v₀/k·(1 − e^(−kt)) with k = −1000·ln r; it stops when slower
/// than 20 px/s. `end` is where it stops or where it reaches an edge of `range`.
struct MomentumMotion: Equatable, Sendable {
    let start: Timestamp
    let from: Double      // items
    let velocity: Double  // px/s
    let pitch: Double
    let k: Double
    let end: Timestamp
    /// The edge (items) it reaches before stopping, if any (no wrap).
    let hitsEdge: Double?

    init(from: Double, velocity: Double, pitch: Double, rate: Double, range: ClosedRange<Double>?, at start: Timestamp) {
        self.start = start
        self.from = from
        self.velocity = velocity
        self.pitch = pitch
        let r = min(max(rate, 0.5), 0.999_999)
        k = -1000 * Double.log(r)
        let speed = abs(velocity)
        let stopTime = speed > Physics.restSpeed ? Double.log(speed / Physics.restSpeed) / k : 0
        var endTime = stopTime
        var edge: Double? = nil
        if let range, velocity != 0 {
            let target = velocity > 0 ? range.upperBound : range.lowerBound
            // Solve x(t) = target: 1 − e^(−kt) = (target − x₀)·k / v₀.
            let fraction = (target - from) * pitch * k / velocity
            if fraction <= 0 {
                endTime = 0
                edge = target
            } else if fraction < 1 {
                let t = -Double.log(1 - fraction) / k
                if t < stopTime {
                    endTime = t
                    edge = target
                }
            }
        }
        hitsEdge = edge
        end = start.adding(seconds: endTime)
    }

    func offset(at time: Timestamp) -> Double {
        // At an edge, land on it exactly (the crossing instant is rounded to the µs).
        if time >= end, let edge = hitsEdge { return edge }
        let t = max(0, min(time, end).seconds(since: start))
        return from + velocity / k * (1 - Double.exp(-k * t)) / pitch
    }

    /// Velocity in px/s.
    func velocity(at time: Timestamp) -> Double {
        let t = max(0, min(time, end).seconds(since: start))
        return velocity * Double.exp(-k * t)
    }
}

/// A programmatic scroll with SwipeView's cubic ease-in-out.
struct EaseMotion: Equatable, Sendable {
    let start: Timestamp
    let from: Double     // offset, items
    let to: Double       // offset, items
    let end: Timestamp

    init(from: Double, to: Double, duration: Double, at start: Timestamp) {
        self.start = start
        self.from = from
        self.to = to
        end = start.adding(seconds: max(duration, 0))
    }

    static func ease(_ t: Double) -> Double {
        if t < 0.5 { return 4 * t * t * t }
        let u = 2 * t - 2
        return 0.5 * u * u * u + 1
    }

    func offset(at time: Timestamp) -> Double {
        if time >= end { return to }
        let duration = end.seconds(since: start)
        guard duration > 0 else { return to }
        let t = max(0, time.seconds(since: start)) / duration
        return from + (to - from) * Self.ease(t)
    }
}

/// A programmatic change shown as a crossfade: the offset stays at `from`
/// and then at `to` (switching half-way, where the incoming picture starts
/// to show more), while the incoming picture's weight follows SwipeView's
/// cubic ease-in-out from 0 to 1.
struct FadeMotion: Equatable, Sendable {
    let from: Double     // offset, items
    let to: Double       // offset, items
    /// The incoming picture's weight: the slide's ease from 0 to 1.
    private let weight: EaseMotion

    init(from: Double, to: Double, duration: Double, at start: Timestamp) {
        self.from = from
        self.to = to
        weight = EaseMotion(from: 0, to: 1, duration: duration, at: start)
    }

    var end: Timestamp { weight.end }

    /// How much of the incoming picture shows, 0 to 1.
    func fraction(at time: Timestamp) -> Double { weight.offset(at: time) }

    func offset(at time: Timestamp) -> Double { fraction(at: time) < 0.5 ? from : to }
}

/// Autoscroll: constant speed in items per second, stopping at the ends without wrap.
struct DriftMotion: Equatable, Sendable {
    let start: Timestamp
    let from: Double
    let speed: Double
    /// Where it stops without wrap (`nil`: it never stops).
    let stop: (offset: Double, time: Timestamp)?

    init(from: Double, speed: Double, range: ClosedRange<Double>?, at start: Timestamp) {
        self.start = start
        self.from = from
        self.speed = speed
        if let range, speed != 0 {
            let edge = speed > 0 ? range.upperBound : range.lowerBound
            let t = max(0, (edge - from) / speed)
            stop = (edge, start.adding(seconds: t))
        } else {
            stop = nil
        }
    }

    static func == (a: DriftMotion, b: DriftMotion) -> Bool {
        a.start == b.start && a.from == b.from && a.speed == b.speed
    }

    func offset(at time: Timestamp) -> Double {
        if let stop, time >= stop.time { return stop.offset }
        return from + speed * max(0, time.seconds(since: start))
    }
}

/// UIScrollView's rubber band: a drag of `overshoot` px past an end shows as
/// `(1 − 1/(overshoot·c/D + 1))·D`, with `D` the viewport extent.
enum RubberBand {
    static func shown(_ overshoot: Double, extent: Double) -> Double {
        let sign: Double = overshoot < 0 ? -1 : 1
        let o = abs(overshoot)
        return sign * (1 - 1 / (o * Physics.rubberBand / extent + 1)) * extent
    }

    /// The inverse of `shown`: the finger overshoot that shows as `shown`.
    static func raw(_ shown: Double, extent: Double) -> Double {
        let sign: Double = shown < 0 ? -1 : 1
        let y = min(abs(shown) / extent, 0.999_999)
        return sign * (1 / (1 - y) - 1) * extent / Physics.rubberBand
    }

    /// d(shown)/d(raw) at the raw overshoot `overshoot`: how much slower the
    /// content moves than the finger.
    static func slope(_ overshoot: Double, extent: Double) -> Double {
        let q = abs(overshoot) * Physics.rubberBand / extent + 1
        return Physics.rubberBand / (q * q)
    }
}
