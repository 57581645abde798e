/// The order people expect for file names: `img2` before `img10`.
///
/// The rules, in order of precedence:
///
/// 1. Names are read as a stream of characters in which every run of decimal
///    digits (ASCII or any other script's, e.g. Arabic-Indic `١٢`) counts as
///    one number. Numbers compare by value, digit by digit, so a run of any
///    length works (nothing is converted to a fixed-size integer). Letters
///    compare case-insensitively (Unicode lowercase mapping) and by canonical
///    equivalence, so `é` typed precomposed or as `e` + combining accent is the
///    same letter. A number facing a non-digit compares as the character `0`
///    would, which keeps `a.jpg` (`.` < `0`) before `a1.jpg` and digits before
///    letters, as in a plain code-point sort.
/// 2. Names still equal differ only in zero padding, case or encoding. The
///    first number written with fewer leading zeros goes first: `a1` < `a01`
///    < `a001`.
/// 3. Then the names' Unicode scalars in code-point order: `IMG` < `Img` <
///    `img` (upper case first); `e` + combining accent before precomposed `é`.
///
/// Two names compare equal only when their scalars are identical, so the
/// order is total and a sort gives the same result whatever order the
/// directory listed the files in. (File names on Linux are bytes: two files
/// whose names differ only in Unicode normalization are two files, and rule 3
/// keeps them apart.)
public enum NaturalOrder {
    public enum Comparison: Sendable, Equatable {
        case ascending
        case equal
        case descending
    }

    /// Compares two names; see the type's documentation for the rules.
    ///
    /// For sorting many names, `NaturalSortKey` does the per-name work once.
    public static func compare(_ lhs: String, _ rhs: String) -> Comparison {
        NaturalSortKey(lhs).compare(to: NaturalSortKey(rhs))
    }

    /// `compare(lhs, rhs) == .ascending`, in the shape `sort(by:)` takes.
    public static func areInIncreasingOrder(_ lhs: String, _ rhs: String) -> Bool {
        compare(lhs, rhs) == .ascending
    }

    /// The names sorted in natural order (each name is analysed once).
    public static func sorted(_ names: some Sequence<String>) -> [String] {
        names.map { NaturalSortKey($0) }.sorted().map(\.name)
    }
}

/// A name prepared for natural-order comparison, so that sorting N names
/// splits and lower-cases each name once instead of on every comparison.
///
/// Equality is identity of Unicode scalars (see `NaturalOrder`), which is
/// stricter than `String`'s canonical equivalence.
public struct NaturalSortKey: Comparable, Sendable {
    /// Everything behind one reference: a sort copies keys in and out of its
    /// buffer, and each reference in a key costs an atomic retain and release
    /// per copy, which with four of them took more time than the comparisons.
    private let storage: Storage

    public var name: String { storage.name }

    private final class Storage: Sendable {
        let name: String
        /// Rule 1 for names of plain ASCII (nearly every file name): the token
        /// stream flattened into integers compared one by one, several times
        /// faster than the general tokens. A text byte is its lower-cased
        /// value; a number is `0x30` (it faces text as the character "0"
        /// would), then `0x100 + digit count` (shorter numbers are smaller),
        /// then its digits. Orders exactly as `tokens` would. Empty for the
        /// other names.
        let plain: [UInt32]
        /// Rule 1 for every other name; empty for plain names.
        let tokens: [Token]
        let isPlain: Bool
        /// Rule 2: the leading zeros of each number, in order.
        let zeros: [Int]

        init(_ name: String, general: Bool) {
            self.name = name
            // "\r\n" is one Character, not two, so a name holding a CR takes
            // the general path.
            if !general && name.utf8.allSatisfy({ $0 < 0x80 && $0 != 0x0D }) {
                (plain, zeros) = NaturalSortKey.flatten(name)
                tokens = []
                isPlain = true
            } else {
                (tokens, zeros) = NaturalSortKey.tokenize(name)
                plain = []
                isPlain = false
            }
        }
    }

    fileprivate enum Token: Sendable {
        /// One ASCII character of text, lower-cased, compared as a byte. It
        /// orders exactly as the same `Character` would.
        case ascii(UInt8)
        /// One other character of text, lower-cased.
        case text(Character)
        /// A run of digits: its value as ASCII digits without leading zeros
        /// ("0" for zero).
        case number(digits: String)
    }

    public init(_ name: String) {
        storage = Storage(name, general: false)
    }

    /// A key built the general way even for an ASCII name, for tests that
    /// check that both ways order alike.
    init(generalPathFor name: String) {
        storage = Storage(name, general: true)
    }

    fileprivate static func flatten(_ name: String) -> ([UInt32], [Int]) {
        var stream: [UInt32] = []
        stream.reserveCapacity(name.utf8.count + 4)
        var zeros: [Int] = []
        let bytes = Array(name.utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte >= 0x30 && byte <= 0x39 else {
                stream.append(UInt32((byte >= 0x41 && byte <= 0x5A) ? byte + 0x20 : byte))
                index += 1
                continue
            }
            var end = index
            while end < bytes.count && bytes[end] >= 0x30 && bytes[end] <= 0x39 { end += 1 }
            // Keep one digit of an all-zero run: zero is "0".
            var first = index
            while first < end - 1 && bytes[first] == 0x30 { first += 1 }
            zeros.append(first - index)
            stream.append(0x30)
            stream.append(0x100 + UInt32(end - first))
            for digit in bytes[first..<end] { stream.append(UInt32(digit)) }
            index = end
        }
        return (stream, zeros)
    }

    fileprivate static func tokenize(_ name: String) -> ([Token], [Int]) {
        var tokens: [Token] = []
        var zeros: [Int] = []
        var digits: [UInt8] = []
        func endNumber() {
            guard !digits.isEmpty else { return }
            // Keep one digit of an all-zero run: zero is "0".
            let leading = min(digits.prefix { $0 == UInt8(ascii: "0") }.count, digits.count - 1)
            tokens.append(.number(digits: String(decoding: digits[leading...], as: UTF8.self)))
            zeros.append(leading)
            digits.removeAll(keepingCapacity: true)
        }
        for character in name {
            if let digit = decimalDigit(character) {
                digits.append(UInt8(ascii: "0") + digit)
                continue
            }
            endNumber()
            if let ascii = character.asciiValue, ascii != 0x0D {
                tokens.append(.ascii((ascii >= 0x41 && ascii <= 0x5A) ? ascii + 0x20 : ascii))
            } else {
                // Lower-casing can turn one character into several ("İ" into
                // "i" + combining dot); each is a token of its own.
                for lowered in character.lowercased() {
                    tokens.append(.text(lowered))
                }
            }
        }
        endNumber()
        return (tokens, zeros)
    }

    /// The value 0...9 of a character that is exactly one decimal digit scalar.
    ///
    /// Only `Numeric_Type=Decimal` counts: `①` or `½` are numbers to Unicode but
    /// not digits one writes in positional notation, so they stay text.
    private static func decimalDigit(_ character: Character) -> UInt8? {
        if let ascii = character.asciiValue {
            return (ascii >= 0x30 && ascii <= 0x39) ? ascii - 0x30 : nil
        }
        let scalars = character.unicodeScalars
        guard scalars.count == 1, let scalar = scalars.first,
              scalar.properties.numericType == .decimal,
              let value = scalar.properties.numericValue, value >= 0, value <= 9
        else { return nil }
        return UInt8(value)
    }

    public func compare(to other: NaturalSortKey) -> NaturalOrder.Comparison {
        let left = storage, right = other.storage
        if left === right { return .equal }
        // Rule 1.
        let primary: NaturalOrder.Comparison
        if left.isPlain && right.isPlain {
            primary = Self.compare(left.plain, right.plain)
        } else {
            // A plain name facing a general one is tokenized again; that only
            // happens for the few names outside ASCII.
            primary = Self.compare(left.isPlain ? Self.tokenize(left.name).0 : left.tokens,
                                   right.isPlain ? Self.tokenize(right.name).0 : right.tokens)
        }
        if primary != .equal { return primary }
        // Rule 2: the streams match, so both names hold as many numbers.
        for (a, b) in zip(left.zeros, right.zeros) where a != b {
            return a < b ? .ascending : .descending
        }
        // Rule 3: code points.
        if left.name.unicodeScalars.elementsEqual(right.name.unicodeScalars) { return .equal }
        return left.name.unicodeScalars.lexicographicallyPrecedes(right.name.unicodeScalars) ? .ascending : .descending
    }

    private static func compare(_ left: [UInt32], _ right: [UInt32]) -> NaturalOrder.Comparison {
        for index in 0..<min(left.count, right.count) where left[index] != right[index] {
            return left[index] < right[index] ? .ascending : .descending
        }
        if left.count == right.count { return .equal }
        return left.count < right.count ? .ascending : .descending
    }

    private static func compare(_ left: [Token], _ right: [Token]) -> NaturalOrder.Comparison {
        for (l, r) in zip(left, right) {
            switch (l, r) {
            case let (.ascii(a), .ascii(b)):
                if a != b { return a < b ? .ascending : .descending }
            case let (.ascii(a), .text(b)):
                // `b` may begin with the same letter ("q" + combining accent).
                let a = Character(Unicode.Scalar(a))
                if a != b { return a < b ? .ascending : .descending }
            case let (.text(a), .ascii(b)):
                let b = Character(Unicode.Scalar(b))
                if a != b { return a < b ? .ascending : .descending }
            case let (.text(a), .text(b)):
                if a != b { return a < b ? .ascending : .descending }
            case let (.number(a), .number(b)):
                // Same length without leading zeros: the ASCII strings order
                // like the numbers they spell.
                if a.utf8.count != b.utf8.count { return a.utf8.count < b.utf8.count ? .ascending : .descending }
                if a != b { return a < b ? .ascending : .descending }
            // A number faces the character "0"; the text cannot be "0", it
            // would have been part of the number.
            case let (.number, .ascii(b)):
                return UInt8(ascii: "0") < b ? .ascending : .descending
            case let (.ascii(a), .number):
                return a < UInt8(ascii: "0") ? .ascending : .descending
            case let (.number, .text(b)):
                return "0" < b ? .ascending : .descending
            case let (.text(a), .number):
                return a < "0" ? .ascending : .descending
            }
        }
        if left.count == right.count { return .equal }
        return left.count < right.count ? .ascending : .descending
    }

    public static func < (lhs: NaturalSortKey, rhs: NaturalSortKey) -> Bool {
        lhs.compare(to: rhs) == .ascending
    }

    public static func == (lhs: NaturalSortKey, rhs: NaturalSortKey) -> Bool {
        lhs.name.unicodeScalars.elementsEqual(rhs.name.unicodeScalars)
    }
}
