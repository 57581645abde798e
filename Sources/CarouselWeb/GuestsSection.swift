import Foundation

/// The owner's list of guests on the Settings page: each paired phone with
/// a button that revokes it, and the button that shows a new code.
enum GuestsSection {
    /// `code`: the guest code just asked for ("" when the frame did not answer).
    static func render(_ guests: [GuestDevice], code: String?) -> String {
        var out = "<section class=\"guests\" id=\"guests\"><h2>Guests</h2>"
        if let code {
            out += code.isEmpty
                ? "<p class=\"problem\" role=\"alert\">The frame does not answer: no code.</p>"
                : "<p class=\"notice\" role=\"status\">Code <strong id=\"guest-code\">\(htmlEscaped(code))</strong> is on the "
                    + "frame's screen for ten minutes: the guest opens this page and taps <em>Join</em>.</p>"
        }
        out += "<form method=\"post\" action=\"/guests/pair\"><button type=\"submit\">Pair a guest</button></form>"
        if guests.isEmpty {
            out += "<p class=\"lead\">No guest is paired.</p>"
        } else {
            out += "<ul class=\"album\">"
            let format = DateFormatter()
            format.dateStyle = .medium
            format.timeStyle = .short
            for guest in guests {
                let when = format.string(from: Date(timeIntervalSince1970: TimeInterval(guest.paired)))
                out += "<li><span>\(htmlEscaped(guest.name)) · paired \(htmlEscaped(when))</span>"
                    + "<form method=\"post\" action=\"/guests/revoke\" class=\"delete\"><input type=\"hidden\" name=\"id\" "
                    + "value=\"\(htmlEscaped(guest.id))\"><button type=\"submit\" aria-label=\"Revoke \(htmlEscaped(guest.name))\">"
                    + "Revoke</button></form></li>"
            }
            out += "</ul>"
        }
        return out + "</section>"
    }
}
