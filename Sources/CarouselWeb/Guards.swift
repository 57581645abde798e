import HTTPTypes
import Hummingbird
import HummingbirdAuth

/// What every response carries, error responses included: a strict
/// Content-Security-Policy (our own script and style only, no inline code,
/// no frames, forms posted to the page itself), no sniffing, no referrer
/// to other sites.
/// A handler's thrown error becomes its response here, so that it carries
/// them too, as plain text that no browser runs.
public struct SecurityHeaders<Context: RequestContext>: RouterMiddleware {
    public init() {}

    static var policy: String {
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; "
            + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPError {
            response = Self.plain(error.status, error.body ?? error.status.reasonPhrase)
        } catch let error as HTTPResponseError {
            response = try error.response(from: request, context: context)
        } catch {
            context.logger.error("web: \(request.method) \(request.uri.path): \(error)")
            response = Self.plain(.internalServerError, "the page failed; the frame runs on")
        }
        response.headers[.contentSecurityPolicy] = Self.policy
        response.headers[.xContentTypeOptions] = "nosniff"
        // same-origin, not no-referrer: under no-referrer a browser sends
        // `Origin: null` with the page's own form posts, which SameOrigin refuses.
        response.headers[.referrerPolicy] = "same-origin"
        response.headers[.xFrameOptions] = "DENY"
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }

    static func plain(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(status: status, headers: [.contentType: "text/plain; charset=utf-8"],
                 body: .init(byteBuffer: ByteBuffer(string: text + "\n")))
    }
}

/// Cross-site requests are refused: a request that changes anything (every
/// method but GET and HEAD) must say it comes from this page, by its
/// `Origin` (what browsers send with every POST), or by `Sec-Fetch-Site:
/// same-origin` where a browser sends no Origin. Neither, or another
/// origin: 403, before any handler runs. Over HTTPS, an `http://` origin is
/// another one.
struct SameOrigin<Context: RequestContext>: RouterMiddleware {
    let secure: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.method == .get || request.method == .head { return try await next(request, context) }
        guard Self.isSameOrigin(request, secure: secure) else {
            throw HTTPError(.forbidden, message: "refused: this request does not come from the frame's own page")
        }
        return try await next(request, context)
    }

    static func isSameOrigin(_ request: Request, secure: Bool) -> Bool {
        if let origin = request.headers[.origin] {
            return isPageOrigin(origin, authority: request.head.authority, secure: secure)
        }
        return request.headers[.secFetchSite] == "same-origin"
    }

    /// Whether `origin` is the page's own: the host the browser asked for,
    /// over HTTPS, or over HTTP when the page is served so (an `https://`
    /// origin is taken there too, for a proxy that ends TLS in front).
    static func isPageOrigin(_ origin: String, authority: String?, secure: Bool) -> Bool {
        guard let authority, !authority.isEmpty else { return false }
        return origin == "https://" + authority || (!secure && origin == "http://" + authority)
    }
}

/// With HTTPS, plain HTTP serves no page: every request is sent to the same
/// path over HTTPS. 302, not 301: a browser keeps a permanent redirect, and
/// a frame whose certificate is taken away again would be out of its reach.
public struct RedirectToHTTPS<Context: RequestContext>: RouterMiddleware {
    /// What follows the host in the HTTPS address (`""` for 443, `:8443`).
    let portSuffix: String

    public init(portSuffix: String) {
        self.portSuffix = portSuffix
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard let location = Self.location(authority: request.head.authority, target: request.uri.description,
                                           portSuffix: portSuffix) else {
            throw HTTPError(.badRequest, message: "refused: ask with the frame's address (a Host header)")
        }
        return Response.redirect(to: location, type: .found)
    }

    /// `https://` and the host asked for (its port dropped), `portSuffix`
    /// and the path asked for; nil when the request names no usable host.
    static func location(authority: String?, target: String, portSuffix: String) -> String? {
        guard var host = authority, !host.isEmpty else { return nil }
        let allowed: (Character) -> Bool
        if host.hasPrefix("[") {
            // An IPv6 address in brackets.
            guard let end = host.firstIndex(of: "]") else { return nil }
            host = String(host[...end])
            allowed = { $0.isHexDigit || $0 == ":" || $0 == "." || $0 == "[" || $0 == "]" }
        } else {
            // A name or an IPv4 address, its port dropped.
            if let colon = host.lastIndex(of: ":") { host = String(host[..<colon]) }
            allowed = { $0.isASCII && ($0.isLetter || $0.isNumber || "-._".contains($0)) }
        }
        guard host.count > (host.hasPrefix("[") ? 2 : 0), host.allSatisfy(allowed) else { return nil }
        return "https://" + host + portSuffix + (target.hasPrefix("/") ? target : "/")
    }
}

extension HTTPField.Name {
    static var secFetchSite: Self { .init("Sec-Fetch-Site")! }
    static var referrerPolicy: Self { .init("Referrer-Policy")! }
    static var xFrameOptions: Self { .init("X-Frame-Options")! }
}
