import CarouselConfig
import CarouselCore
import CarouselPlatform
import CarouselSimulation

/// `carouseld simulate` scripts, read as the command reads a file.
///
/// * A refused script names one of its lines, in one line of text.
/// * A script that runs writes only JSON objects, one a line, each with a
///   time `t` that never goes back and never passes the script's end;
///   every `probe` step writes exactly one probe line; an item index is
///   one of the script's items.
enum SimulationProperties {
    /// Scripts that run past this are not run: the runner ticks at 60 Hz, so
    /// its cost is the script's length, and `until 999999999` only asks for a
    /// long run, which is no fault.
    static let longestRunMilliseconds = 120_000.0

    static func check(_ input: [UInt8]) throws(PropertyFailure) {
        let text = String(decoding: input, as: UTF8.self)
        let script: SimulationScript
        switch Result(catching: { () throws(ScriptError) in try SimulationScript.parse(text) }) {
        case let .failure(error):
            try require((1...max(lineCount(text), 1)).contains(error.line), "error names line \(error.line): \(error)")
            try requireOneLine(error.description, "script error")
            return
        case let .success(parsed):
            script = parsed
        }
        let end = Double(script.end.microseconds) / 1000
        guard end <= longestRunMilliseconds else { return }

        var lines: [String] = []
        SimulationRunner.run(script, emit: { lines.append($0) })
        var last = -Double.infinity
        var probes = 0
        for line in lines {
            try requireOneLine(line, "output line")
            guard let value = JSONValue.parse(line) else { throw PropertyFailure("output line is not JSON: \(line)") }
            guard case .object = value else { throw PropertyFailure("output line is not an object: \(line)") }
            guard let t = number(value["t"]) else { throw PropertyFailure("output line has no time: \(line)") }
            try require(t >= last, "time goes back from \(last) to \(t): \(line)")
            try require(t <= end + 1e-3, "time \(t) after the end \(end): \(line)")
            last = t
            if value["probe"] != nil { probes += 1 }
            if let index = (value["index"] ?? value["probe"]?["index"])?.intValue {
                try require(index >= 0 && (index < script.itemCount || (script.itemCount == 0 && index == 0)),
                            "index \(index) with \(script.itemCount) items: \(line)")
            }
        }
        let probeSteps = script.steps.filter { $0.action == .probe }.count
        try require(probes == probeSteps, "\(probeSteps) probe steps wrote \(probes) probe lines")
    }

    static func number(_ value: JSONValue?) -> Double? {
        switch value {
        case let .int(i)?: Double(i)
        case let .double(d)?: d
        default: nil
        }
    }
}
