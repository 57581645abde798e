/// `text` with every byte of its UTF-8 but RFC 3986's unreserved characters
/// (letters, digits, `-._~`) written `%XX`: safe as one segment of a URL's
/// path or as a query's value (the page's links, the sync's requests).
public func percentEncoded(_ text: String) -> String {
    var out = ""
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
            out.unicodeScalars.append(Unicode.Scalar(byte))
        default:
            out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(2)
        }
    }
    return out
}

extension String {
    /// The string with zeros before it up to `width` characters (a pairing
    /// code's digits, a `%XX` escape).
    public func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
