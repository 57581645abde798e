import CarouselConfig
import CarouselCore

/// `carouseld.ini`, read as `readTextFile` reads it (invalid UTF-8 replaced).
///
/// * A refusal names a line of the file and is one log line.
/// * What the INI layer accepts, written back as plain `key = value` lines,
///   reads back as the same entries.
/// * An accepted configuration is the one `set section.key value` builds
///   from the same entries (the socket's `set` and the file agree), is the
///   same after that round trip, and every value lies in the schema's range.
enum ConfigProperties {
    static func check(_ input: [UInt8]) throws(PropertyFailure) {
        let text = String(decoding: input, as: UTF8.self)
        let lines = lineCount(text)

        let entries: [IniEntry]
        switch Result(catching: { () throws(ConfigError) in try IniParser.parse(text, file: "fuzz.ini") }) {
        case let .failure(error):
            try requireSensible(error, lines: lines)
            return
        case let .success(parsed):
            entries = parsed
        }
        let rewritten = iniText(entries)
        switch Result(catching: { () throws(ConfigError) in try IniParser.parse(rewritten, file: "fuzz.ini") }) {
        case let .failure(error):
            throw PropertyFailure("accepted entries written back are refused: \(error)\n\(rewritten)")
        case let .success(again):
            try require(again.map(\.fields) == entries.map(\.fields),
                        "entries written back read differently: \(entries.map(\.fields)) vs \(again.map(\.fields))")
        }

        let config: Configuration
        switch Result(catching: { () throws(ConfigError) in try Configuration.parse(text, file: "fuzz.ini") }) {
        case let .failure(error):
            try requireSensible(error, lines: lines)
            return
        case let .success(parsed):
            config = parsed
        }
        var viaSet = Configuration()
        for entry in entries {
            do {
                try viaSet.set("\(entry.section).\(entry.key)", entry.value)
            } catch {
                throw PropertyFailure("the file accepts \(entry.section).\(entry.key) = \(entry.value.debugDescription) but set refuses it: \(error)")
            }
        }
        try require(viaSet == config, "set section.key value builds another configuration than the file")
        switch Result(catching: { () throws(ConfigError) in try Configuration.parse(rewritten, file: "fuzz.ini") }) {
        case let .failure(error): throw PropertyFailure("accepted configuration written back is refused: \(error)")
        case let .success(again): try require(again == config, "accepted configuration written back reads differently")
        }
        try requireInRange(config)
    }

    static func requireSensible(_ error: ConfigError, lines: Int) throws(PropertyFailure) {
        if let line = error.line {
            try require((1...max(lines, 1)).contains(line), "error names line \(line) of \(lines): \(error)")
        }
        try requireOneLine(error.description, "config error")
    }

    /// Entries as an INI text: a header whenever the section changes.
    static func iniText(_ entries: [IniEntry]) -> String {
        var out = ""
        var section: String?
        for entry in entries {
            if entry.section != section {
                out += "[\(entry.section)]\n"
                section = entry.section
            }
            out += "\(entry.key) = \(entry.value)\n"
        }
        return out
    }

    static func requireInRange(_ c: Configuration) throws(PropertyFailure) {
        func within(_ value: Double, _ range: ClosedRange<Double>, _ name: String) throws(PropertyFailure) {
            try require(value.isFinite && range.contains(value), "\(name) = \(value) is outside \(range)")
        }
        func within(_ value: Int, _ range: ClosedRange<Int>, _ name: String) throws(PropertyFailure) {
            try require(range.contains(value), "\(name) = \(value) is outside \(range)")
        }
        let side = Int(Viewport.maximumSide)
        try require([0, 90, 180, 270].contains(c.display.rotation), "rotation \(c.display.rotation)")
        if let mode = c.display.mode {
            try within(mode.width, 1...side, "mode width")
            try within(mode.height, 1...side, "mode height")
            if let refresh = mode.refresh { try within(refresh, 1...1000, "mode refresh") }
        }
        if let device = c.display.device { try require(device.hasPrefix("/"), "device \(device) is not absolute") }
        try require(!c.input.seat.isEmpty, "empty seat")
        if let matrix = c.input.calibration {
            try require(matrix.count == 6 && matrix.allSatisfy(\.isFinite), "calibration \(matrix)")
        }
        let k = c.carousel
        try within(k.itemsPerPage, 1...100, "items_per_page")
        try within(k.spacing, 0...10_000, "spacing")
        try within(k.decelerationRate, 0.9...0.9999, "deceleration_rate")
        try within(k.autoscroll, -100...100, "autoscroll")
        try within(k.startIndex, 0...10_000_000, "start_index")
        try within(k.idleReturn, 0...86_400, "idle_return")
        try within(k.touchSlop, 1...200, "touch_slop")
        switch k.itemSize {
        case let .fraction(f): try within(f, 0.05...1, "item_size fraction")
        case let .pixels(p): try require(p > 1 && p <= ItemSize.maximumPixels, "item_size \(p) px")
        }
        let a = c.autoplay
        try within(a.interval, 0.1...86_400, "interval")
        try within(a.transition, 0...60, "transition")
        if let delay = a.startDelay { try within(delay, 0...86_400, "start_delay") }
        try within(a.resumeDelay, 0...86_400, "resume_delay")
        try require(!c.images.path.isEmpty, "empty images path")
        try require(c.images.files.allSatisfy { !$0.isEmpty }, "an empty file name in images.files")
        try within(c.images.maxPixels, 1_000_000...1_000_000_000, "max_pixels")
        if let mb = c.images.cacheMB { try within(mb, 8...4096, "cache_mb") }
        try within(c.indicator.size, 1...200, "indicator size")
        try within(c.indicator.spacing, 0...500, "indicator spacing")
        try within(c.indicator.margin, 0...2000, "indicator margin")
        try require(c.control.socket.hasPrefix("/") && c.control.socket.utf8.count < 108, "socket \(c.control.socket)")
        try require(c.control.mode <= 0o777, "socket mode \(c.control.mode)")
        try within(c.control.maxClients, 1...1024, "max_clients")
    }
}

extension IniEntry {
    /// What an entry says, without where it said it.
    var fields: [String] { [section, key, value] }
}
