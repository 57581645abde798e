import Testing
import CarouselCore

/// The gesture stage alone (no carousel): SPEC.md section 3 and the slop,
/// directional-lock, tap and long-press constants of section 7, on a manual
/// clock. Horizontal axis, 10 px slop unless a test says otherwise.
@Suite struct GestureStageTests {
    /// A gesture on a manual clock that records every intent.
    struct Stage {
        var gesture = Gesture(vertical: false, touchSlop: 10)
        var now = Timestamp.zero
        var intents: [GestureIntent] = []
        var target = TouchTarget(isCatchable: false, isScrollable: true)

        mutating func at(_ ms: Double) {
            now = .milliseconds(ms)
            intents += gesture.advance(to: now)
        }

        mutating func send(_ input: TouchInput) {
            intents += gesture.handle(input, at: now, target: target)
        }

        mutating func down(_ x: Double, _ y: Double, id: Int = 0) { send(.down(id: id, at: Point(x: x, y: y))) }
        mutating func move(_ x: Double, _ y: Double, id: Int = 0) { send(.move(id: id, to: Point(x: x, y: y))) }
        mutating func up(id: Int = 0) { send(.up(id: id)) }
        mutating func cancel(id: Int = 0) { send(.cancel(id: id)) }

        var drags: Bool { intents.contains(.dragBegan) }
        var taps: [GestureIntent] { intents.filter { if case .tapped = $0 { true } else { false } } }
        var releases: [GestureIntent] { intents.filter { if case .released = $0 { true } else { false } } }
    }

    @Test func aFingerInsideTheSlopIsNotADrag() {
        var s = Stage()
        s.down(500, 300)
        s.at(10); s.move(491, 300)              // 9 px
        s.at(20); s.move(510, 300)              // exactly the slop: not past it
        #expect(s.intents == [.touchBegan(at: Point(x: 500, y: 300))])
        #expect(!s.gesture.isDragging)
    }

    @Test func aDragStartsPastTheSlopAndMovesFromThere() {
        var s = Stage()
        s.down(500, 300)
        s.at(10); s.move(489, 300)              // 11 px: the drag starts here, no movement yet
        #expect(s.intents.last == .dragBegan)
        #expect(s.gesture.isDragging)
        s.at(20); s.move(389, 300)
        s.at(30); s.move(600, 300)
        #expect(Array(s.intents.suffix(2)) == [.dragMoved(translation: -100), .dragMoved(translation: 111)])
    }

    @Test func directionalLockNeedsTwiceTheCrossTravel() {
        var s = Stage()
        s.down(500, 300)
        s.at(10); s.move(488, 307)              // along 12 > slop, not > 2 × 7
        #expect(!s.drags)
        s.at(20); s.move(480, 307)              // along 20 > 14
        #expect(s.drags)
    }

    @Test func acrossTheAxisFirstIsNeverADragNorATap() {
        var s = Stage()
        s.down(500, 300)
        s.at(10); s.move(503, 312)              // across 12 > slop first
        s.at(20); s.move(100, 312)              // then far along: still no drag
        s.at(30); s.up()
        #expect(s.intents == [.touchBegan(at: Point(x: 500, y: 300)), .touchEnded])
    }

    @Test func verticalAxisLocksTheOtherWay() {
        var s = Stage()
        s.gesture = Gesture(vertical: true, touchSlop: 10)
        s.down(300, 500)
        s.at(10); s.move(320, 502)              // along x: across for a vertical carousel
        s.at(20); s.move(320, 300)
        #expect(!s.drags)
        s.at(30); s.up()

        var v = Stage()
        v.gesture = Gesture(vertical: true, touchSlop: 10)
        v.down(300, 500)
        v.at(10); v.move(302, 480)
        v.at(20); v.move(302, 430)
        #expect(Array(v.intents.suffix(2)) == [.dragBegan, .dragMoved(translation: -50)])
    }

    @Test func aTargetThatDoesNotScrollRejectsTheDrag() {
        var s = Stage()
        s.target.isScrollable = false
        s.down(500, 300)
        s.at(10); s.move(400, 300)
        s.target.isScrollable = true            // too late: the gesture was decided
        s.at(20); s.move(300, 300)
        s.at(30); s.up()
        #expect(s.intents == [.touchBegan(at: Point(x: 500, y: 300)), .touchEnded])
    }

    @Test func theSlopIsConfigurable() {
        var s = Stage()
        s.gesture.touchSlop = 30
        s.down(500, 300)
        s.at(10); s.move(475, 300)
        #expect(!s.drags)
        s.at(20); s.move(469, 300)
        #expect(s.drags)
    }

    @Test func aQuickLiftInsideTheSlopIsATap() {
        var s = Stage()
        s.down(420, 250)
        s.at(100); s.move(425, 253)
        s.at(499); s.up()
        #expect(s.intents == [.touchBegan(at: Point(x: 420, y: 250)), .tapped(at: Point(x: 420, y: 250)),
                              .touchEnded])
    }

    @Test func aLiftAfterLeavingTheSlopIsNotATap() {
        var s = Stage()
        s.down(500, 300)
        s.at(20); s.move(508, 308)              // √128 > 10: left the slop, neither axis past it
        s.at(40); s.move(500, 300)              // and back
        s.at(60); s.up()
        #expect(s.taps.isEmpty)
        #expect(s.intents.last == .touchEnded)
    }

    @Test func longPressFiresExactlyAtTheDeadlineAndIsNotATap() {
        var s = Stage()
        s.down(400, 300)
        #expect(s.gesture.nextDeadline == .milliseconds(500))
        s.at(499.999)
        #expect(s.intents == [.touchBegan(at: Point(x: 400, y: 300))])
        s.at(500)
        #expect(s.intents.last == .longPressed(at: Point(x: 400, y: 300)))
        #expect(s.gesture.nextDeadline == nil)
        s.at(700); s.up()
        #expect(s.taps.isEmpty)
        #expect(s.intents.last == .touchEnded)
    }

    @Test func longPressFiresFromInputAfterTheDeadlineToo() {
        // No advance in between: the next input brings the deadline first.
        var s = Stage()
        s.down(400, 300)
        s.now = .milliseconds(600)
        s.up()
        #expect(s.intents == [.touchBegan(at: Point(x: 400, y: 300)), .longPressed(at: Point(x: 400, y: 300)),
                              .touchEnded])
    }

    @Test func noLongPressAfterLeavingTheSlop() {
        var s = Stage()
        s.down(400, 300)
        s.at(200); s.move(400, 315)             // across past the slop
        #expect(s.gesture.nextDeadline == nil)
        s.at(200); s.move(400, 300)             // back inside: the deadline does not come back
        s.at(1000)
        #expect(!s.intents.contains(.longPressed(at: Point(x: 400, y: 300))))
        #expect(s.gesture.nextDeadline == nil)
    }

    @Test func aSecondFingerIsIgnored() {
        var s = Stage()
        s.down(500, 300, id: 1)
        s.at(10); s.down(200, 300, id: 2)
        s.at(20); s.move(100, 300, id: 2)
        s.at(30); s.up(id: 2)
        #expect(s.intents == [.touchBegan(at: Point(x: 500, y: 300))])
        #expect(s.gesture.ownerID == 1)
        // The first finger still drives: it drags and releases.
        s.at(40); s.move(480, 300, id: 1)
        s.at(50); s.move(460, 300, id: 1)
        s.at(60); s.up(id: 1)
        #expect(s.releases.count == 1)
        #expect(!s.gesture.isTouching)
        // Once the owner lifted, the next finger down owns the next gesture.
        s.at(100); s.down(300, 300, id: 2)
        #expect(s.gesture.ownerID == 2)
    }

    @Test func cancelReleasesWithZeroVelocityAndIsNeverATap() {
        var s = Stage()
        s.down(800, 300)
        var t = 0.0
        for x in stride(from: 780.0, through: 500, by: -20) {   // 2500 px/s
            t += 8
            s.at(t); s.move(x, 300)
        }
        s.cancel()
        #expect(s.intents.last == .released(velocity: 0, travel: 300, cancelled: true))

        var tap = Stage()
        tap.down(400, 300)
        tap.at(50); tap.cancel()
        #expect(tap.intents == [.touchBegan(at: Point(x: 400, y: 300)), .touchEnded])
    }

    @Test func aLiftReportsTheFingersVelocityAndTravel() {
        var s = Stage()
        s.down(800, 300)
        var t = 0.0
        for x in stride(from: 780.0, through: 500, by: -20) {   // 20 px per 8 ms = 2500 px/s leftwards
            t += 8
            s.at(t); s.move(x, 300)
        }
        s.up()
        guard case .released(let velocity, let travel, let cancelled)? = s.intents.last else {
            Issue.record("expected a release, got \(s.intents)")
            return
        }
        #expect(abs(velocity - -2500) < 1)
        #expect(travel == 300)
        #expect(!cancelled)
    }

    @Test func aCaughtTouchIsNeverATapNorALongPress() {
        var s = Stage()
        s.target.isCatchable = true
        s.down(400, 300)
        #expect(s.gesture.nextDeadline == nil)
        s.at(100); s.up()
        #expect(s.intents == [.touchBegan(at: Point(x: 400, y: 300)), .touchEnded])

        var held = Stage()
        held.target.isCatchable = true
        held.down(400, 300)
        held.at(2000); held.up()
        #expect(held.intents == [.touchBegan(at: Point(x: 400, y: 300)), .touchEnded])
    }

    @Test func aLiftAtTheTimeoutIsNotATap() {
        // Inside the slop but after the tap timeout: the long press took it.
        var s = Stage()
        s.down(400, 300)
        s.at(500); s.up()
        #expect(s.taps.isEmpty)
    }

    @Test func resetForgetsTheFingerUntilItLifts() {
        var s = Stage()
        s.down(500, 300)
        s.at(10); s.move(480, 300)
        s.gesture.reset()
        #expect(!s.gesture.isTouching)
        s.at(20); s.move(300, 300)
        s.at(30); s.up()
        #expect(s.intents == [.touchBegan(at: Point(x: 500, y: 300)), .dragBegan])
        #expect(s.gesture.nextDeadline == nil)
    }

    @Test func theClockNeverGoesBack() {
        var s = Stage()
        s.at(1000)
        // An input stamped before the clock: the long press counts from the clock.
        s.now = .milliseconds(990)
        s.down(400, 300)
        #expect(s.gesture.nextDeadline == .milliseconds(1500))
    }
}
