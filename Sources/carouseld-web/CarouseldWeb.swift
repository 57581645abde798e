import ArgumentParser
import CarouselConfig
import CarouselImaging
import CarouselPlatform
import CarouselVideo
import CarouselWeb
import CarouselWebWords
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// `carouseld-web`: the frame's own page, a process of its own.
@main
struct CarouseldWeb: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "carouseld-web",
        abstract: "The frame's own page: a phone on the local network adds pictures and drives the frame.",
        subcommands: [Serve.self, SetPassword.self, CheckUpload.self, Thumbnail.self],
        defaultSubcommand: Serve.self
    )
}

/// The configuration file's text as a `Configuration`; a problem is one
/// line on standard error and exit status 2, as carouseld's own.
/// The file, its drop-ins and the frame's settings file, as the daemon reads them.
func loadConfiguration(_ path: String) throws -> Configuration {
    do {
        return try readConfiguration(path, for: .web)
    } catch {
        FileHandle.standardError.write(Data("carouseld-web: \(error)\n".utf8))
        throw ExitCode(2)
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Serve the page (the default).")

    @Option(name: .long, help: "The configuration file.")
    var config = "/etc/carouseld/carouseld.ini"

    @Option(name: .long, help: "Where to listen instead of [web] listen: ADDRESS:PORT or unix:PATH.")
    var listen: String?

    @Option(name: .long, help: "Where to serve HTTPS instead of [web] https_listen (with [web] certificate): ADDRESS:PORT or unix:PATH.")
    var httpsListen: String?

    @Option(name: .long, help: ArgumentHelp("Seconds a connection may stay silent, mid-request too.", visibility: .hidden))
    var idleTimeout = 30

    /// `option` read as an address, else `fallback`; a wrong one is exit status 2.
    func address(_ option: String?, _ flag: String, else fallback: WebListen) throws -> WebListen {
        do {
            return try option.map { try WebListen($0) } ?? fallback
        } catch {
            FileHandle.standardError.write(Data("carouseld-web: --\(flag) '\(option ?? "")': \(error)\n".utf8))
            throw ExitCode(2)
        }
    }

    func run() async throws {
        let config = try loadConfiguration(self.config)
        let web = config[WebSettings.self]
        let httpAddress = try address(listen, "listen", else: web.listen)
        let httpsAddress = try address(httpsListen, "https-listen", else: web.httpsListen)
        let tls: TLSConfiguration?
        do { tls = try pageTLS(web) } catch {
            FileHandle.standardError.write(Data("carouseld-web: \(error)\n".utf8))
            throw ExitCode(2)
        }
        var env = WebEnvironment(configPath: self.config, config: config, webSettings: web)
        env.secure = tls != nil
        let secure = env.secure
        let sessions = MemoryPersistDriver()
        let live = LiveView(daemon: env.daemon)
        let records = WebRecords(folder: web.state)
        let thumbnails = Thumbnails(folder: web.state + "/thumbnails", maxPixels: config.images.maxPixels)
        let router = WebApp.router(env, sessions: sessions, live: live, records: records, thumbnails: thumbnails)
        var logger = Logger(label: "carouseld-web")
        logger.logLevel = .notice
        let pageAddress = tls == nil ? httpAddress : httpsAddress
        let readiness = Readiness(listeners: tls == nil ? 1 : 2)
        // The live view's WebSocket (/live) beside HTTP/1.1, over TLS when
        // given; a connection that asks nothing within the idle time-out is closed.
        let limit = TimeAmount.seconds(Int64(idleTimeout))
        let page = HTTPServerBuilder { responder in
            let http = FirstRequestWithin(base: HTTP1WebSocketUpgradeChannel(
                responder: responder, configuration: .init(http1: .init(idleTimeout: limit))) {
                    head, _, _ in await WebApp.liveUpgrade(head, sessions: sessions, live: live, records: records, secure: secure)
                }, limit: limit)
            return try tls.map { try TLSChannel(http, tlsConfiguration: $0) } ?? http
        }
        // With HTTPS, plain HTTP beside it sends every browser there.
        let redirect = tls.map { _ in
            redirectToHTTPS(at: bind(httpAddress), httpsAddress: httpsAddress, idleTimeout: idleTimeout,
                            onRunning: { await readiness.listening("sending HTTP on \(httpAddress) to HTTPS") }, logger: logger)
        }
        let app = Application(
            router: router,
            server: page,
            // A phone or two, and their browsers' parallel connections: 64
            // at once at most, so that held-open connections cannot exhaust
            // the process's descriptors.
            configuration: .init(address: bind(pageAddress), serverName: nil, availableConnectionsDelegate: MaximumAvailableConnections(64)),
            services: redirect.map { [sessions, $0] } ?? [sessions],
            // Type=notify: systemd's socket proxies are started once every
            // socket listens, never before.
            onServerRunning: { _ in await readiness.listening("serving the page on \(pageAddress)\(secure ? " (HTTPS)" : "")") },
            logger: logger
        )
        if let folder = env.pictures, case let left = removeLeftUploads(in: folder), left > 0 {
            let line = "carouseld-web: removed \(left) upload\(left == 1 ? "" : "s") left unfinished in \(folder)\n"
            FileHandle.standardOutput.write(Data(line.utf8))
        }
        if !env.owner.isSet {
            FileHandle.standardOutput.write(Data("carouseld-web: no owner's password yet: set one with `carouseld-web set-password`\n".utf8))
        }
        try await app.runService()
    }
}

/// Where Hummingbird binds `address`; a Unix socket left by an earlier run is removed first.
func bind(_ address: WebListen) -> BindAddress {
    switch address {
    case let .tcp(host, port): return .hostname(host, port: port)
    case let .unix(path):
        unlink(path)
        return .unixDomainSocket(path: path)
    }
}

struct SetPassword: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set-password",
        abstract: "Set the owner's password, read as one line on standard input."
    )

    @Option(name: .long, help: "The configuration file.")
    var config = "/etc/carouseld/carouseld.ini"

    func run() throws {
        let web = try loadConfiguration(config)[WebSettings.self]
        if isatty(0) != 0 { print("The owner's password (at least \(OwnerPassword.minimumLength) characters): ", terminator: "") }
        guard let line = readLine(strippingNewline: true) else {
            FileHandle.standardError.write(Data("carouseld-web: no password on standard input\n".utf8))
            throw ExitCode(2)
        }
        do {
            try OwnerPassword(folder: web.state).set(line)
        } catch {
            FileHandle.standardError.write(Data("carouseld-web: \(error)\n".utf8))
            throw ExitCode(1)
        }
        print("carouseld-web: the owner's password is set (\(web.state)/owner.bcrypt)")
    }
}

/// One thumbnail, in a process of its own: the picture (or a clip's first
/// frame) on descriptor 3, the WebP into descriptor 4.
struct Thumbnail: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make the thumbnail of the file on descriptor 3 (carouseld-web's own helper).", shouldDisplay: false)

    @Option(name: .long) var maxPixels: Int
    @Option(name: .long) var name: String

    func run() throws {
        DecodingProcess.limitAddressSpace(maxPixels: maxPixels)
        let path = "/proc/self/fd/3"
        let side = Thumbnails.side
        let image: DecodedImage
        do {
            if ClipName.isClip(name) {
                image = try VideoDecoder.poster(path: path, maxPixels: maxPixels, maxSide: side * 2, process: nil)
            } else {
                ImageDecoder.heifProcess = nil
                image = try ImageDecoder.decode(path: path, targetSize: PixelSize(width: side, height: side), fit: .cover,
                                                maxPixels: maxPixels)
            }
        } catch {
            throw ExitCode(1)
        }
        guard let webp = Thumbnails.encode(image) else { throw ExitCode(1) }
        _ = webp.withUnsafeBytes { write(4, $0.baseAddress, $0.count) }
    }
}

/// The check of one uploaded file, in a process of its own: the file on
/// descriptor 3, the verdict's one line into descriptor 4.
struct CheckUpload: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-upload",
        abstract: "Check the upload on descriptor 3 (carouseld-web's own helper).",
        shouldDisplay: false
    )

    @Option(name: .long) var maxPixels: Int
    @Option(name: .long) var name: String

    func run() throws {
        DecodingProcess.limitAddressSpace(maxPixels: maxPixels)
        let path = "/proc/self/fd/3"
        let verdict: String?
        if ClipName.isClip(name) {
            do {
                _ = try VideoDecoder.poster(path: path, maxPixels: maxPixels, maxSide: 256, process: nil)
                verdict = nil
            } catch {
                verdict = "not a clip the frame can play: \(error.reason)"
            }
        } else {
            ImageDecoder.heifProcess = nil
            do {
                _ = try ImageDecoder.decode(path: path, targetSize: PixelSize(width: 256, height: 256), fit: .contain,
                                            maxPixels: maxPixels)
                verdict = nil
            } catch {
                verdict = "not a picture the frame can show: \(error.message)"
            }
        }
        if let verdict {
            let bytes = Array(verdict.utf8)
            _ = bytes.withUnsafeBytes { write(4, $0.baseAddress, $0.count) }
            throw ExitCode(1)
        }
    }
}
