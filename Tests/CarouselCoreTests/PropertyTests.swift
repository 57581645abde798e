import Foundation
import Testing
import CarouselCore

/// Properties over thousands of random configurations and gesture sequences
/// (seeded, so a failure replays): the invariants of SPEC.md that must hold
/// whatever a finger does.
@Suite struct PropertyTests {
    static let sequences = 4_000

    struct Violation: CustomStringConvertible {
        var seed: UInt64
        var what: String
        var description: String { "seed \(seed): \(what)" }
    }

    /// A random configuration. Autoscroll stays off: a drifting carousel is
    /// never "at rest", which is what several properties are about.
    static func randomConfiguration(_ rng: inout SplitMix64) -> (CarouselSettings, AutoplaySettings, Viewport, Int) {
        var s = CarouselSettings()
        s.wrap = Bool.random(using: &rng)
        s.vertical = Int.random(in: 0..<4, using: &rng) == 0
        s.paging = Int.random(in: 0..<4, using: &rng) != 0
        s.itemsPerPage = [1, 1, 1, 2, 3].randomElement(using: &rng)!
        s.truncateFinalPage = Bool.random(using: &rng)
        s.alignment = Bool.random(using: &rng) ? .center : .edge
        s.itemSize = Bool.random(using: &rng) ? .fraction(Double.random(in: 0.3...1, using: &rng))
                                               : .pixels(Double.random(in: 150...900, using: &rng))
        s.spacing = Bool.random(using: &rng) ? 0 : Double.random(in: 0...60, using: &rng)
        s.bounces = Int.random(in: 0..<4, using: &rng) != 0
        s.scrollEnabled = Int.random(in: 0..<8, using: &rng) != 0
        s.decelerationRate = Bool.random(using: &rng) ? 0.998 : 0.99
        var a = AutoplaySettings()
        a.enabled = Int.random(in: 0..<4, using: &rng) != 0
        a.interval = Double.random(in: 0.3...3, using: &rng)
        a.transition = Double.random(in: 0.2...0.8, using: &rng)
        a.resumeDelay = Double.random(in: 0...2.5, using: &rng)
        a.startDelay = Bool.random(using: &rng) ? nil : Double.random(in: 0...2, using: &rng)
        a.direction = Bool.random(using: &rng) ? .forward : .backward
        a.atEnd = Bool.random(using: &rng) ? .rewind : .stop
        let count = [0, 1, 2, 3, 5, 8, 12].randomElement(using: &rng)!
        s.startIndex = count > 0 ? Int.random(in: 0..<count, using: &rng) : 0
        let viewport = Bool.random(using: &rng) ? Viewport(width: 1280, height: 800) : Viewport(width: 800, height: 1280)
        return (s, a, viewport, count)
    }

    /// Plays one random sequence and returns the first violated property.
    static func play(seed: UInt64, trace: ((String) -> Void)? = nil) -> Violation? {
        var rng = SplitMix64(seed: seed)
        let (settings, autoplay, viewport, count) = randomConfiguration(&rng)
        // Zoom off: these are paging's invariants, with a second finger
        // ignored (ZoomPropertyTests plays two fingers with zoom on).
        var model = Carousel(settings: settings, autoplay: autoplay, viewport: viewport, count: count,
                             zoom: .disabled, at: .zero)
        let geometry = model.geometry
        let lattice = model.lattice
        let pitch = geometry.pitch
        let n = Double(count)
        var now = Timestamp.zero
        var fingerDown = false
        var dragging = false
        var decelerating = false
        var lastEventTime = Timestamp.zero
        var lastDisplay = model.displayOffset(model.offset(at: now))
        var lastFingerAxis = 0.0
        var interactionPending = false
        var restTime = Timestamp.zero
        var wasMoving = model.isMoving
        var expectedAdvance: Timestamp? = nil
        // The fastest the carousel may move by itself, items/s: a spring from
        // the clamped release speed and at most two pages away, or an eased scroll.
        let reach = Double(2 * settings.itemsPerPage + 1)
        // An eased scroll goes the shortest way round with wrap: at most half the items.
        let farthest = settings.wrap ? n / 2 + reach : n + reach
        let maxSpeed = (8_000 + 2 * Physics.settleOmega * reach * pitch) / pitch + 3 * farthest / autoplay.transition
        /// Where the content was at a paging release, its velocity then
        /// (items/s) and the finger's travel (px): checked when it rests.
        var release: (x: Double, velocity: Double, travel: Double)? = nil
        func fail(_ what: String) -> Violation { Violation(seed: seed, what: what) }

        /// Checks the events of one step; returns a violation if any.
        func check(_ events: [CarouselEvent]) -> Violation? {
            for e in events {
                if e.kind.name != "didScroll" { trace?("\(e.time) \(e.kind)") }
                if e.time < lastEventTime || e.time > now { return fail("event \(e.kind) at \(e.time) out of time order") }
                lastEventTime = e.time
                switch e.kind {
                case .willBeginDragging:
                    if dragging || !fingerDown { return fail("willBeginDragging without a finger or twice") }
                    dragging = true
                case .didEndDragging(let willDecelerate):
                    if !dragging { return fail("didEndDragging without willBeginDragging") }
                    dragging = false
                    if willDecelerate { decelerating = true }
                case .willBeginDecelerating:
                    if !decelerating { return fail("willBeginDecelerating not right after didEndDragging(true)") }
                case .didEndDecelerating:
                    if !decelerating { return fail("didEndDecelerating without willBeginDecelerating") }
                    decelerating = false
                case .currentItemIndexDidChange(let i), .didSelectItem(let i), .longPress(let i):
                    if !(0..<max(count, 1)).contains(i) { return fail("index \(i) out of range for \(count) items") }
                default:
                    break
                }
            }
            return nil
        }

        /// Checks the state after a step that took `dt` seconds, or moved the finger by `fingerDelta` px.
        func checkState(dt: Double, fingerDelta: Double?) -> Violation? {
            let snap = model.snapshot(at: now)
            if count > 0 {
                if !(0..<count).contains(snap.index) { return fail("index \(snap.index) out of 0..<\(count)") }
                if !(0..<lattice.pageCount).contains(snap.page) { return fail("page \(snap.page) out of range") }
            }
            // Continuity of what is drawn: the displayed offset moves (modulo
            // the item count with wrap) by no more than the motion itself.
            var change = snap.offset - lastDisplay
            if settings.wrap, count > 0 {
                change = change.truncatingRemainder(dividingBy: n)
                if change > n / 2 { change -= n } else if change < -n / 2 { change += n }
            }
            let allowed = fingerDelta.map { abs($0) / pitch } ?? (maxSpeed * dt + Physics.restDistance / pitch)
            if abs(change) > allowed + 1e-9 {
                return fail("the picture jumped by \(change) items (allowed \(allowed)) at \(now), state \(snap.state)")
            }
            lastDisplay = snap.offset
            if fingerDown {
                if snap.autoplay.next != nil { return fail("autoplay scheduled while a finger is down") }
                if snap.autoplay.running { return fail("autoplay running while a finger is down") }
            }
            // Coming to rest with no finger down.
            let moving = model.isMoving
            if wasMoving, !moving, !fingerDown {
                restTime = lastEventTime
            }
            if !moving, !fingerDown, count > 0, wasMoving || interactionPending {
                let x = snap.offset
                if settings.paging {
                    let page = lattice.nearestPage(to: x)
                    if model.displayOffset(lattice.offset(ofPage: page)) != x {
                        return fail("at rest at \(x), not on a page (nearest \(lattice.offset(ofPage: page)))")
                    }
                }
                if let range = lattice.range, !range.contains(x) { return fail("at rest at \(x), outside \(range)") }
                if let r = release, lattice.range?.contains(r.x) != false {
                    // SPEC 3 and 7: decided from the position at the lift, never
                    // more than one page past it, never against a fling.
                    var moved = model.offset(at: now) - r.x
                    if settings.wrap {
                        // At rest the offset is back within one cycle: the way
                        // it went is the short way round (a page at most, below).
                        moved = moved.truncatingRemainder(dividingBy: n)
                        if moved > n / 2 { moved -= n } else if moved < -n / 2 { moved += n }
                    }
                    if abs(moved) > Double(settings.itemsPerPage) + 1e-9 {
                        return fail("the settle travelled \(moved) items from the lift at \(r.x), more than a page")
                    }
                    let fling = abs(r.velocity) * pitch >= Physics.flingSpeed && r.travel >= settings.touchSlop
                    // With fewer than four pages' items a page back and one on look alike.
                    let unambiguous = !settings.wrap || n >= Double(4 * settings.itemsPerPage)
                    if fling, unambiguous, moved * r.velocity < -1e-9 {
                        return fail("a fling at \(r.velocity) items/s from \(r.x) settled \(moved) items against it")
                    }
                }
                release = nil
                let stoppedAtEnd = !settings.wrap && autoplay.atEnd == .stop
                    && lattice.nearestPage(to: model.offset(at: now)) == (autoplay.direction == .forward ? lattice.pageCount - 1 : 0)
                if interactionPending, snap.autoplay.running, stoppedAtEnd, snap.autoplay.next != nil {
                    return fail("stopped at the end, yet an advance is scheduled at \(snap.autoplay.next!)")
                }
                if interactionPending, snap.autoplay.running, lattice.pageCount > 1, !stoppedAtEnd {
                    let expected = restTime.adding(seconds: autoplay.resumeDelay)
                    if snap.autoplay.next != expected {
                        return fail("after an interaction the next advance is \(String(describing: snap.autoplay.next)), expected rest \(restTime) + resume_delay = \(expected)")
                    }
                    expectedAdvance = expected
                }
                interactionPending = false
            }
            wasMoving = moving
            return nil
        }

        /// Runs frames until `end`, checking every frame.
        func runFrames(until end: Timestamp) -> Violation? {
            while now < end {
                // Stop at each of the model's deadlines too, so that every rest
                // is seen before an automatic advance can follow it.
                var next = min(Timestamp(microseconds: now.microseconds + 16_667), end)
                if let deadline = model.nextDeadline, deadline > now { next = min(next, deadline) }
                let dt = next.seconds(since: now)
                // Sample just after a scheduled advance to see it start.
                if let advance = expectedAdvance, advance > now, advance < next {
                    now = advance.adding(seconds: 0.000_001)
                    if let v = check(model.advance(to: now)) { return v }
                    if model.motionState != .animating, !fingerDown, lattice.pageCount > 1 {
                        return fail("the automatic advance due at \(advance) did not start")
                    }
                    expectedAdvance = nil
                    if let v = checkState(dt: advance.seconds(since: next) + dt, fingerDelta: nil) { return v }
                    continue
                }
                // Within a frame, the motion itself is smooth: sample it finely
                // (a pure read) so that a jump cannot hide in a loose bound.
                var previous = model.displayOffset(model.offset(at: now))
                for k in 1...8 {
                    let t = Timestamp(microseconds: now.microseconds + (next.microseconds - now.microseconds) * Int64(k) / 8)
                    let x = model.displayOffset(model.offset(at: t))
                    var d = x - previous
                    if settings.wrap, count > 0 {
                        d = d.truncatingRemainder(dividingBy: n)
                        if d > n / 2 { d -= n } else if d < -n / 2 { d += n }
                    }
                    if abs(d) > maxSpeed * dt / 8 + 1e-9 { return fail("the motion jumped by \(d) items within a frame at \(t)") }
                    previous = x
                }
                now = next
                if let v = check(model.advance(to: now)) { return v }
                if let v = checkState(dt: dt, fingerDelta: nil) { return v }
            }
            return nil
        }

        let axisExtent = geometry.axisExtent
        let gestures = Int.random(in: 1...6, using: &rng)
        for _ in 0..<gestures {
            if let v = runFrames(until: now.adding(seconds: Double.random(in: 0...2.5, using: &rng))) { return v }
            // Sometimes a command instead of a touch.
            if Int.random(in: 0..<5, using: &rng) == 0 {
                let commands: [CarouselCommand] = [.next, .previous, .pause, .resume, .first, .last,
                                                   .goto(index: Int.random(in: 0..<max(count, 1), using: &rng), duration: nil)]
                let c = commands.randomElement(using: &rng)!
                expectedAdvance = nil
                release = nil
                trace?("\(now) command \(c)")
                if case .success(let e) = model.perform(c, at: now) {
                    if let v = check(e) { return v }
                    if c != .pause, c != .resume {
                        interactionPending = true
                        restTime = now
                    }
                }
                if let v = checkState(dt: 0, fingerDelta: nil) { return v }
                continue
            }
            var along = Double.random(in: 0..<axisExtent, using: &rng)
            var across = Double.random(in: 0..<(settings.vertical ? viewport.width : viewport.height), using: &rng)
            func point() -> Point { settings.vertical ? Point(x: across, y: along) : Point(x: along, y: across) }
            fingerDown = true
            expectedAdvance = nil
            release = nil
            lastFingerAxis = along
            let downAxis = along
            trace?("\(now) down \(point()) state \(model.motionState)")
            if let v = check(model.handle(.down(id: 0, at: point()), at: now)) { return v }
            if let v = checkState(dt: 0, fingerDelta: 0) { return v }
            let moves = Int.random(in: 0...25, using: &rng)
            let speed = Double.random(in: -6_000...6_000, using: &rng)   // px/s along the axis
            for _ in 0..<moves {
                let dt = Double.random(in: 0.004...0.06, using: &rng)
                now = now.adding(seconds: dt)
                along += speed * dt + Double.random(in: -5...5, using: &rng)
                across += Double.random(in: -4...4, using: &rng) * (Int.random(in: 0..<6, using: &rng) == 0 ? 8 : 1)
                // Deadlines (a long press) pass before the move.
                if let v = check(model.advance(to: now)) { return v }
                if let v = checkState(dt: dt, fingerDelta: nil) { return v }
                if let v = check(model.handle(.move(id: 0, to: point()), at: now)) { return v }
                if let v = checkState(dt: 0, fingerDelta: along - lastFingerAxis) { return v }
                lastFingerAxis = along
                // A second finger now and then: ignored.
                if Int.random(in: 0..<10, using: &rng) == 0 {
                    if let v = check(model.handle(.down(id: 1, at: Point(x: 5, y: 5)), at: now)) { return v }
                    if let v = check(model.handle(.move(id: 1, to: Point(x: 500, y: 5)), at: now)) { return v }
                    if let v = check(model.handle(.up(id: 1), at: now)) { return v }
                    if let v = checkState(dt: 0, fingerDelta: 0) { return v }
                }
            }
            if Int.random(in: 0..<3, using: &rng) == 0 {
                // Hold still a moment before lifting.
                if let v = runFrames(until: now.adding(seconds: Double.random(in: 0...0.3, using: &rng))) { return v }
            }
            let lift: TouchInput = Int.random(in: 0..<8, using: &rng) == 0 ? .cancel(id: 0) : .up(id: 0)
            trace?("\(now) \(lift) state \(model.motionState)")
            fingerDown = false
            interactionPending = true
            restTime = now
            wasMoving = false
            let wasDragging = dragging
            if let v = check(model.handle(lift, at: now)) { return v }
            if settings.paging, wasDragging, lift == .up(id: 0) {
                // The settle starts at the release velocity: read it off the motion.
                let x = model.offset(at: now)
                let velocity = (model.offset(at: now.adding(seconds: 0.000_01)) - x) / 0.000_01
                release = (x, velocity, abs(lastFingerAxis - downAxis))
            }
            if dragging { return fail("still dragging after the lift") }
            // A release within 0.5 px of the page rests on it at once (the settle's snap).
            if let v = checkState(dt: 0, fingerDelta: nil) { return v }
        }
        // Left alone: it comes to rest (on a page, in range: checked at rest).
        if let v = runFrames(until: now.adding(seconds: 5)) { return v }
        if decelerating, !model.isDecelerating { return fail("willBeginDecelerating never ended") }
        return nil
    }

    /// Replays one seed with a trace, and fails if it breaks an invariant
    /// (set CAROUSEL_SEED to run it; skipped otherwise, not counted as passed).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["CAROUSEL_SEED"] != nil, "set CAROUSEL_SEED to replay a seed"))
    func replay() throws {
        let text = try #require(ProcessInfo.processInfo.environment["CAROUSEL_SEED"])
        let seed = try #require(UInt64(text), "CAROUSEL_SEED must be a number, got '\(text)'")
        var rng = SplitMix64(seed: seed)
        print(Self.randomConfiguration(&rng))
        let v = Self.play(seed: seed, trace: { print($0) })
        #expect(v == nil, "seed \(seed): \(v.map(\.description) ?? "")")
    }

    @Test(arguments: 0..<4)
    func randomGestureSequencesKeepEveryInvariant(shard: Int) {
        var failures: [Violation] = []
        for i in 0..<(Self.sequences / 4) {
            let seed = UInt64(shard * 1_000_000 + i) &* 0x9E37_79B9
            if let v = Self.play(seed: seed) {
                failures.append(v)
                if failures.count >= 3 { break }
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }
}
