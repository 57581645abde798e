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
    public static func liveUpgrade(_ head: HTTPRequest, sessions: any PersistDriver, live: LiveView, records: WebRecords,
                                   secure: Bool) async
        -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>>
    {
        guard head.path == "/live", let origin = head.headerFields[.origin],
              SameOrigin<WebContext>.isPageOrigin(origin, authority: head.authority, secure: secure) else { return .dontUpgrade }
        let cookies = head.headerFields[values: .cookie].flatMap { $0.split(separator: ";") }
        guard let id = cookies.lazy.map({ $0.trimmingCharacters(in: .whitespaces) })
                .first(where: { $0.hasPrefix(sessionCookie + "=") })?.dropFirst(sessionCookie.count + 1),
              let session = try? await sessions.get(key: sessionKeyPrefix + id, as: WebSession.self)
        else { return .dontUpgrade }
        // A guest's only while it is paired: checked now, and before every message.
        let device = session.device
        if let device, await records.guest(device) == nil { return .dontUpgrade }
        return .upgrade([:]) { inbound, outbound, _ in
            let (watcher, messages) = await live.watch()
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await message in messages {
                        if let device, await records.guest(device) == nil { break }
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
                              thumbnails: Thumbnails, limiter: LoginLimiter = LoginLimiter()) -> Router<WebContext>
    {
        let router = Router(context: WebContext.self)
        router.add(middleware: SecurityHeaders())
        router.add(middleware: SameOrigin(secure: env.secure))
        let sessionConfiguration = SessionMiddlewareConfiguration(
            sessionCookieParameters: .init(name: sessionCookie, path: "/", secure: env.secure, sameSite: .strict),
            defaultSessionExpiration: .seconds(60 * 60 * 24 * 30))
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
            let password = form["password"] ?? ""
            guard password == form["again"] else {
                return html(setupPage(problem: "The two passwords differ."), status: .unprocessableContent)
            }
            if let problem = OwnerPassword.problem(with: password) {
                return html(setupPage(problem: problem.prefix(1).uppercased() + problem.dropFirst() + "."), status: .unprocessableContent)
            }
            if let refusal = await redeem(.setup, form, env: env, limiter: limiter, page: setupPage) { return refusal }
            do {
                try env.owner.set(password)
            } catch {
                throw HTTPError(.internalServerError, message: "the password cannot be kept: \(error)")
            }
            context.sessions.createSession(WebSession(role: .owner))
            return Response.redirect(to: "/now", type: .normal)
        }

        router.get("/pair") { _, context in
            if context.sessions.session != nil { return Response.redirect(to: "/now", type: .found) }
            return html(pairPage(problem: nil))
        }
        router.post("/pair") { request, context in
            let form = try await formFields(request, context: context)
            if let refusal = await redeem(.guest, form, env: env, limiter: limiter, page: pairPage) { return refusal }
            let device = try await records.addGuest(named: form["name"] ?? "")
            context.sessions.createSession(WebSession(role: .guest, device: device.id))
            return Response.redirect(to: "/now", type: .normal)
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
            guard let id = form["id"] else { throw HTTPError(.badRequest, message: "revoke needs a guest") }
            // (A `try await` inside the guard's condition crashed the optimizer's coroutine splitting, Swift 6.3.1.)
            let revoked = try await records.revoke(id)
            guard revoked else { throw HTTPError(.notFound, message: "no such guest") }
            return Response.redirect(to: "/settings", type: .normal)
        }

        // MARK: Now

        router.get("/now") { request, context in
            let role = try await signedIn(request, context, records)
            let status = try? await env.daemon.ask(.status)
            return html(nowPage(status: status, generation: await live.currentGeneration, role: role), role: role, title: "Now",
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
            let role = try await signedIn(request, context, records)
            let request2: ControlRequest
            switch context.parameters.get("action") {
            case "next": request2 = .next
            case "prev": request2 = .prev
            case "pause": request2 = .pause
            case "play": request2 = .play
            case "display-on": request2 = .display(.on)
            case "display-off": request2 = .display(.off)
            case "brightness":
                let form = try await formFields(request, context: context)
                guard let percent = form["percent"].flatMap(Int.init), (1...100).contains(percent) else {
                    throw HTTPError(.badRequest, message: "brightness takes 1 to 100")
                }
                request2 = .brightness(percent)
            // Hiding changes the frame's album: the owner's.
            case "hide" where role == .owner: request2 = .hide(name: nil)
            case "hide": throw HTTPError(.forbidden, message: "only the frame's owner may hide a picture")
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
            return Response.redirect(to: "/settings#k-" + percentEncoded(key), type: .normal)
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
            return Response.redirect(to: "/settings#k-" + percentEncoded(key), type: .normal)
        }

        // MARK: Photos

        router.get("/photos") { request, context in
            let who = try await session(request, context, records)
            let list = try? await env.daemon.ask(.list)
            return html(await photosPage(env: env, list: list, results: [], who: who, records: records), role: who.role,
                        title: "Photos", current: "photos")
        }
        router.get("/thumbnails/:name") { request, context in
            _ = try await signedIn(request, context, records)
            // The router hands the segment as it came: percent-encoded.
            guard let folder = env.pictures, let name = context.parameters.get("name")?.removingPercentEncoding,
                  Self.isPlainName(name),
                  let webp = await thumbnails.thumbnail(of: folder + "/" + name) else {
                throw HTTPError(.notFound, message: "no thumbnail")
            }
            return Response(status: .ok, headers: [.contentType: "image/webp", .cacheControl: "private, max-age=86400"],
                            body: .init(byteBuffer: ByteBuffer(bytes: webp)))
        }
        router.post("/photos/unhide") { request, context in
            _ = try await owner(request, context, records)
            let form = try await formFields(request, context: context)
            guard let name = form["name"] else { throw HTTPError(.badRequest, message: "unhide needs a name") }
            if case let .error(message)? = try? await env.daemon.ask(.unhide(name: name)) {
                throw HTTPError(.conflict, message: message)
            }
            return Response.redirect(to: "/photos", type: .normal)
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

    /// Uses the code of `kind` the form carries, once: nil when the daemon
    /// took it, else the page again with why not (too many wrong passwords
    /// and codes lately, not six digits, a wrong or old code, no answer).
    static func redeem(_ kind: PairingKind, _ form: [String: String], env: WebEnvironment, limiter: LoginLimiter,
                       page: (String?) -> String) async -> Response? {
        if let wait = await limiter.wait() {
            var response = html(page("Too many wrong codes: try again in \(wait) s."), status: .tooManyRequests)
            response.headers[.retryAfter] = String(wait)
            return response
        }
        guard let code = form["code"]?.filter(\.isNumber), code.count == 6 else {
            return html(page("The code is the six digits on the frame's screen."), status: .unprocessableContent)
        }
        switch try? await env.daemon.ask(.declared(PairingWords.redeem(kind, code: code))) {
        case .ok?:
            return nil
        case let .error(message)?:
            await limiter.failed()
            return html(page(message.prefix(1).uppercased() + message.dropFirst() + "."), status: .unauthorized)
        case nil:
            return html(page("The frame does not answer."), status: .serviceUnavailable)
        }
    }

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

}

/// A signed-out browser asking for a page is sent to sign in.
struct RedirectToLogin: HTTPResponseError {
    var status: HTTPResponse.Status { .seeOther }
    func response(from request: Request, context: some RequestContext) throws -> Response {
        Response.redirect(to: "/login", type: .normal)
    }
}
