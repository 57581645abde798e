/// The Unicode Bidirectional Algorithm (UAX #9) for one line of a caption
/// or clock: the paragraph's direction from its first strong letter (P2,
/// P3), the weak types (W1-W7), the neutrals (N1, N2), the levels (I1, I2)
/// and the visual order of runs (L2), with trailing spaces at the
/// paragraph's level (L1). Left out, as a caption needs none of them:
/// explicit embeddings, overrides and isolates (their controls count as
/// neutrals), and bracket pairs (N0: a bracket takes its neighbours'
/// direction like any neutral; HarfBuzz mirrors it in a right-to-left run).
///
/// So "رحلة 2024" keeps its year in reading order on the left of the
/// Arabic word, a clock "مساء 23:59" reads 23:59, and "hello שלום world" has
/// one space on each side of the Hebrew word.
enum Bidi {
    /// UAX #9's bidirectional character types that a line without explicit
    /// embeddings meets; the other neutral types (B, S, BN's neighbours) as
    /// `ws` or `on`, BN as `nsm` (it takes its neighbour's type, which keeps
    /// ZWJ and ZWNJ inside the word they join).
    enum Class: Equatable {
        case l, r, al, en, an, es, et, cs, nsm, ws, on
    }

    /// The character's type, from Unicode's DerivedBidiClass ranges for the
    /// right-to-left scripts, numbers and separators; letters are L, marks
    /// NSM, everything else ON.
    static func bidiClass(of s: Unicode.Scalar) -> Class {
        let v = s.value
        switch v {
        case 0x0030...0x0039, 0x00B2, 0x00B3, 0x00B9, 0x06F0...0x06F9, 0x2070, 0x2074...0x2079, 0x2080...0x2089,
             0x2488...0x249B, 0xFF10...0xFF19, 0x1D7CE...0x1D7FF, 0x1F100...0x1F10A:
            return .en
        case 0x0600...0x0605, 0x0660...0x0669, 0x066B, 0x066C, 0x06DD, 0x0890, 0x0891, 0x08E2, 0x10E60...0x10E7E:
            return .an
        case 0x002B, 0x002D, 0x207A, 0x207B, 0x208A, 0x208B, 0x2212, 0xFB29, 0xFE62, 0xFE63, 0xFF0B, 0xFF0D:
            return .es
        case 0x0023...0x0025, 0x00A2...0x00A5, 0x00B0, 0x00B1, 0x0609, 0x060A, 0x066A, 0x09F2, 0x09F3, 0x09FB, 0x0AF1,
             0x0BF9, 0x0E3F, 0x17DB, 0x2030...0x2034, 0x20A0...0x20CF, 0x212E, 0x2213, 0xA838, 0xA839, 0xFE5F, 0xFE69,
             0xFE6A, 0xFF03...0xFF05, 0xFFE0, 0xFFE1, 0xFFE5, 0xFFE6:
            return .et
        case 0x002C, 0x002E, 0x002F, 0x003A, 0x00A0, 0x060C, 0x202F, 0x2044, 0xFE50, 0xFE52, 0xFE55, 0xFF0C, 0xFF0E,
             0xFF0F, 0xFF1A:
            return .cs
        case 0x000C, 0x0020, 0x1680, 0x2000...0x200A, 0x2028, 0x205F, 0x3000:
            return .ws
        case 0x200E: return .l   // LEFT-TO-RIGHT MARK
        case 0x200F: return .r   // RIGHT-TO-LEFT MARK
        case 0x061C: return .al  // ARABIC LETTER MARK
        case 0x200B...0x200D, 0x2060...0x2064, 0xFEFF: return .nsm
        default: break
        }
        switch s.properties.generalCategory {
        case .nonspacingMark, .enclosingMark: return .nsm
        default: break
        }
        switch v {
        // Arabic, Syriac, Arabic Supplement, Thaana; Syriac Supplement,
        // Arabic Extended; Arabic presentation forms; Hanifi Rohingya and
        // the other Arabic-derived scripts; Arabic mathematical letters.
        case 0x0600...0x07BF, 0x0860...0x08FF, 0xFB50...0xFDFF, 0xFE70...0xFEFF, 0x10D00...0x10D3F, 0x10F30...0x10F6F,
             0x1EC70...0x1ECBF, 0x1ED00...0x1ED4F, 0x1EE00...0x1EEFF:
            return .al
        // Hebrew, NKo, Samaritan, Mandaic; Hebrew presentation forms; the
        // historic right-to-left blocks.
        case 0x0590...0x05FF, 0x07C0...0x085F, 0xFB1D...0xFB4F, 0x10800...0x10FFF, 0x1E800...0x1EFFF:
            return .r
        default: break
        }
        switch s.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .spacingMark,
             .decimalNumber, .letterNumber, .otherNumber:
            return .l
        default:
            return s.properties.isAlphabetic || s.properties.isIdeographic ? .l : .on
        }
    }

    /// The paragraph's level (0 left to right, 1 right to left) and each
    /// type's resolved level, for types in logical order.
    static func levels(_ types: [Class]) -> (paragraph: Int, levels: [Int]) {
        // P2, P3: the first strong type.
        let paragraph = types.first { $0 == .l || $0 == .r || $0 == .al }.map { $0 == .l ? 0 : 1 } ?? 0
        let start: Class = paragraph == 0 ? .l : .r
        var t = types
        let n = t.count
        // W1: a mark takes the type before it.
        var previous = start
        for i in 0..<n {
            if t[i] == .nsm { t[i] = previous }
            previous = t[i]
        }
        // W2: European digits after Arabic letters are Arabic numbers. W3: AL is R.
        var strong = start
        for i in 0..<n {
            switch t[i] {
            case .l, .r, .al: strong = t[i]
            case .en where strong == .al: t[i] = .an
            default: break
            }
            if t[i] == .al { t[i] = .r }
        }
        // W4: one separator between two numbers of a kind joins them.
        if n >= 3 {
            for i in 1..<(n - 1) {
                if t[i] == .es, t[i - 1] == .en, t[i + 1] == .en { t[i] = .en }
                if t[i] == .cs, t[i - 1] == .en, t[i + 1] == .en { t[i] = .en }
                if t[i] == .cs, t[i - 1] == .an, t[i + 1] == .an { t[i] = .an }
            }
        }
        // W5: terminators next to European digits are part of the number.
        var i = 0
        while i < n {
            guard t[i] == .et else { i += 1; continue }
            var j = i
            while j < n && t[j] == .et { j += 1 }
            if (i > 0 && t[i - 1] == .en) || (j < n && t[j] == .en) {
                for k in i..<j { t[k] = .en }
            }
            i = j
        }
        // W6: the other separators and terminators are neutrals.
        for k in 0..<n where t[k] == .es || t[k] == .et || t[k] == .cs { t[k] = .on }
        // W7: European digits after left-to-right letters are left to right.
        strong = start
        for k in 0..<n {
            if t[k] == .l || t[k] == .r { strong = t[k] }
            if t[k] == .en, strong == .l { t[k] = .l }
        }
        // N1, N2: neutrals between text of one direction take it (numbers
        // count as right to left), else the paragraph's.
        func direction(_ c: Class) -> Class { c == .l ? .l : .r }
        i = 0
        while i < n {
            guard t[i] == .ws || t[i] == .on else { i += 1; continue }
            var j = i
            while j < n && (t[j] == .ws || t[j] == .on) { j += 1 }
            let before = i == 0 ? start : direction(t[i - 1])
            let after = j == n ? start : direction(t[j])
            let resolved = before == after ? before : start
            for k in i..<j { t[k] = resolved }
            i = j
        }
        // I1, I2.
        var levels = t.map { c -> Int in
            if paragraph == 0 { return c == .r ? 1 : c == .an || c == .en ? 2 : 0 }
            return c == .l || c == .en || c == .an ? 2 : 1
        }
        // L1: spaces at the end of the line are at the paragraph's level.
        var k = n - 1
        while k >= 0 && types[k] == .ws {
            levels[k] = paragraph
            k -= 1
        }
        return (paragraph, levels)
    }

    /// L2: the visual order of items at `levels` (logical order): from the
    /// highest level down to the lowest odd one, every stretch at that level
    /// or above is reversed.
    static func visualOrder(_ levels: [Int]) -> [Int] {
        var order = Array(levels.indices)
        guard let highest = levels.max(), let lowestOdd = levels.filter({ $0 % 2 == 1 }).min() else { return order }
        var level = highest
        while level >= lowestOdd {
            var i = 0
            while i < order.count {
                guard levels[order[i]] >= level else { i += 1; continue }
                var j = i
                while j < order.count && levels[order[j]] >= level { j += 1 }
                order[i..<j].reverse()
                i = j
            }
            level -= 1
        }
        return order
    }
}
