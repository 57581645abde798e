/// JSON string quoting, shared by every room that writes JSON lines (the
/// control socket's replies and events, `input-test`'s events).
public enum JSONText {
    /// Appends `string` as a JSON string literal: escapes what JSON requires
    /// (quote, backslash, U+0000...U+001F) and passes everything else through
    /// as UTF-8, so file names in other scripts stay readable.
    public static func quote(_ string: String, into out: inout String) {
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
        quote(string, into: &out)
        return out
    }
}
