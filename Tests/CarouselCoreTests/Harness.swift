import CarouselCore

/// A carousel on a manual clock that records every event: the tests' rig
/// (swift-nio's EmbeddedEventLoop.advanceTime is the idea).
struct Rig {
    var model: Carousel
    var now = Timestamp.zero
    var events: [CarouselEvent] = []
    /// The frame period used by `run(for:)`.
    var frame: Int64 = 16_667

    /// `zoom`: off unless a test is about zooming, so that paging tests see
    /// what they are about (other fingers ignored, a tap selecting at the lift).
    init(settings: CarouselSettings = CarouselSettings(), autoplay: AutoplaySettings = Rig.noAutoplay,
         viewport: Viewport = Viewport(width: 1000, height: 600), count: Int = 5, zoom: ZoomSettings = .disabled) {
        model = Carousel(settings: settings, autoplay: autoplay, viewport: viewport, count: count, zoom: zoom, at: .zero)
    }

    static var noAutoplay: AutoplaySettings {
        var a = AutoplaySettings()
        a.enabled = false
        return a
    }

    var offset: Double { model.displayOffset(model.offset(at: now)) }
    var snapshot: CarouselSnapshot { model.snapshot(at: now) }
    var names: [String] { events.map(\.kind.name) }
    /// Event names without the per-frame ones.
    var milestones: [String] { names.filter { $0 != "didScroll" } }

    mutating func at(_ ms: Double) {
        let t = Timestamp.milliseconds(ms)
        precondition(t >= now, "the rig's clock only goes forward")
        now = t
        events += model.advance(to: now)
    }

    /// Advances frame by frame for `ms` milliseconds, calling `each` after every frame.
    mutating func run(for ms: Double, each: (inout Rig) -> Void = { _ in }) {
        let end = now.adding(seconds: ms / 1000)
        while now < end {
            now = min(Timestamp(microseconds: now.microseconds + frame), end)
            events += model.advance(to: now)
            each(&self)
        }
    }

    /// Runs frames until the carousel rests (or `limit` ms pass).
    mutating func settle(limit ms: Double = 10_000) {
        let end = now.adding(seconds: ms / 1000)
        while model.isMoving, now < end {
            now = Timestamp(microseconds: now.microseconds + frame)
            events += model.advance(to: now)
        }
    }

    mutating func down(_ x: Double, _ y: Double, id: Int = 0) {
        events += model.handle(.down(id: id, at: Point(x: x, y: y)), at: now)
    }

    mutating func move(_ x: Double, _ y: Double, id: Int = 0) {
        events += model.handle(.move(id: id, to: Point(x: x, y: y)), at: now)
    }

    mutating func up(id: Int = 0) { events += model.handle(.up(id: id), at: now) }
    mutating func cancel(id: Int = 0) { events += model.handle(.cancel(id: id), at: now) }

    @discardableResult
    mutating func command(_ c: CarouselCommand) -> CommandError? {
        switch model.perform(c, at: now) {
        case .success(let e):
            events += e
            return nil
        case .failure(let error):
            return error
        }
    }

    /// A horizontal swipe from `x0` to `x1` at height `y` taking `ms`, with
    /// samples every `step` ms, then a lift (optionally after `hold` ms still).
    mutating func swipe(from x0: Double, to x1: Double, y: Double = 300, ms: Double, step: Double = 8, hold: Double = 0) {
        down(x0, y)
        let start = now.milliseconds
        var t = 0.0
        while t < ms {
            t = min(t + step, ms)
            at(start + t)
            move(x0 + (x1 - x0) * t / ms, y)
        }
        if hold > 0 { at(now.milliseconds + hold) }
        up()
    }

    /// The same as `swipe` along y, for vertical carousels.
    mutating func swipeVertical(from y0: Double, to y1: Double, x: Double = 300, ms: Double, step: Double = 8) {
        down(x, y0)
        let start = now.milliseconds
        var t = 0.0
        while t < ms {
            t = min(t + step, ms)
            at(start + t)
            move(x, y0 + (y1 - y0) * t / ms)
        }
        up()
    }

    func events(named name: String) -> [CarouselEvent] { events.filter { $0.kind.name == name } }
}

/// A small deterministic PRNG (SplitMix64) so that property tests replay.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
