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
import HummingbirdWebSocket
import MultipartKit
import NIOCore

/// What a signed-in browser carries (in the server's memory, found by the
/// session cookie's random id).
public struct WebSession: Codable, Sendable {
    public var role: WebRole
    /// A guest's device (`WebRecords`); nil for the owner.
    public var device: String?

    public init(role: WebRole, device: String? = nil) {
        self.role = role
        self.device = device
    }

    /// Who added a file, as `uploads.json` keeps it.
    var uploader: String { device ?? "owner" }
}

public typealias WebContext = BasicSessionRequestContext<WebSession, WebSession>

/// Everything the page's routes need, fixed at start.
public struct WebEnvironment: Sendable {
    /// The album's folder, where uploads go (`[images] path`); nil when the
    /// album is a list of files (`[images] files`), which takes no uploads.
    public var pictures: String?
    public var maxUploadBytes: Int
    public var daemon: DaemonLink
    public var owner: OwnerPassword
    public var check: UploadCheck
    /// Whether the page is served over HTTPS (the session cookie is then `Secure`).
    public var secure: Bool
    /// The configuration file (its drop-ins and the settings file are read beside it).
    public var configPath: String

    public init(configPath: String, pictures: String?, maxUploadBytes: Int, daemon: DaemonLink, owner: OwnerPassword,
                check: UploadCheck, secure: Bool = false) {
        self.configPath = configPath
        self.pictures = pictures
        self.maxUploadBytes = maxUploadBytes
        self.daemon = daemon
        self.owner = owner
        self.check = check
        self.secure = secure
    }

    /// The environment `[web]` and the rest of `config` describe.
    public init(configPath: String, config: Configuration, webSettings: WebSettings, checkExecutable: String = "/proc/self/exe") {
        self.init(configPath: configPath, pictures: config.images.files.isEmpty ? config.images.path : nil,
                  maxUploadBytes: webSettings.maxUploadBytes,
                  daemon: DaemonLink(socketPath: config.control.socket),
                  owner: OwnerPassword(folder: webSettings.state),
                  check: UploadCheck(executable: checkExecutable, maxPixels: config.images.maxPixels))
    }
}

/// The page's router: the pages, their actions, the guards every request
/// passes (security headers, same origin, the session).
public enum WebApp {
    /// At most this many files in one upload request, and this many bytes
    /// of it that are not a file's contents (part headers, form fields).
    static let maxFilesPerRequest = 100
    static let maxOverheadBytes = 1 << 20

    /// The session cookie's name, and where the session middleware keeps sessions.
    static let sessionCookie = "carouseld_session"
    static let sessionKeyPrefix = "hbs."

    /// Whether a WebSocket on `/live` is taken: a signed-in browser on this
    /// page (its session cookie, its Origin), and then the live view's
    /// messages until it leaves.
    public static func liveUpgrade(_ head: HTTPRequest, sessions: any PersistDriver, live: LiveView) async
        -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>>
    {
        guard head.path == "/live", let host = head.authority, let origin = head.headerFields[.origin],
              origin == "http://" + host || origin == "https://" + host else { return .dontUpgrade }
        let cookies = head.headerFields[values: .cookie].flatMap { $0.split(separator: ";") }
        guard let id = cookies.lazy.map({ $0.trimmingCharacters(in: .whitespaces) })
                .first(where: { $0.hasPrefix(sessionCookie + "=") })?.dropFirst(sessionCookie.count + 1),
              (try? await sessions.get(key: sessionKeyPrefix + id, as: WebSession.self)) != nil
        else { return .dontUpgrade }
        return .upgrade([:]) { inbound, outbound, _ in
            let (watcher, messages) = await live.watch()
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await message in messages {
                        do { try await outbound.write(.text(message)) } catch { break }
                    }
                }
                // The browser says nothing; its leaving ends the inbound stream.
                group.addTask {
                    do { for try await _ in inbound {} } catch {}
                }
                await group.next()
                group.cancelAll()
            }
            await live.leave(watcher)
        }
    }

    public static func router(_ env: WebEnvironment, sessions: any PersistDriver, live: LiveView, records: WebRecords,
                              limiter: LoginLimiter = LoginLimiter()) -> Router<WebContext>
    {
        let router = Router(context: WebContext.self)
        router.add(middleware: SecurityHeaders())
        router.add(middleware: SameOrigin())
        var sessionConfiguration = SessionMiddlewareConfiguration(
            sessionCookieParameters: .init(name: sessionCookie, path: "/", secure: env.secure, sameSite: .strict),
            defaultSessionExpiration: .seconds(60 * 60 * 24 * 30))
        sessionConfiguration.sessionCookieParameters.secure = env.secure
        router.add(middleware: SessionMiddleware(storage: sessions, configuration: sessionConfiguration))

        router.get("/static/style.css") { _, _ in asset(Assets.css, type: "text/css; charset=utf-8") }
        router.get("/static/icon.svg") { _, _ in asset(Assets.icon, type: "image/svg+xml") }
        router.get("/favicon.ico") { _, _ in Response.redirect(to: "/static/icon.svg", type: .permanent) }
        router.get("/static/app.js") { _, _ in asset(Assets.script, type: "text/javascript; charset=utf-8") }

        router.get("/") { _, context in
            Response.redirect(to: context.sessions.session == nil ? "/login" : "/now", type: .found)
        }

        // MARK: Signing in and out

        router.get("/login") { _, context in
            if context.sessions.session != nil { return Response.redirect(to: "/now", type: .found) }
            return html(loginPage(env: env, problem: nil))
        }
        router.post("/login") { request, context in
            let form = try await formFields(request, context: context)
            if let wait = await limiter.wait() {
                var response = html(loginPage(env: env, problem: "Too many wrong passwords: try again in \(wait) s."),
                                    status: .tooManyRequests)
                response.headers[.retryAfter] = String(wait)
                return response
            }
            let password = form["password"] ?? ""
            let owner = env.owner
            let right = await Task.detached { owner.verify(password) }.value
            guard right else {
                await limiter.failed()
                return html(loginPage(env: env, problem: env.owner.isSet ? "That is not the password." : nil),
                            status: .unauthorized)
            }
            // A new session id at every sign-in: an id planted before it is worth nothing.
            context.sessions.createSession(WebSession(role: .owner))
            return Response.redirect(to: "/now", type: .normal)
        }
        router.post("/logout") { _, context in
            context.sessions.clearSession()
            return Response.redirect(to: "/login", type: .normal)
        }

        // MARK: First run and guests

        // A code on the frame's screen, while no owner's password is set.
        router.post("/setup/code") { _, _ in
            guard !env.owner.isSet else { throw HTTPError(.conflict, message: "the owner's password is set already") }
            _ = try? await env.daemon.ask(.declared(PairingWords.ask(.setup)))
            return Response.redirect(to: "/setup", type: .normal)
        }
        router.get("/setup") { _, _ in
            guard !env.owner.isSet else { return Response.redirect(to: "/login", type: .found) }
            return html(setupPage(problem: nil))
        }
        router.post("/setup") { request, context in
            guard !env.owner.isSet else { throw HTTPError(.conflict, message: "the owner's password is set already") }
            let form = try await formFields(request, context: context)
            if let wait = await limiter.wait() {
                var response = html(setupPage(problem: "Too many wrong codes: try again in \(wait) s."), status: .tooManyRequests)
                response.headers[.retryAfter] = String(wait)
                return response
            }
            let password = form["password"] ?? ""
            guard password == form["again"] else {
                return html(setupPage(problem: "The two passwords differ."), status: .unprocessableContent)
            }
            if let problem = OwnerPassword.problem(with: password) {
                return html(setupPage(problem: problem.prefix(1).uppercased() + problem.dropFirst() + "."), status: .unprocessableContent)
            }
            guard let code = form["code"]?.filter(\.isNumber), code.count == 6 else {
                return html(setupPage(problem: "The code is the six digits on the frame's screen."), status: .unprocessableContent)
            }
            switch try? await env.daemon.ask(.declared(PairingWords.redeem(.setup, code: code))) {
            case .ok?:
                do {
                    try env.owner.set(password)
                } catch {
                    throw HTTPError(.internalServerError, message: "the password cannot be kept: \(error)")
                }
                context.sessions.createSession(WebSession(role: .owner))
                return Response.redirect(to: "/now", type: .normal)
            case let .error(message)?:
                await limiter.failed()
                return html(setupPage(problem: message.prefix(1).uppercased() + message.dropFirst() + "."), status: .unauthorized)
            case nil:
                throw HTTPError(.serviceUnavailable, message: "the frame does not answer")
            }
        }

        router.get("/pair") { _, context in
            if context.sessions.session != nil { return Response.redirect(to: "/now", type: .found) }
            return html(pairPage(problem: nil))
        }
        router.post("/pair") { request, context in
            let form = try await formFields(request, context: context)
            if let wait = await limiter.wait() {
                var response = html(pairPage(problem: "Too many wrong codes: try again in \(wait) s."), status: .tooManyRequests)
                response.headers[.retryAfter] = String(wait)
                return response
            }
            guard let code = form["code"]?.filter(\.isNumber), code.count == 6 else {
                return html(pairPage(problem: "The code is the six digits on the frame's screen."), status: .unprocessableContent)
            }
            switch try? await env.daemon.ask(.declared(PairingWords.redeem(.guest, code: code))) {
            case .ok?:
                let device = try await records.addGuest(named: form["name"] ?? "")
                context.sessions.createSession(WebSession(role: .guest, device: device.id))
                return Response.redirect(to: "/now", type: .normal)
            case let .error(message)?:
                await limiter.failed()
                return html(pairPage(problem: message.prefix(1).uppercased() + message.dropFirst() + "."), status: .unauthorized)
            case nil:
                throw HTTPError(.serviceUnavailable, message: "the frame does not answer")
            }
        }
        // The owner: a guest's code on the frame's screen (and on this page), and revoking a guest.
        router.post("/guests/pair") { request, context in
            let role = try await owner(request, context, records)
            var code: String?
            if case let .ok(fields)? = try? await env.daemon.ask(.declared(PairingWords.ask(.guest))) {
                code = fields["code"]?.stringValue
            }
            return html(GuestsSection.render(await records.allGuests, code: code ?? "")
                            + SettingsPage.render(config: env.configPath, problem: nil),
                        role: role, title: "Settings", current: "settings")
        }
        router.post("/guests/revoke") { request, context in
            _ = try await owner(request, context, records)
            let form = try await formFields(request, context: context)
            guard let id = form["id"], try await records.revoke(id) else {
                throw HTTPError(.notFound, message: "no such guest")
            }
            return Response.redirect(to: "/settings", type: .normal)
        }

        // MARK: Now

        router.get("/now") { request, context in
            let role = try await signedIn(request, context, records)
            let status = try? await env.daemon.ask(.status)
            return html(nowPage(status: status, generation: await live.currentGeneration), role: role, title: "Now",
                        current: "now")
        }
        router.get("/now.png") { request, context in
            _ = try await signedIn(request, context, records)
            do {
                let png = try await live.picture()
                return Response(status: .ok, headers: [.contentType: "image/png", .cacheControl: "no-store"],
                                body: .init(byteBuffer: ByteBuffer(bytes: png)))
            } catch {
                throw HTTPError(.serviceUnavailable, message: "no picture from the frame: \(error)")
            }
        }
        router.post("/drive/:action") { request, context in
            _ = try await signedIn(request, context, records)
            let request2: ControlRequest
            switch context.parameters.get("action") {
            case "next": request2 = .next
            case "prev": request2 = .prev
            case "pause": request2 = .pause
            case "play": request2 = .play
            default: throw HTTPError(.notFound, message: "no such action")
            }
            let reply: ControlReply
            do {
                reply = try await env.daemon.ask(request2)
            } catch {
                throw HTTPError(.serviceUnavailable, message: "\(error)")
            }
            if case let .error(message) = reply { throw HTTPError(.conflict, message: message) }
            if request.headers[.accept]?.contains("application/json") == true {
                return Response(status: .ok, headers: [.contentType: "application/json"],
                                body: .init(byteBuffer: ByteBuffer(string: reply.line)))
            }
            return Response.redirect(to: "/now", type: .normal)
        }

        // MARK: Status

        router.get("/status") { request, context in
            let role = try await signedIn(request, context, records)
            let status = try? await env.daemon.ask(.status)
            let config = try? readConfiguration(env.configPath, for: .web)
            return html(StatusPage.render(status: status, config: config, pictures: env.pictures), role: role,
                        title: "Status", current: "status")
        }

        // MARK: Settings

        router.get("/settings") { request, context in
            let role = try await owner(request, context, records)
            return html(GuestsSection.render(await records.allGuests, code: nil)
                            + SettingsPage.render(config: env.configPath, problem: nil),
                        role: role, title: "Settings", current: "settings")
        }
        router.post("/settings") { request, context in
            let role = try await owner(request, context, records)
            let form = try await formFields(request, context: context)
            guard let key = form["key"], let value = form["value"] else {
                throw HTTPError(.badRequest, message: "a setting needs its key and its value")
            }
            let reply: ControlReply
            do {
                reply = try await env.daemon.ask(.keep(key: key, value: value))
            } catch {
                throw HTTPError(.serviceUnavailable, message: "\(error)")
            }
            if case let .error(message) = reply {
                return html(SettingsPage.render(config: env.configPath, problem: (key, value, message)), role: role,
                            title: "Settings", current: "settings", status: .unprocessableContent)
            }
            return Response.redirect(to: "/settings#k-" + urlSegmentEscaped(key), type: .normal)
        }
        router.post("/settings/reset") { request, context in
            let role = try await owner(request, context, records)
            let form = try await formFields(request, context: context)
            guard let key = form["key"] else { throw HTTPError(.badRequest, message: "reset needs a key") }
            let reply: ControlReply
            do {
                reply = try await env.daemon.ask(.forget(key: key))
            } catch {
                throw HTTPError(.serviceUnavailable, message: "\(error)")
            }
            if case let .error(message) = reply {
                return html(SettingsPage.render(config: env.configPath, problem: (key, "reset", message)), role: role,
                            title: "Settings", current: "settings", status: .unprocessableContent)
            }
            return Response.redirect(to: "/settings#k-" + urlSegmentEscaped(key), type: .normal)
        }

        // MARK: Photos

        router.get("/photos") { request, context in
            let who = try await session(request, context, records)
            let list = try? await env.daemon.ask(.list)
            return html(await photosPage(env: env, list: list, results: [], who: who, records: records), role: who.role,
                        title: "Photos", current: "photos")
        }
        router.post("/photos/delete") { request, context in
            let who = try await session(request, context, records)
            let form = try await formFields(request, context: context)
            guard let folder = env.pictures, let name = form["name"], Self.isPlainName(name) else {
                throw HTTPError(.badRequest, message: "no such picture")
            }
            let added = await records.addedBy(name)
            guard who.role == .owner || (added != nil && added == who.device) else {
                throw HTTPError(.forbidden, message: "a guest may delete only what it added")
            }
            guard unlink(folder + "/" + name) == 0 else {
                throw HTTPError(.notFound, message: "\(name) is not in the album")
            }
            try? await records.removed(name)
            return Response.redirect(to: "/photos", type: .normal)
        }
        router.post("/photos") { request, context in
            let who = try await session(request, context, records)
            let role = who.role
            guard let folder = env.pictures else {
                throw HTTPError(.conflict, message: "this frame's album is a list of files ([images] files): it takes no uploads")
            }
            let results = try await receiveUploads(request, folder: folder, env: env)
            for case let .success(name) in results { try? await records.added(name, by: who.uploader) }
            if request.headers[.accept]?.contains("application/json") == true {
                let items: [JSONValue] = results.map { result in
                    switch result {
                    case let .success(name): .object(["ok": .bool(true), "name": .string(name)])
                    case let .failure(error): .object(["ok": .bool(false), "error": .string(error.message)])
                    }
                }
                let allFailed = !results.isEmpty && results.allSatisfy { if case .failure = $0 { true } else { false } }
                let status: HTTPResponse.Status = allFailed
                    ? .init(code: results.compactMap { if case let .failure(e) = $0 { e.status } else { nil } }.first ?? 400)
                    : .ok
                var line = ""
                JSONValue.object(["files": .array(items)]).encode(into: &line)
                return Response(status: status, headers: [.contentType: "application/json"],
                                body: .init(byteBuffer: ByteBuffer(string: line)))
            }
            let list = try? await env.daemon.ask(.list)
            return html(await photosPage(env: env, list: list, results: results, who: who, records: records), role: role,
                        title: "Photos", current: "photos")
        }
        return router
    }

    // MARK: - Pieces

    /// The session's role; a request without one is sent to sign in (a
    /// page) or refused (anything else).
    static func signedIn(_ request: Request, _ context: WebContext, _ records: WebRecords) async throws -> WebRole {
        try await session(request, context, records).role
    }

    /// The session of a signed-in browser: a guest's only while its device
    /// is paired (the owner revokes it: its next request is refused). A
    /// request without one is sent to sign in (a page) or refused.
    static func session(_ request: Request, _ context: WebContext, _ records: WebRecords) async throws -> WebSession {
        if let session = context.sessions.session {
            guard let device = session.device else { return session }
            if await records.guest(device) != nil { return session }
            context.sessions.clearSession()
        }
        if request.method == .get, request.uri.path != "/now.png" {
            throw RedirectToLogin()
        }
        throw HTTPError(.unauthorized, message: "sign in first")
    }

    /// The owner's session; a guest's is refused.
    static func owner(_ request: Request, _ context: WebContext, _ records: WebRecords) async throws -> WebRole {
        let session = try await session(request, context, records)
        guard session.role == .owner else {
            throw HTTPError(.forbidden, message: "only the frame's owner may do this")
        }
        return .owner
    }

    static func asset(_ text: String, type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type, .cacheControl: "max-age=3600"],
                 body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func html(_ body: String, role: WebRole? = nil, title: String? = nil, current: String? = nil,
                     status: HTTPResponse.Status = .ok) -> Response {
        let page = title.map { Page.render(title: $0, current: current, signedIn: role, body: body) } ?? body
        return Response(status: status, headers: [.contentType: "text/html; charset=utf-8"],
                        body: .init(byteBuffer: ByteBuffer(string: page)))
    }

    /// An urlencoded form's fields (at most 4 KiB of them).
    static func formFields(_ request: Request, context: WebContext) async throws -> [String: String] {
        guard request.headers[.contentType]?.hasPrefix("application/x-www-form-urlencoded") == true else {
            throw HTTPError(.unsupportedMediaType, message: "expected a form")
        }
        var request = request
        let buffer = try await request.collectBody(upTo: 4096)
        var fields: [String: String] = [:]
        for pair in String(buffer: buffer).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = parts.first.flatMap({ formDecoded($0) }) else { continue }
            fields[key] = parts.count > 1 ? formDecoded(parts[1]) ?? "" : ""
        }
        return fields
    }

    static func formDecoded(_ text: Substring) -> String? {
        String(text.replacingOccurrences(of: "+", with: " ")).removingPercentEncoding
    }

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

    static func nowPage(status: ControlReply?, generation: Int) -> String {
        var line = "The frame does not answer."
        var paused = false
        if case let .ok(fields)? = status {
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
            out += "<h2>In the album (\(images.count))</h2><ul class=\"album\">"
            for image in images {
                guard let path = image.stringValue else { continue }
                let name = path.split(separator: "/").last.map(String.init) ?? path
                let added = await records.addedBy(name)
                let mayDelete = who.role == .owner || (added != nil && added == who.device)
                out += "<li><span>\(htmlEscaped(name))</span>"
                if mayDelete, !path.dropLast(name.count + 1).contains("/") || env.pictures.map({ path == $0 + "/" + name }) == true {
                    out += "<form method=\"post\" action=\"/photos/delete\" class=\"delete\"><input type=\"hidden\" name=\"name\" "
                        + "value=\"\(htmlEscaped(name))\"><button type=\"submit\" aria-label=\"Delete \(htmlEscaped(name))\">Delete</button></form>"
                }
                out += "</li>"
            }
            out += "</ul>"
        } else {
            out += "<p class=\"problem\">The frame does not answer.</p>"
        }
        return out
    }

    // MARK: Uploads

    /// Reads a multipart body as it arrives, each file into its own
    /// `UploadFile`, checked and named when it is whole. Returns what became
    /// of each file; throws (and keeps nothing of the file in progress)
    /// when the request itself is refused.
    static func receiveUploads(_ request: Request, folder: String, env: WebEnvironment) async throws
        -> [Result<String, UploadError>]
    {
        guard let type = request.headers[.contentType], let boundary = multipartBoundary(type) else {
            throw HTTPError(.unsupportedMediaType, message: "expected multipart/form-data")
        }
        if let length = request.headers[.contentLength].flatMap(Int.init),
           length > env.maxUploadBytes * maxFilesPerRequest + maxOverheadBytes {
            throw HTTPError(.contentTooLarge, message: "more than \(maxFilesPerRequest) files of [web] max_upload_mb at once")
        }
        let receiver = UploadReceiver(folder: folder, limit: env.maxUploadBytes)
        let parser = MultipartParser(boundary: boundary)
        parser.onHeader = { name, value in receiver.header(name, value) }
        parser.onBody = { buffer in receiver.body(&buffer) }
        parser.onPartComplete = { receiver.partComplete() }
        var results: [Result<String, UploadError>] = []
        do {
            for try await chunk in request.body {
                receiver.fed += chunk.readableBytes
                do {
                    try parser.execute(chunk)
                } catch {
                    throw HTTPError(.badRequest, message: "the upload is not a well-formed multipart body")
                }
                receiver.checkOverhead()
                if let refusal = receiver.refusal { throw HTTPError(refusal.httpStatus, message: refusal.message) }
                for file in receiver.takeFinished() {
                    results.append(await finish(file, env: env))
                }
            }
        } catch {
            receiver.discardAll()
            throw error
        }
        receiver.discardAll()
        if results.isEmpty { throw HTTPError(.badRequest, message: "the upload held no file") }
        return results
    }

    static func finish(_ file: Result<UploadFile, UploadError>, env: WebEnvironment) async -> Result<String, UploadError> {
        switch file {
        case let .failure(error): return .failure(error)
        case let .success(file):
            let check = env.check
            let sent = file.stem + "." + file.ext
            do {
                return .success(try await file.finish { path in
                    await Task.detached { check.problem(path: path, name: sent) }.value
                })
            } catch {
                return .failure(error)
            }
        }
    }

    static func multipartBoundary(_ contentType: String) -> String? {
        let parts = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.first?.lowercased() == "multipart/form-data" else { return nil }
        for part in parts.dropFirst() where part.lowercased().hasPrefix("boundary=") {
            var value = String(part.dropFirst("boundary=".count))
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            guard (1...70).contains(value.utf8.count) else { return nil }
            return value
        }
        return nil
    }
}

/// A signed-out browser asking for a page is sent to sign in.
struct RedirectToLogin: HTTPResponseError {
    var status: HTTPResponse.Status { .seeOther }
    func response(from request: Request, context: some RequestContext) throws -> Response {
        Response.redirect(to: "/login", type: .normal)
    }
}

extension UploadError {
    var httpStatus: HTTPResponse.Status { .init(code: status) }
}

/// The state of one multipart body being read: the part in progress, the
/// files done and waiting to be checked, the bytes that are not file contents.
final class UploadReceiver {
    let folder: String
    let limit: Int
    private var headers: [String: String] = [:]
    private var current: Result<UploadFile, UploadError>?
    /// A part without a file name (a form field): its bytes only count.
    private var inField = false
    private var finished: [Result<UploadFile, UploadError>] = []
    private var files = 0
    private var contents = 0
    var fed = 0
    var refusal: UploadError?

    init(folder: String, limit: Int) {
        self.folder = folder
        self.limit = limit
    }

    func header(_ name: String, _ value: String) {
        headers[name.lowercased()] = value
    }

    private func startPart() {
        guard current == nil, !inField else { return }
        guard let filename = Self.filename(headers["content-disposition"] ?? "") else {
            inField = true
            return
        }
        files += 1
        if files > WebApp.maxFilesPerRequest {
            refusal = UploadError("at most \(WebApp.maxFilesPerRequest) files at once", status: 413)
            current = .failure(refusal!)
            return
        }
        switch UploadName.safe(filename) {
        case let .failure(error): current = .failure(error)
        case let .success((stem, ext)):
            do {
                current = .success(try UploadFile(folder: folder, stem: stem, ext: ext, limit: limit))
            } catch {
                current = .failure(error)
                if error.status >= 500 { refusal = error }
            }
        }
    }

    func body(_ buffer: inout ByteBuffer) {
        startPart()
        if case let .success(file)? = current {
            contents += buffer.readableBytes
            buffer.withUnsafeReadableBytes { file.append($0) }
            // One file over the limit ends the request: the sender is told at once.
            if let failure = file.failed, failure.status == 413 || failure.status == 507 { refusal = failure }
        }
    }

    /// Refuses a body with more than `maxOverheadBytes` that are no file's
    /// contents (an endless preamble, endless part headers, fields), past
    /// what the parser may hold back while it looks for a boundary.
    func checkOverhead() {
        if refusal == nil, fed - contents > WebApp.maxOverheadBytes + 4096 {
            refusal = UploadError("the upload holds more than \(WebApp.maxOverheadBytes >> 10) KiB besides its files")
        }
    }

    func partComplete() {
        startPart()
        if let current { finished.append(current) }
        current = nil
        inField = false
        headers = [:]
    }

    func takeFinished() -> [Result<UploadFile, UploadError>] {
        defer { finished = [] }
        return finished
    }

    func discardAll() {
        if case let .success(file)? = current { file.discard() }
        for case let .success(file) in finished { file.discard() }
        current = nil
        finished = []
    }

    /// `filename="..."` of a Content-Disposition (`filename*=` first).
    static func filename(_ disposition: String) -> String? {
        for raw in disposition.split(separator: ";") {
            let part = raw.trimmingCharacters(in: .whitespaces)
            if part.lowercased().hasPrefix("filename*=") {
                let value = part.dropFirst("filename*=".count)
                if let quote = value.range(of: "''") { return String(value[quote.upperBound...]).removingPercentEncoding }
            }
        }
        for raw in disposition.split(separator: ";") {
            let part = raw.trimmingCharacters(in: .whitespaces)
            if part.lowercased().hasPrefix("filename=") {
                var value = String(part.dropFirst("filename=".count))
                if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
                return value.replacingOccurrences(of: "\\\"", with: "\"")
            }
        }
        return nil
    }
}
