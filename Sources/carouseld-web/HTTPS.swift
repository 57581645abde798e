import CarouselConfig
import CarouselPlatform
import CarouselWeb
import CarouselWebWords
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOSSL

/// Why `[web] certificate` and `key` cannot serve the page: one line.
struct TLSSetupError: Error, CustomStringConvertible {
    let description: String
}

/// The page's TLS from `[web] certificate` and `key` (nil: plain HTTP):
/// read whole (64 KiB at most each), parsed, and tried together once here,
/// so that a wrong file stops the start with one line, not a handshake later.
func pageTLS(_ web: WebSettings) throws(TLSSetupError) -> TLSConfiguration? {
    guard let certificatePath = web.certificate, let keyPath = web.key else { return nil }
    func read(_ path: String, _ what: String) throws(TLSSetupError) -> [UInt8] {
        do { return try readFileBytes(path, limit: 64 << 10) } catch {
            throw TLSSetupError(description: "[web] \(what) \(path): \(error)")
        }
    }
    let certificateBytes = try read(certificatePath, "certificate")
    guard let chain = try? NIOSSLCertificate.fromPEMBytes(certificateBytes), !chain.isEmpty else {
        throw TLSSetupError(description: "[web] certificate \(certificatePath): no PEM certificate in it")
    }
    // A secret, by the house's rule (issue 44): its owner's alone.
    if let problem = SecretFile.problem(keyPath, key: "[web] key", reader: "carouseld-web runs as") {
        throw TLSSetupError(description: problem)
    }
    let keyBytes = try read(keyPath, "key")
    guard let key = try? NIOSSLPrivateKey(bytes: keyBytes, format: .pem) else {
        throw TLSSetupError(description: "[web] key \(keyPath): not a PEM private key")
    }
    var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) },
                                                       privateKey: .privateKey(key))
    tls.minimumTLSVersion = .tlsv12
    do {
        _ = try NIOSSLContext(configuration: tls)
    } catch {
        throw TLSSetupError(description: "[web] key \(keyPath) is not the key of certificate \(certificatePath)")
    }
    return tls
}

/// Plain HTTP beside HTTPS: every request sent on to the page over HTTPS.
func redirectToHTTPS(at address: BindAddress, httpsAddress: WebListen, idleTimeout: Int,
                     onRunning: @escaping @Sendable () async -> Void, logger: Logger) -> some ApplicationProtocol {
    let router = Router()
    router.add(middleware: SecurityHeaders())
    router.add(middleware: RedirectToHTTPS(portSuffix: httpsAddress.httpsPortSuffix))
    return Application(
        router: router,
        server: .http1(configuration: .init(idleTimeout: .seconds(Int64(idleTimeout)))),
        configuration: .init(address: address, serverName: nil, availableConnectionsDelegate: MaximumAvailableConnections(64)),
        onServerRunning: { _ in await onRunning() },
        logger: logger
    )
}

/// systemd hears READY=1 once every listener of the page listens: its socket
/// proxies connect to them from then on.
actor Readiness {
    private var waiting: Int
    private var serving: [String] = []

    init(listeners: Int) {
        waiting = listeners
    }

    func listening(_ what: String) {
        FileHandle.standardOutput.write(Data("carouseld-web: \(what)\n".utf8))
        serving.append(what)
        waiting -= 1
        if waiting == 0 { ServiceNotifier().ready(status: serving.joined(separator: "; ")) }
    }
}
