import HTTPTypes
import Hummingbird
import HummingbirdAuth

/// What every response carries, error responses included: a strict
/// Content-Security-Policy (our own script and style only, no inline code,
/// no frames, forms posted to the page itself), no sniffing, no referrer
/// to other sites.
/// A handler's thrown error becomes its response here, so that it carries
/// them too, as plain text that no browser runs.
struct SecurityHeaders<Context: RequestContext>: RouterMiddleware {
    static var policy: String {
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; "
            + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
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
/// origin: 403, before any handler runs.
struct SameOrigin<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.method == .get || request.method == .head { return try await next(request, context) }
        guard Self.isSameOrigin(request) else {
            throw HTTPError(.forbidden, message: "refused: this request does not come from the frame's own page")
        }
        return try await next(request, context)
    }

    static func isSameOrigin(_ request: Request) -> Bool {
        let host = request.head.authority
        if let origin = request.headers[.origin] {
            guard let host, !host.isEmpty else { return false }
            return origin == "http://" + host || origin == "https://" + host
        }
        return request.headers[.secFetchSite] == "same-origin"
    }
}

extension HTTPField.Name {
    static var secFetchSite: Self { .init("Sec-Fetch-Site")! }
    static var referrerPolicy: Self { .init("Referrer-Policy")! }
    static var xFrameOptions: Self { .init("X-Frame-Options")! }
}
