import CarouselCore
import CarouselWords

/// `[web]`: the frame's own page, served by `carouseld-web`.
public struct WebSettings: CapabilitySettings {
    /// Where the page is served when the process is started by hand: a host
    /// and port (`0.0.0.0:8080`), or `unix:PATH`. Under systemd the page is
    /// on port 80 through the socket unit, and this is the unit's own. With
    /// a certificate, what is asked here is sent on to HTTPS.
    public var listen = WebListen.tcp(host: "127.0.0.1", port: 8080)
    /// The certificate chain (PEM) the page is served over HTTPS with; nil:
    /// plain HTTP. Given with `key`, never alone.
    public var certificate: String?
    /// The certificate's private key (PEM).
    public var key: String?
    /// Where the page is served over HTTPS when started by hand (with a
    /// certificate): `listen` then only sends browsers here. Under systemd
    /// it is port 443 through carouseld-web-https.socket.
    public var httpsListen = WebListen.tcp(host: "127.0.0.1", port: 8443)
    /// The largest file one upload may be, in bytes.
    public var maxUploadBytes = 512 << 20
    /// The web's own state: the owner's password hash, the uploads' owners.
    public var state = "/var/lib/carouseld-web"
    /// The user `carouseld-web` runs as: the daemon gives that user's
    /// connections to the control socket the web's grant (`Grant.web`),
    /// whatever the web process asks.
    public var user = "carouseld-web"

    public init() {}
}

/// Where `carouseld-web` listens.
public enum WebListen: Equatable, Sendable, CustomStringConvertible {
    case tcp(host: String, port: Int)
    case unix(path: String)

    /// What a browser adds to `https://HOST` to reach the page served here
    /// over HTTPS: nothing for port 443 and for a Unix socket (systemd's
    /// socket on 443 passes it on), else `:PORT`.
    public var httpsPortSuffix: String {
        switch self {
        case let .tcp(_, port): port == 443 ? "" : ":\(port)"
        case .unix: ""
        }
    }

    /// Reads `HOST:PORT` (`[::1]:8080` for IPv6) or `unix:/ABSOLUTE/PATH`.
    public init(_ text: String) throws(ValueError) {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            guard path.hasPrefix("/"), path.utf8.count < 108 else {
                throw ValueError("expected unix: and an absolute path shorter than 108 bytes")
            }
            self = .unix(path: path)
            return
        }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
              (1...65535).contains(port) else {
            throw ValueError("expected ADDRESS:PORT (0.0.0.0:8080, [::]:8080) or unix:PATH")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == "." || $0 == ":" || $0.isLetter || $0 == "-" }) else {
            throw ValueError("expected ADDRESS:PORT (0.0.0.0:8080, [::]:8080) or unix:PATH")
        }
        self = .tcp(host: host, port: port)
    }

    public var description: String {
        switch self {
        case let .tcp(host, port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case let .unix(path): "unix:" + path
        }
    }
}

/// What the frame's page says to the world: `[web]`.
public enum WebWords {
    public static let words = CapabilityWords(
        name: "the web page",
        sections: [SectionSpec(name: "web", help: """
            The frame's own page (`carouseld-web`): a phone on the local network adds pictures and drives the frame.
            """)],
        keys: keys.map(\.inBag),
        check: { settings in
            let web = settings[WebSettings.self]
            switch (web.certificate, web.key) {
            case (nil, nil), (.some, .some): return nil
            case (.some, nil): return "[web] certificate is set without key: HTTPS needs both (or neither, for HTTP)"
            case (nil, .some): return "[web] key is set without certificate: HTTPS needs both (or neither, for HTTP)"
            }
        })

    static let keys: [KeyDeclaration<WebSettings>] = [
        .text("web", "listen", "ADDRESS:PORT or unix:PATH", default: "127.0.0.1:8080", needs: .administer, help: """
            Where `carouseld-web` serves the page when started by hand (`0.0.0.0:8080` for the whole network). Under
            systemd it is on port 80 through carouseld-web.socket, and this key is not read.
            """) { s, v throws(ValueError) in s.listen = try WebListen(v) },
        .text("web", "certificate", "an absolute path or empty", default: "", needs: .administer, help: """
            The certificate chain (PEM: the frame's certificate first) to serve the page over HTTPS with, given with
            `key`. Then the session cookie is `Secure`, and plain HTTP only sends the browser to HTTPS. Empty: plain
            HTTP. Read when carouseld-web starts: restart it after replacing the files.
            """) { s, v throws(ValueError) in s.certificate = try optionalAbsolutePath(v) },
        .text("web", "key", "an absolute path or empty", default: "", needs: .administer, help: """
            The certificate's private key (PEM): a secret, so carouseld-web's user's and readable by it alone
            (`carouseld-web`, mode 0600); a key others may read is refused with the `chmod` that fixes it. Empty: plain
            HTTP.
            """) { s, v throws(ValueError) in s.key = try optionalAbsolutePath(v) },
        .text("web", "https_listen", "ADDRESS:PORT or unix:PATH", default: "127.0.0.1:8443", needs: .administer, help: """
            Where `carouseld-web` serves the page over HTTPS when started by hand with a certificate (`0.0.0.0:443`
            for the whole network); `listen` then sends browsers here. Under systemd it is on port 443 through
            carouseld-web-https.socket, and this key is not read.
            """) { s, v throws(ValueError) in s.httpsListen = try WebListen(v) },
        .integer("web", "max_upload_mb", 1...16384, default: "512", needs: .configure, help: """
            The largest file one upload may be, in MiB (1 MiB = 1,048,576 bytes). A larger one is refused as it arrives,
            and nothing of it is kept.
            """) { $0.maxUploadBytes = $1 << 20 },
        .text("web", "state", "an absolute path", default: "/var/lib/carouseld-web", needs: .administer, help: """
            The page's own state: the owner's password hash (`carouseld-web set-password`) and who added which picture.
            """) { s, v throws(ValueError) in
            guard v.hasPrefix("/") else { throw ValueError("expected an absolute path") }
            s.state = v
        },
        .text("web", "user", "a user name", default: "carouseld-web", needs: .administer, help: """
            The user carouseld-web runs as (its unit's `User=`). The daemon gives that user's connections to the control
            socket the web page's grant (look, drive, tune, configure: never paths, devices, brokers or credentials),
            whatever the process asks.
            """) { s, v throws(ValueError) in
            guard !v.isEmpty, v.utf8.count <= 32, !v.contains(where: { $0 == ":" || $0 == "/" || $0.isWhitespace }) else {
                throw ValueError("expected a user name")
            }
            s.user = v
        },
    ]
}

/// An empty value (nil) or an absolute path.
private func optionalAbsolutePath(_ text: String) throws(ValueError) -> String? {
    if text.isEmpty { return nil }
    guard text.hasPrefix("/") else { throw ValueError("expected an absolute path, or nothing") }
    return text
}
