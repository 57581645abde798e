import Testing
import CarouselCore
import CarouselSimulation

/// The output format of `carouseld simulate`, line by line.
@Suite struct JSONLineTests {
    @Test func timesAreMillisecondsWithUpToThreeDecimals() {
        #expect(JSONLine.time(.zero) == "0")
        #expect(JSONLine.time(.milliseconds(1500)) == "1500")
        #expect(JSONLine.time(Timestamp(microseconds: 16_667)) == "16.667")
        #expect(JSONLine.time(Timestamp(microseconds: 1_000_050)) == "1000.05")
    }

    @Test func numbersLoseFloatNoiseButKeepPrecision() {
        #expect(JSONLine.number(2.9999999999999996) == "3")
        #expect(JSONLine.number(-0.0) == "0")
        #expect(JSONLine.number(0.5) == "0.5")
        #expect(JSONLine.number(1.234567891) == "1.234567891")
        #expect(JSONLine.number(.nan) == "null")
    }

    @Test func eventShapes() {
        let t = Timestamp.milliseconds(10)
        #expect(JSONLine.event(CarouselEvent(time: t, kind: .willBeginDragging)) == #"{"t":10,"event":"willBeginDragging"}"#)
        #expect(JSONLine.event(CarouselEvent(time: t, kind: .currentItemIndexDidChange(index: 3)))
            == #"{"t":10,"event":"currentItemIndexDidChange","index":3}"#)
        #expect(JSONLine.event(CarouselEvent(time: t, kind: .didEndDragging(willDecelerate: false)))
            == #"{"t":10,"event":"didEndDragging","willDecelerate":false}"#)
        #expect(JSONLine.event(CarouselEvent(time: t, kind: .didScroll(offset: 0.25)))
            == #"{"t":10,"event":"didScroll","offset":0.25}"#)
        #expect(JSONLine.event(CarouselEvent(time: t, kind: .didSelectItem(index: 0))) == #"{"t":10,"event":"didSelectItem","index":0}"#)
        #expect(JSONLine.event(CarouselEvent(time: t, kind: .longPress(index: 4))) == #"{"t":10,"event":"longPress","index":4}"#)
    }

    @Test func probeShape() {
        let snap = CarouselSnapshot(offset: 1.5, index: 2, page: 2, state: .animating,
                                    autoplay: AutoplayStatus(enabled: true, running: false, pausedBy: [.touch, .noImages], next: nil))
        #expect(JSONLine.probe(snap, at: .milliseconds(3))
            == #"{"t":3,"probe":{"offset":1.5,"index":2,"page":2,"state":"animating","autoplay":{"running":false,"paused_by":["touch","no_images"],"next_ms":null}}}"#)
        let running = CarouselSnapshot(offset: 0, index: 0, page: 0, state: .idle,
                                       autoplay: AutoplayStatus(enabled: true, running: true, pausedBy: [], next: .milliseconds(3000)))
        #expect(JSONLine.probe(running, at: .zero)
            == #"{"t":0,"probe":{"offset":0,"index":0,"page":0,"state":"idle","autoplay":{"running":true,"paused_by":[],"next_ms":3000}}}"#)
    }
}

@Suite struct UntilPlacementTests {
    @Test func untilMayComeBeforeStepsItCovers() throws {
        let script = try SimulationScript.parse("until 3000\nat 3000 probe\n")
        #expect(script.end == .milliseconds(3000))
        #expect(script.steps.count == 1)
    }

    @Test func stepsPastUntilOrASecondUntilAreErrors() {
        #expect(throws: ScriptError(line: 2, message: "time 3001 ms is after 'until 3000.0': it would never run")) {
            try SimulationScript.parse("until 3000\nat 3001 probe\n")
        }
        #expect(throws: ScriptError(line: 2, message: "'until' is given twice")) {
            try SimulationScript.parse("until 3000\nuntil 4000\n")
        }
    }
}
