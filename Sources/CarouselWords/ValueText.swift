import CarouselCore

/// Why a value was refused; the caller adds file, line and key.
public struct ValueError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// How a key's value is read, the same for the house's keys and a
/// capability's: the words of a boolean, a number in its range, a choice.
public enum ValueText {
    public static func bool(_ v: String) throws(ValueError) -> Bool {
        switch v.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: throw ValueError("expected true or false")
        }
    }

    public static func number(_ v: String, _ range: ClosedRange<Double>, unit: String = "") throws(ValueError) -> Double {
        guard let d = Double(v), d.isFinite else { throw ValueError("expected a number\(unit.isEmpty ? "" : " (\(unit))")") }
        guard range.contains(d) else {
            throw ValueError("out of range: allowed \(format(range.lowerBound)) to \(format(range.upperBound))\(unit.isEmpty ? "" : " \(unit)")")
        }
        return d
    }

    public static func integer(_ v: String, _ range: ClosedRange<Int>) throws(ValueError) -> Int {
        guard let i = Int(v) else { throw ValueError("expected a whole number") }
        guard range.contains(i) else { throw ValueError("out of range: allowed \(range.lowerBound) to \(range.upperBound)") }
        return i
    }

    public static func choice<E: RawRepresentable & CaseIterable>(_ v: String, _: E.Type) throws(ValueError) -> E
        where E.RawValue == String {
        guard let e = E(rawValue: v.lowercased()) else {
            throw ValueError("expected one of: \(E.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return e
    }

    public static func color(_ v: String) throws(ValueError) -> PixelColor {
        guard let c = PixelColor(hex: v) else { throw ValueError("expected a colour #RRGGBB or #RRGGBBAA") }
        return c
    }

    /// A bound as people write it: 86400, not 86400.0.
    public static func format(_ d: Double) -> String {
        d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d)
    }

    /// `auto` (or empty) means "choose automatically".
    public static func autoOrValue(_ v: String) -> String? {
        v.isEmpty || v.lowercased() == "auto" ? nil : v
    }

    /// What a choice of `words` accepts, as messages and the manual say it.
    public static func accepts(choice words: [String]) -> String {
        words.count == 2 ? "\(words[0]) or \(words[1])" : words.dropLast().joined(separator: ", ") + " or " + words.last!
    }

    /// `text`'s words (separated by single spaces) in lines of at most
    /// `width` characters, each starting with `lead` (a word longer than a
    /// line stands alone): the shipped INI's comments, carouselctl's help.
    /// Empty text is one line of `lead` without its trailing spaces.
    public static func wrapped(_ text: String, width: Int, lead: String) -> [String] {
        var lines: [String] = []
        var line = lead
        for word in text.split(separator: " ") {
            if line != lead, line.count + 1 + word.count > width {
                lines.append(line)
                line = lead
            }
            line += (line == lead ? "" : " ") + word
        }
        lines.append(line == lead ? String(lead.reversed().drop(while: { $0 == " " }).reversed()) : line)
        return lines
    }
}
