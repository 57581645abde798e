import CarouselConfig
import CarouselCore
import CarouselPlatform

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
                             viewport: script.viewport, count: itemCount ?? script.itemCount, zoom: config.zoom, at: .zero)
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

/// The JSON lines of `carouseld simulate`: a few fixed shapes with a stable
/// key order (the time first), written with the one `JSONValue`.
public enum JSONLine {
    public static func event(_ e: CarouselEvent) -> String {
        var fields = [JSONField("t", .double(milliseconds(e.time))), JSONField("event", .string(e.kind.name))]
        switch e.kind {
        case .didScroll(let offset): fields.append(JSONField("offset", .double(offset)))
        case .didEndDragging(let willDecelerate): fields.append(JSONField("willDecelerate", .bool(willDecelerate)))
        case .didZoom(let scale), .didEndZooming(let scale): fields.append(JSONField("scale", .double(scale)))
        default: break
        }
        if let index = e.kind.index { fields.append(JSONField("index", .int(index))) }
        return JSONValue.fields(fields).encoded
    }

    public static func probe(_ p: CarouselSnapshot, at t: Timestamp) -> String {
        let autoplay: JSONValue = .fields([
            JSONField("running", .bool(p.autoplay.running)),
            JSONField("paused_by", .array(p.autoplay.pausedBy.map { .string($0.rawValue) })),
            JSONField("next_ms", p.autoplay.next.map { .double(milliseconds($0)) } ?? .null),
        ])
        var fields = [
            JSONField("offset", .double(p.offset)), JSONField("index", .int(p.index)), JSONField("page", .int(p.page)),
            JSONField("state", .string(p.state.rawValue)), JSONField("autoplay", autoplay),
        ]
        // Only while a picture is zoomed: probes of scripts without zoom read as they did.
        if p.zoom != 1 { fields.append(JSONField("zoom", .double(p.zoom))) }
        let probe: JSONValue = .fields(fields)
        return JSONValue.fields([JSONField("t", .double(milliseconds(t))), JSONField("probe", probe)]).encoded
    }

    /// The model's microseconds as milliseconds (up to three decimals).
    static func milliseconds(_ t: Timestamp) -> Double { Double(t.microseconds) / 1000 }

    /// Milliseconds with up to three decimals (the model counts microseconds).
    public static func time(_ t: Timestamp) -> String { JSONValue.number(milliseconds(t)) }

    /// A JSON number (`JSONValue.number`): float noise (2.9999999999999996) reads as 3.
    public static func number(_ x: Double) -> String { JSONValue.number(x) }
}
