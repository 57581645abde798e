/// Text made safe for HTML: every name and caption the page shows goes
/// through here, in element content and in quoted attribute values alike.
public func htmlEscaped(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    for scalar in text.unicodeScalars {
        switch scalar {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        default:
            // Control characters (but tab and line breaks) are dropped: a name
            // may hold any byte the file system allows.
            if scalar.value < 0x20 && scalar != "\n" && scalar != "\t" { continue }
            if scalar.value == 0x7F { continue }
            out.unicodeScalars.append(scalar)
        }
    }
    return out
}

/// The pages' frame: one layout, server-made, no inline script or style
/// (the Content-Security-Policy forbids both).
enum Page {
    /// A whole page: `title`, the navigation (when signed in, `current`
    /// marked), and `body`, which is HTML already escaped by its maker.
    static func render(title: String, current: String?, signedIn: WebRole?, csrf: Bool = true, body: String) -> String {
        var nav = ""
        if let role = signedIn {
            // A guest has no settings to change.
            let links = [("now", "/now", "Now"), ("photos", "/photos", "Photos"), ("settings", "/settings", "Settings"),
                         ("status", "/status", "Status")].filter { role == .owner || $0.0 != "settings" }
            nav = "<nav>" + links.map { id, href, label in
                "<a href=\"\(href)\"\(id == current ? " aria-current=\"page\"" : "")>\(label)</a>"
            }.joined()
            nav += "<form method=\"post\" action=\"/logout\" class=\"signout\"><button type=\"submit\">Sign out</button></form>"
            nav += "</nav>"
        }
        return """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="color-scheme" content="light dark">
            <title>\(htmlEscaped(title)) · carouseld</title>
            <link rel="icon" href="/static/icon.svg" type="image/svg+xml">
            <link rel="stylesheet" href="/static/style.css">
            <script src="/static/app.js" defer></script>
            </head>
            <body>
            <header><h1>\(htmlEscaped(title))</h1>\(nav)</header>
            <main>
            \(body)
            </main>
            </body>
            </html>

            """
    }
}
