import CarouselConfig
import CarouselCore

/// Runs a script on a virtual clock ticking at 60 Hz and writes one JSON
/// object a line: every model event, and the state at each `probe`.
///
/// Events keep their exact model times (a settle ends, an autoplay advance
/// starts, exactly when the model says); frames (ticks) only decide when
/// continuous motion is sampled for `didScroll`.
public struct SimulationRunner {
    public static let frameRate = 60

    /// What a `frame` step needs to draw: the model at that instant.
    public struct FrameRequest {
        public var path: String
        public var time: Timestamp
        /// The unwrapped offset (the renderer places wrapped copies itself).
        public var offset: Double
        public var snapshot: CarouselSnapshot
        public var model: Carousel
    }

    /// Runs `script` with `base` configuration; `emit` receives each output line.
    /// `diagnostic` receives refusals (e.g. a command while touched), meant for stderr.
    /// `frame` draws `frame` steps; it returns an error message, or `nil` when written.
    /// `itemCount` overrides the script's count (the images of a configured folder).
    public static func run(_ script: SimulationScript, base: Configuration = Configuration(),
                           itemCount: Int? = nil,
                           emit: (String) -> Void, diagnostic: (String) -> Void = { _ in },
                           frame: ((FrameRequest) -> String?)? = nil) {
        let config = script.configuration(base: base)
        var model = Carousel(settings: config.carousel, autoplay: config.autoplay,
                             viewport: script.viewport, count: itemCount ?? script.itemCount, at: .zero)
        let end = script.end
        var tick: Int64 = 1
        var stepIndex = 0
        var now = Timestamp.zero

        func write(_ events: [CarouselEvent]) {
            for e in events { emit(JSONLine.event(e)) }
        }

        while true {
            let tickTime = Timestamp(microseconds: (tick * 1_000_000 + Int64(frameRate / 2)) / Int64(frameRate))
            let stepTime = stepIndex < script.steps.count ? script.steps[stepIndex].time : nil
            let next = min(tickTime, stepTime ?? tickTime)
            // Steps at time 0 run before the first tick; nothing runs past `end`.
            if next > end {
                write(model.advance(to: end))
                break
            }
            now = next
            write(model.advance(to: now))
            if next == tickTime { tick += 1 }
            while stepIndex < script.steps.count, script.steps[stepIndex].time == now {
                let step = script.steps[stepIndex]
                stepIndex += 1
                switch step.action {
                case .touch(let input):
                    write(model.handle(input, at: now))
                case .command(let command):
                    switch model.perform(command, at: now) {
                    case .success(let events): write(events)
                    case .failure(let error): diagnostic("line \(step.line): at \(JSONLine.time(now)) ms: command refused: \(error)")
                    }
                case .probe:
                    emit(JSONLine.probe(model.snapshot(at: now), at: now))
                case .frame(let path):
                    let request = FrameRequest(path: path, time: now, offset: model.offset(at: now),
                                               snapshot: model.snapshot(at: now), model: model)
                    if let frame {
                        if let error = frame(request) { diagnostic("line \(step.line): \(error)") }
                    } else {
                        diagnostic("line \(step.line): frames are not drawn by this runner")
                    }
                }
            }
        }
    }
}

/// The JSON lines of `carouseld simulate`, written by hand: a few fixed
/// shapes, no dependency and a stable key order.
public enum JSONLine {
    public static func event(_ e: CarouselEvent) -> String {
        var s = "{\"t\":\(time(e.time)),\"event\":\"\(e.kind.name)\""
        switch e.kind {
        case .didScroll(let offset): s += ",\"offset\":\(number(offset))"
        case .didEndDragging(let willDecelerate): s += ",\"willDecelerate\":\(willDecelerate)"
        default: break
        }
        if let index = e.kind.index { s += ",\"index\":\(index)" }
        return s + "}"
    }

    public static func probe(_ p: CarouselSnapshot, at t: Timestamp) -> String {
        let reasons = p.autoplay.pausedBy.map { "\"\($0.rawValue)\"" }.joined(separator: ",")
        let next = p.autoplay.next.map(time) ?? "null"
        return "{\"t\":\(time(t)),\"probe\":{\"offset\":\(number(p.offset)),\"index\":\(p.index),\"page\":\(p.page),"
            + "\"state\":\"\(p.state.rawValue)\",\"autoplay\":{\"running\":\(p.autoplay.running),"
            + "\"paused_by\":[\(reasons)],\"next_ms\":\(next)}}}"
    }

    /// Milliseconds with up to three decimals (the model counts microseconds).
    public static func time(_ t: Timestamp) -> String {
        let us = t.microseconds
        let whole = us / 1000
        let frac = abs(us % 1000)
        if frac == 0 { return String(whole) }
        var digits = String(frac)
        while digits.count < 3 { digits = "0" + digits }
        while digits.hasSuffix("0") { digits.removeLast() }
        return (us < 0 && whole == 0 ? "-" : "") + "\(whole).\(digits)"
    }

    /// A JSON number: rounded to 1e-9 so that float noise (2.9999999999999996) reads as 3.
    public static func number(_ x: Double) -> String {
        guard x.isFinite else { return "null" }
        var r = (x * 1e9).rounded() / 1e9
        if r == 0 { r = 0 }  // no "-0.0"
        if r == r.rounded(), abs(r) < 1e15 { return String(Int64(r)) }
        return String(r)
    }
}
