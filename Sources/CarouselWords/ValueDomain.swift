import CarouselCore
import CarouselPlatform

/// What values a key takes: the one statement of its range, from which its
/// validation, its `accepts` text and the tests that walk its edges all come.
public enum ValueDomain: Sendable, Equatable {
    case boolean
    /// A number in `range`; `unit` names it in messages.
    case number(ClosedRange<Double>, unit: String)
    case integer(ClosedRange<Int>)
    /// `auto` (or empty), or a whole number in `range`.
    case autoOrInteger(ClosedRange<Int>)
    /// One of these words (case-insensitive).
    case choice([String])
    case color
    /// Free text checked by the key's own rule (paths, names, lists).
    case text

    /// Values at and just past the edges, for tests that must try them all.
    public var edgeValues: [String] {
        switch self {
        case .boolean:
            return ["true", "false", "on", "0", "maybe"]
        case let .number(range, _):
            let lo = range.lowerBound, hi = range.upperBound
            let step = max((hi - lo) / 1e6, 1e-9)
            return [lo, hi, (lo + hi) / 2, lo - step, hi + step, lo.nextDown, hi.nextUp].map { ValueText.format($0) }
        case let .integer(range):
            let lo = range.lowerBound, hi = range.upperBound
            return [lo, hi, lo + (hi - lo) / 2, lo - 1, hi + 1].map(String.init) + ["\(lo).5"]
        case let .autoOrInteger(range):
            return ValueDomain.integer(range).edgeValues + ["auto", "AUTO", "", "automatic"]
        case let .choice(words):
            return words + words.map { $0.uppercased() } + ["nonsense"]
        case .color:
            return ["#000000", "#FFFFFF", "#FFFFFF00", "#FFFFFFFF", "#FFF", "#GGGGGG"]
        case .text:
            return []
        }
    }
}

/// One section of the configuration and what it is about.
public struct SectionSpec: Sendable {
    public let name: String
    /// One or two sentences, written as `KeySpec.help` is.
    public let help: String

    public init(name: String, help: String) {
        self.name = name
        self.help = help
    }
}

