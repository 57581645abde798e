// Helpers for black-box tests of `carouseld simulate`.
//
// Everything here goes through the public surface only: a script text in,
// JSON lines out (SimulationScript.parse + SimulationRunner.run), parsed
// with JSONSerialization. Expected values come from SPEC.md sections 2-4
// and 7 and from the `simulate` contract, never from the implementation.

import CarouselConfig
import CarouselSimulation
import Foundation
import Testing

// MARK: - Output model

let allEventNames: Set<String> = [
    "didScroll", "currentItemIndexDidChange", "willBeginDragging", "didEndDragging",
    "willBeginDecelerating", "didEndDecelerating", "didEndScrollingAnimation",
    "didSelectItem", "longPress", "didZoom", "didEndZooming",
]
let indexedEventNames: Set<String> = ["currentItemIndexDidChange", "didSelectItem", "longPress"]
let allStates: Set<String> = ["idle", "tracking", "dragging", "decelerating", "settling", "animating"]
let allPauseSources: Set<String> = ["touch", "command", "zoom", "no_images", "autoscroll"]

struct Probe {
    var t: Double
    var offset: Double
    var index: Int
    var page: Int
    var state: String
    var running: Bool
    var pausedBy: [String]
    var nextMs: Double?
    /// The zoomed picture's scale: 1 when the probe has no "zoom" (nothing zoomed).
    var zoom: Double = 1
}

struct OutLine {
    var t: Double
    var event: String?
    var index: Int?
    var offset: Double?
    var willDecelerate: Bool?
    var scale: Double?
    var probe: Probe?
    var raw: String
}

struct SimOutput {
    var lines: [OutLine]
    var diagnostics: [String]

    var events: [OutLine] { lines.filter { $0.event != nil } }
    /// Every event except `didScroll`, for order checks.
    var discrete: [OutLine] { lines.filter { $0.event != nil && $0.event != "didScroll" } }
    var discreteNames: [String] { discrete.map { $0.event! } }
    func events(_ name: String) -> [OutLine] { lines.filter { $0.event == name } }
    func first(_ name: String) -> OutLine? { lines.first { $0.event == name } }
    func last(_ name: String) -> OutLine? { lines.last { $0.event == name } }
    var probes: [Probe] { lines.compactMap(\.probe) }
    /// The probe printed at time `t` (ms).
    func probe(_ t: Double) -> Probe? { probes.first { abs($0.t - t) < 1e-6 } }
    var text: String { lines.map(\.raw).joined(separator: "\n") }
}

/// Parses one output line strictly against the contract's shape.
func parseLine(_ raw: String, sourceLocation: SourceLocation) -> OutLine? {
    guard let obj = (try? JSONSerialization.jsonObject(with: Data(raw.utf8))) as? [String: Any] else {
        Issue.record("output line is not a JSON object: \(raw)", sourceLocation: sourceLocation)
        return nil
    }
    guard let t = (obj["t"] as? NSNumber)?.doubleValue else {
        Issue.record("output line has no numeric \"t\": \(raw)", sourceLocation: sourceLocation)
        return nil
    }
    var line = OutLine(t: t, raw: raw)
    if let name = obj["event"] as? String {
        #expect(obj["probe"] == nil, "line has both event and probe: \(raw)", sourceLocation: sourceLocation)
        #expect(allEventNames.contains(name), "unknown event name: \(raw)", sourceLocation: sourceLocation)
        line.event = name
        if let i = obj["index"] as? NSNumber { line.index = i.intValue }
        if let o = obj["offset"] as? NSNumber { line.offset = o.doubleValue }
        if let w = obj["willDecelerate"] as? Bool { line.willDecelerate = w }
        if let z = obj["scale"] as? NSNumber { line.scale = z.doubleValue }
        if name == "didZoom" || name == "didEndZooming" {
            #expect(line.scale != nil, "\(name) without \"scale\": \(raw)", sourceLocation: sourceLocation)
        }
        if indexedEventNames.contains(name) {
            #expect(line.index != nil, "\(name) without an integer \"index\": \(raw)", sourceLocation: sourceLocation)
        }
        if name == "didScroll" {
            #expect(line.offset != nil, "didScroll without \"offset\": \(raw)", sourceLocation: sourceLocation)
        }
        if name == "didEndDragging" {
            #expect(line.willDecelerate != nil, "didEndDragging without bool \"willDecelerate\": \(raw)",
                    sourceLocation: sourceLocation)
        }
    } else if let p = obj["probe"] as? [String: Any] {
        guard let offset = (p["offset"] as? NSNumber)?.doubleValue,
              let index = (p["index"] as? NSNumber)?.intValue,
              let page = (p["page"] as? NSNumber)?.intValue,
              let state = p["state"] as? String,
              let auto = p["autoplay"] as? [String: Any],
              let running = auto["running"] as? Bool,
              let pausedBy = auto["paused_by"] as? [String],
              let nextRaw = auto["next_ms"]
        else {
            Issue.record("probe line does not have the contract's fields: \(raw)", sourceLocation: sourceLocation)
            return nil
        }
        #expect(allStates.contains(state), "unknown state: \(raw)", sourceLocation: sourceLocation)
        for s in pausedBy {
            #expect(allPauseSources.contains(s), "unknown paused_by value \(s): \(raw)", sourceLocation: sourceLocation)
        }
        var next: Double? = nil
        if let n = nextRaw as? NSNumber {
            next = n.doubleValue
        } else {
            #expect(nextRaw is NSNull, "next_ms is neither a number nor null: \(raw)", sourceLocation: sourceLocation)
        }
        line.probe = Probe(t: t, offset: offset, index: index, page: page, state: state, running: running,
                           pausedBy: pausedBy, nextMs: next, zoom: (p["zoom"] as? NSNumber)?.doubleValue ?? 1)
    } else {
        Issue.record("line is neither an event nor a probe: \(raw)", sourceLocation: sourceLocation)
        return nil
    }
    return line
}

/// Runs `script` through the public API and checks the general output rules
/// (one JSON object a line, time order, offsets wrapped into [0, count) with wrap).
func simulate(_ script: String, base: Configuration = Configuration(), wrappedCount: Int? = nil,
              sourceLocation: SourceLocation = #_sourceLocation) throws -> SimOutput {
    let parsed = try SimulationScript.parse(timeline(script), configuration: base)
    var raws: [String] = []
    var diags: [String] = []
    SimulationRunner.run(parsed, base: base, emit: { raws.append($0) }, diagnostic: { diags.append($0) })
    var out = SimOutput(lines: [], diagnostics: diags)
    var lastT = -Double.infinity
    for raw in raws {
        #expect(!raw.contains("\n"), "an emitted line contains a newline: \(raw)", sourceLocation: sourceLocation)
        guard let line = parseLine(raw, sourceLocation: sourceLocation) else { continue }
        #expect(line.t >= lastT - 1e-9, "output not in time order at: \(raw)", sourceLocation: sourceLocation)
        lastT = max(lastT, line.t)
        if let n = wrappedCount {
            let o = line.probe?.offset ?? line.offset
            if let o {
                #expect(o >= 0 && o < Double(n), "offset not wrapped into [0, \(n)): \(raw)",
                        sourceLocation: sourceLocation)
            }
        }
        out.lines.append(line)
    }
    return out
}

/// Parses a script that must be refused; returns the error.
func scriptError(_ script: String, base: Configuration = Configuration(),
                 sourceLocation: SourceLocation = #_sourceLocation) -> ScriptError? {
    do {
        _ = try SimulationScript.parse(script, configuration: base)
        Issue.record("script was accepted but should fail:\n\(script)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

// MARK: - Script builders

/// Puts a test script in the order the format requires: setup lines first,
/// then `at` steps stably sorted by time, then `until`. Tests write probes
/// next to the gesture they check; this merges them into one timeline.
func timeline(_ script: String) -> String {
    var head: [String] = [], steps: [(Double, Int, String)] = [], tail: [String] = []
    for (n, raw) in script.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        let line = raw.trimmingCharacters(in: .whitespaces)
        let words = line.split(separator: " ")
        if words.first == "at", words.count > 1, let t = Double(words[1]) {
            steps.append((t, n, line))
        } else if words.first == "until" {
            tail.append(line)
        } else {
            head.append(String(raw))
        }
    }
    steps.sort { ($0.0, $0.1) < ($1.0, $1.1) }
    return (head + steps.map(\.2) + tail).joined(separator: "\n") + "\n"
}

func fmt(_ x: Double) -> String {
    if x == x.rounded() && abs(x) < 1e12 { return String(Int64(x)) }
    return String(format: "%.4f", x)
}

/// A finger path: `down` at (x0, y0) at t0, then moves every `step` ms,
/// linearly, reaching (x1, y1) at t0 + ms. No `up`.
func path(from p0: (Double, Double), to p1: (Double, Double), at t0: Double, ms: Double,
          step: Double = 16, down: Bool = true) -> String {
    var s = down ? "at \(fmt(t0)) down \(fmt(p0.0)) \(fmt(p0.1))\n" : ""
    let n = max(1, Int((ms / step).rounded(.up)))
    for k in 1...n {
        let f = Double(k) / Double(n)
        let t = t0 + ms * f
        s += "at \(fmt(t)) move \(fmt(p0.0 + (p1.0 - p0.0) * f)) \(fmt(p0.1 + (p1.1 - p0.1) * f))\n"
    }
    return s
}

/// Index of the first element of `names` equal to `name`, or nil.
func position(_ name: String, in names: [String]) -> Int? { names.firstIndex(of: name) }

/// Circular distance between two offsets modulo n.
func circularDistance(_ a: Double, _ b: Double, _ n: Double) -> Double {
    var d = (a - b).truncatingRemainder(dividingBy: n)
    if d < 0 { d += n }
    return min(d, n - d)
}

/// Critically damped spring displacement: y(t) = (y0 + (v0 + w y0) t) e^(-w t).
func springDisplacement(y0: Double, v0: Double, omega w: Double, t: Double) -> Double {
    (y0 + (v0 + w * y0) * t) * exp(-w * t)
}

func springVelocity(y0: Double, v0: Double, omega w: Double, t: Double) -> Double {
    // d/dt [(y0 + c t) e^{-wt}] with c = v0 + w y0
    let c = v0 + w * y0
    return (c - w * (y0 + c * t)) * exp(-w * t)
}

/// Cubic ease-in-out of SPEC.md section 7.
func easeInOut(_ t: Double) -> Double {
    t < 0.5 ? 4 * t * t * t : 0.5 * pow(2 * t - 2, 3) + 1
}

extension Double {
    func isClose(_ other: Double, _ tolerance: Double) -> Bool { abs(self - other) <= tolerance }
}
