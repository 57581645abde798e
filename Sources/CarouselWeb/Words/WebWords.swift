import CarouselCore
import CarouselWords

/// `[web]`: the frame's own page, served by `carouseld-web`.
public struct WebSettings: CapabilitySettings {
    /// Where the page is served when the process is started by hand: a host
    /// and port (`0.0.0.0:8080`), or `unix:PATH`. Under systemd the page is
    /// on port 80 through the socket unit, and this is the unit's own.
    public var listen = WebListen.tcp(host: "127.0.0.1", port: 8080)
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
        keys: keys.map(\.inBag))

    static let keys: [KeyDeclaration<WebSettings>] = [
        .text("web", "listen", "ADDRESS:PORT or unix:PATH", default: "127.0.0.1:8080", needs: .administer, help: """
            Where `carouseld-web` serves the page when started by hand (`0.0.0.0:8080` for the whole network). Under
            systemd it is on port 80 through carouseld-web.socket, and this key is not read.
            """) { s, v throws(ValueError) in s.listen = try WebListen(v) },
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
