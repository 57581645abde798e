/// One field of an object whose keys keep their order.
public struct JSONField: Equatable, Sendable {
    public var key: String
    public var value: JSONValue
    public init(_ key: String, _ value: JSONValue) {
        self.key = key
        self.value = value
    }
}

/// A JSON value: what every JSON line carouseld writes is made of (the
/// control socket's replies and events, `simulate`, `input-test`,
/// `drm-test`), and what `carouselctl` and the tests read. `object`s are
/// encoded with their keys sorted, so a reply is the same bytes every time
/// (tests and shell scripts can compare lines); `fields` keep the order
/// given, for fixed line shapes that put the time or the name first.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
    case fields([JSONField])

    /// The value as one line of JSON (no newline: nothing inside a value
    /// can produce one, since strings escape theirs).
    public var encoded: String {
        var out = ""
        encode(into: &out)
        return out
    }

    public func encode(into out: inout String) {
        switch self {
        case .null: out += "null"
        case let .bool(b): out += b ? "true" : "false"
        case let .int(i): out += String(i)
        case let .double(d): out += JSONValue.number(d)
        case let .string(s): JSONValue.encode(string: s, into: &out)
        case let .array(values):
            out += "["
            for (i, v) in values.enumerated() {
                if i > 0 { out += "," }
                v.encode(into: &out)
            }
            out += "]"
        case let .object(fields):
            JSONValue.encode(fields: fields.sorted { $0.key < $1.key }, into: &out)
        case let .fields(fields):
            JSONValue.encode(fields: fields.map { (key: $0.key, value: $0.value) }, into: &out)
        }
    }

    /// The one way a number is written: rounded to 1e-9, so that float noise
    /// (2.9999999999999996) reads as 3; integers without a fraction; no
    /// "-0"; `null` for NaN and infinities, which JSON cannot carry (what
    /// JavaScript's JSON.stringify writes too).
    public static func number(_ x: Double) -> String {
        guard x.isFinite else { return "null" }
        var r = (x * 1e9).rounded() / 1e9
        if !r.isFinite { r = x }  // beyond 1.8e299 the scaling overflows; such numbers carry no noise worth removing
        if r == 0 { r = 0 }  // no "-0.0"
        if r == r.rounded(), abs(r) < 1e15 { return String(Int64(r)) }
        return String(r)
    }

    public static func encode(fields: [(key: String, value: JSONValue)], into out: inout String) {
        out += "{"
        for (i, field) in fields.enumerated() {
            if i > 0 { out += "," }
            encode(string: field.key, into: &out)
            out += ":"
            field.value.encode(into: &out)
        }
        out += "}"
    }

    /// Escapes what JSON requires (quote, backslash, U+0000...U+001F) and
    /// passes everything else through as UTF-8: file names in other scripts
    /// stay readable in `carouselctl --json` and in the journal.
    public static func encode(string: String, into out: inout String) {
        out += "\""
        // Most strings (paths, names) need no escape: append them whole.
        if !string.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out += string
            out += "\""
            return
        }
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }

    /// `string` as a JSON string literal.
    public static func quoted(_ string: String) -> String {
        var out = ""
        encode(string: string, into: &out)
        return out
    }

    // MARK: Reading (for carouselctl and tests)

    /// Parses one JSON text; nil if it is not valid JSON.
    public static func parse(_ text: String) -> JSONValue? {
        var parser = Parser(bytes: Array(text.utf8))
        parser.skipSpace()
        guard let value = parser.value() else { return nil }
        parser.skipSpace()
        return parser.position == parser.bytes.count ? value : nil
    }

    public subscript(key: String) -> JSONValue? {
        switch self {
        case let .object(fields): fields[key]
        case let .fields(fields): fields.first { $0.key == key }?.value
        default: nil
        }
    }

    public var stringValue: String? { if case let .string(s) = self { s } else { nil } }
    public var boolValue: Bool? { if case let .bool(b) = self { b } else { nil } }
    public var arrayValue: [JSONValue]? { if case let .array(a) = self { a } else { nil } }
    /// A number, whole or not.
    public var doubleValue: Double? {
        switch self {
        case let .int(i): Double(i)
        case let .double(d): d
        default: nil
        }
    }
    public var intValue: Int? {
        switch self {
        case let .int(i): i
        case let .double(d) where d == d.rounded() && abs(d) < 9e15: Int(d)
        default: nil
        }
    }

    private struct Parser {
        let bytes: [UInt8]
        var position = 0
        // Nesting bound: a hostile reply must not blow the client's stack.
        var depth = 0

        mutating func skipSpace() {
            while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
        }

        mutating func literal(_ word: String, _ value: JSONValue) -> JSONValue? {
            let w = Array(word.utf8)
            guard position + w.count <= bytes.count, Array(bytes[position..<position + w.count]) == w else { return nil }
            position += w.count
            return value
        }

        mutating func value() -> JSONValue? {
            guard position < bytes.count, depth < 64 else { return nil }
            switch bytes[position] {
            case UInt8(ascii: "n"): return literal("null", .null)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "\""): return string().map(JSONValue.string)
            case UInt8(ascii: "["):
                position += 1; depth += 1; defer { depth -= 1 }
                var values: [JSONValue] = []
                skipSpace()
                if position < bytes.count, bytes[position] == UInt8(ascii: "]") { position += 1; return .array(values) }
                while true {
                    skipSpace()
                    guard let v = value() else { return nil }
                    values.append(v)
                    skipSpace()
                    guard position < bytes.count else { return nil }
                    if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
                    if bytes[position] == UInt8(ascii: "]") { position += 1; return .array(values) }
                    return nil
                }
            case UInt8(ascii: "{"):
                position += 1; depth += 1; defer { depth -= 1 }
                var fields: [String: JSONValue] = [:]
                skipSpace()
                if position < bytes.count, bytes[position] == UInt8(ascii: "}") { position += 1; return .object(fields) }
                while true {
                    skipSpace()
                    guard position < bytes.count, bytes[position] == UInt8(ascii: "\""), let key = string() else { return nil }
                    skipSpace()
                    guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { return nil }
                    position += 1
                    skipSpace()
                    guard let v = value() else { return nil }
                    fields[key] = v
                    skipSpace()
                    guard position < bytes.count else { return nil }
                    if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
                    if bytes[position] == UInt8(ascii: "}") { position += 1; return .object(fields) }
                    return nil
                }
            default: return number()
            }
        }

        mutating func number() -> JSONValue? {
            let start = position
            while position < bytes.count, "+-0123456789.eE".utf8.contains(bytes[position]) { position += 1 }
            guard position > start, let text = String(validating: bytes[start..<position], as: UTF8.self) else { return nil }
            if let i = Int(text) { return .int(i) }
            return Double(text).map(JSONValue.double)
        }

        mutating func hex4() -> UInt32? {
            guard position + 4 <= bytes.count,
                  let text = String(validating: bytes[position..<position + 4], as: UTF8.self),
                  let v = UInt32(text, radix: 16) else { return nil }
            position += 4
            return v
        }

        mutating func string() -> String? {
            position += 1  // the opening quote
            var out: [UInt8] = []
            while position < bytes.count {
                let b = bytes[position]
                position += 1
                switch b {
                case UInt8(ascii: "\""): return String(validating: out, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard position < bytes.count else { return nil }
                    let e = bytes[position]
                    position += 1
                    switch e {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "u"):
                        guard var code = hex4() else { return nil }
                        // A surrogate pair: the second half must follow as another \u escape.
                        if (0xD800..<0xDC00).contains(code) {
                            guard position + 2 <= bytes.count, bytes[position] == UInt8(ascii: "\\"),
                                  bytes[position + 1] == UInt8(ascii: "u") else { return nil }
                            position += 2
                            guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let scalar = Unicode.Scalar(code) else { return nil }
                        out.append(contentsOf: Array(String(Character(scalar)).utf8))
                    default: return nil
                    }
                case 0..<0x20: return nil
                default: out.append(b)
                }
            }
            return nil
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
