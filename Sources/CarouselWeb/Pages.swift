import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselImaging
import CarouselPairingWords
import CarouselPlatform
import CarouselWebWords
import Foundation
import Hummingbird
import HummingbirdAuth
import MultipartKit
import NIOCore

// The pages' bodies, server-made: every name and caption escaped.
extension WebApp {
    static func loginPage(env: WebEnvironment, problem: String?) -> String {
        guard env.owner.isSet else {
            return Page.render(title: "Set up", current: nil, signedIn: nil, body: """
                <p class="notice">This frame has no owner's password yet. Choose one with a code the frame shows on \
                its screen:</p>
                <form method="post" action="/setup/code"><button type="submit">Show a setup code on the frame</button></form>
                <p>Or, on the frame itself, run <code>sudo carouseld-web set-password</code>.</p>
                """)
        }
        return Page.render(title: "Sign in", current: nil, signedIn: nil, body: """
            \(problem.map { "<p class=\"problem\" role=\"alert\">\(htmlEscaped($0))</p>" } ?? "")
            <form method="post" action="/login" class="login">
            <label for="password">The frame's password</label>
            <input type="password" id="password" name="password" autocomplete="current-password" required autofocus>
            <button type="submit">Sign in</button>
            </form>
            <p><a href="/pair">A guest with a code from the frame? Join here.</a></p>
            """)
    }

    static func setupPage(problem: String?) -> String {
        Page.render(title: "Set up", current: nil, signedIn: nil, body: """
            \(problem.map { "<p class=\"problem\" role=\"alert\">\(htmlEscaped($0))</p>" } ?? "")
            <p>A setup code is on the frame's screen now, for ten minutes. Type it here, and the password you want for \
            this page.</p>
            <form method="post" action="/setup" class="login">
            <label for="code">The code on the frame's screen</label>
            <input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="7" required>
            <label for="password">A password (at least \(OwnerPassword.minimumLength) characters)</label>
            <input type="password" id="password" name="password" autocomplete="new-password" required>
            <label for="again">The same again</label>
            <input type="password" id="again" name="again" autocomplete="new-password" required>
            <button type="submit">Set the password</button>
            </form>
            <form method="post" action="/setup/code"><button type="submit">Show a new code on the frame</button></form>
            """)
    }

    static func pairPage(problem: String?) -> String {
        Page.render(title: "Join as a guest", current: nil, signedIn: nil, body: """
            \(problem.map { "<p class=\"problem\" role=\"alert\">\(htmlEscaped($0))</p>" } ?? "")
            <p>Ask the frame's owner to show a pairing code on the frame (or run <code>carouselctl pair</code>), \
            then type it here. A guest adds pictures and drives the frame.</p>
            <form method="post" action="/pair" class="login">
            <label for="code">The code on the frame's screen</label>
            <input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="7" required>
            <label for="name">This phone's name (the owner sees it)</label>
            <input type="text" id="name" name="name" maxlength="40" placeholder="Anna's phone" required>
            <button type="submit">Join</button>
            </form>
            """)
    }

    static func nowPage(status: ControlReply?, generation: Int, role: WebRole) -> String {
        var line = "The frame does not answer."
        var paused = false
        var displayOff = false
        var brightness: Int?
        if case let .ok(fields)? = status {
            if case let .object(display)? = fields["display"] {
                displayOff = display["power"]?.stringValue == "off"
                brightness = display["brightness"]?.intValue
            }
            let index = fields["index"]?.intValue ?? 0
            let count = fields["count"]?.intValue ?? 0
            if case let .object(autoplay)? = fields["autoplay"] {
                paused = autoplay["running"]?.boolValue == false
            }
            line = count == 0 ? "The album is empty." : "Picture \(index + 1) of \(count)" + (paused ? " · paused" : "")
        }
        return """
            <figure class="now"><img id="now" src="/now.png?g=\(generation)" data-generation="\(generation)" alt="The picture on the frame now"></figure>
            <p class="status" id="status">\(htmlEscaped(line))</p>
            <div class="drive">
            <form method="post" action="/drive/prev"><button type="submit" aria-label="Previous">◀</button></form>
            <form method="post" action="/drive/\(paused ? "play" : "pause")" id="playpause"><button type="submit">\(paused ? "Play" : "Pause")</button></form>
            <form method="post" action="/drive/next"><button type="submit" aria-label="Next">▶</button></form>
            </div>
            <div class="more">
            <form method="post" action="/drive/\(displayOff ? "display-on" : "display-off")"><button type="submit">\(displayOff ? "Screen on" : "Screen off")</button></form>
            \(role == .owner ? "<form method=\"post\" action=\"/drive/hide\"><button type=\"submit\">Hide this picture</button></form>" : "")
            </div>
            \(brightness.map { """
                <form method="post" action="/drive/brightness" class="brightness"><label for="percent">Brightness</label>
                <input type="range" id="percent" name="percent" min="1" max="100" value="\($0)">
                <button type="submit">Set</button></form>
                """ } ?? "")
            """
    }

    /// A name of a file directly in the album: no path, not hidden.
    static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && !name.hasPrefix(".") && !name.contains("/") && !name.contains("\0") && name.utf8.count <= 255
    }

    static func photosPage(env: WebEnvironment, list: ControlReply?, results: [Result<String, UploadError>], who: WebSession,
                           records: WebRecords) async -> String {
        var out = ""
        if !results.isEmpty {
            out += "<ul class=\"results\">"
            for result in results {
                switch result {
                case let .success(name): out += "<li class=\"added\">Added \(htmlEscaped(name))</li>"
                case let .failure(error): out += "<li class=\"problem\">\(htmlEscaped(error.message))</li>"
                }
            }
            out += "</ul>"
        }
        if env.pictures != nil {
            let accept = UploadName.extensions.sorted().map { "." + $0 }.joined(separator: ",")
            out += """
                <form method="post" action="/photos" enctype="multipart/form-data" class="upload" id="upload">
                <label for="files">Add pictures and clips</label>
                <input type="file" id="files" name="files" multiple accept="image/*,video/*,\(accept)">
                <button type="submit">Upload</button>
                <ul id="progress" class="progress"></ul>
                </form>
                """
        }
        if case let .ok(fields)? = list, case let .array(images)? = fields["images"] {
            out += "<h2>In the album (\(images.count))</h2><ul class=\"album grid\">"
            for image in images {
                guard let path = image.stringValue else { continue }
                let name = path.split(separator: "/").last.map(String.init) ?? path
                let added = await records.addedBy(name)
                let mayDelete = who.role == .owner || (added != nil && added == who.device)
                let direct = env.pictures.map { path == $0 + "/" + name } ?? false
                out += "<li>"
                if direct {
                    out += "<img src=\"/thumbnails/\(percentEncoded(name))\" alt=\"\" loading=\"lazy\" width=\"120\" height=\"120\">"
                }
                out += "<span>\(htmlEscaped(name))</span>"
                if mayDelete, direct {
                    out += "<form method=\"post\" action=\"/photos/delete\" class=\"delete\"><input type=\"hidden\" name=\"name\" "
                        + "value=\"\(htmlEscaped(name))\"><button type=\"submit\" aria-label=\"Delete \(htmlEscaped(name))\">Delete</button></form>"
                }
                out += "</li>"
            }
            out += "</ul>"
            if case let .array(hidden)? = fields["hidden"], !hidden.isEmpty, who.role == .owner {
                out += "<h2>Hidden on this frame (\(hidden.count))</h2><ul class=\"album\">"
                for item in hidden {
                    guard let path = item.stringValue else { continue }
                    let name = path.split(separator: "/").last.map(String.init) ?? path
                    out += "<li><span>\(htmlEscaped(name))</span><form method=\"post\" action=\"/photos/unhide\" class=\"delete\">"
                        + "<input type=\"hidden\" name=\"name\" value=\"\(htmlEscaped(path))\"><button type=\"submit\" "
                        + "aria-label=\"Unhide \(htmlEscaped(name))\">Unhide</button></form></li>"
                }
                out += "</ul>"
            }
        } else {
            out += "<p class=\"problem\">The frame does not answer.</p>"
        }
        return out
    }
}
