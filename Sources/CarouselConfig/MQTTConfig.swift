import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// `[mqtt] broker`: where the broker listens, `mqtt://host:port` or
/// `mqtts://host:port` (TLS). The port may be left out: 1883, or 8883 with TLS.
public struct MQTTBroker: Equatable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var tls: Bool

    public init(host: String, port: Int, tls: Bool) {
        self.host = host
        self.port = port
        self.tls = tls
    }

    /// Parses `mqtt://host[:port]` or `mqtts://host[:port]`; IPv6 addresses
    /// go in brackets (`mqtt://[fd00::1]:1883`). The reason when it is not one.
    public static func parse(_ text: String) -> Result<MQTTBroker, ValueError> {
        let tls: Bool
        let rest: Substring
        if text.hasPrefix("mqtt://") {
            tls = false
            rest = text.dropFirst("mqtt://".count)
        } else if text.hasPrefix("mqtts://") {
            tls = true
            rest = text.dropFirst("mqtts://".count)
        } else {
            return .failure(ValueError("expected mqtt://HOST:PORT or mqtts://HOST:PORT (empty: no MQTT)"))
        }
        var hostPart: Substring
        var portPart: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                return .failure(ValueError("an IPv6 address needs its closing ']' (mqtt://[fd00::1]:1883)"))
            }
            hostPart = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return .failure(ValueError("expected :PORT after the IPv6 address")) }
                portPart = after.dropFirst()
            }
        } else {
            let parts = rest.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            hostPart = parts[0]
            if parts.count == 2 { portPart = parts[1] }
        }
        if hostPart.hasSuffix("/") { hostPart = hostPart.dropLast() }
        if let p = portPart, p.hasSuffix("/") { portPart = p.dropLast() }
        guard !hostPart.isEmpty else { return .failure(ValueError("the broker's host name is missing (mqtt://HOST:PORT)")) }
        guard !hostPart.contains(where: { $0 == "/" || $0 == "@" || $0 == "?" || $0 == " " }) else {
            return .failure(ValueError("expected only a host and a port (mqtt://HOST:PORT): no user, path or query;"
                                       + " the user name goes in username, the password in password_file"))
        }
        var port = tls ? 8883 : 1883
        if let p = portPart {
            guard let n = Int(p), (1...65535).contains(n) else {
                return .failure(ValueError("the port must be a number from 1 to 65535, got '\(p)'"))
            }
            port = n
        }
        return .success(MQTTBroker(host: String(hostPart), port: port, tls: tls))
    }

    /// Whether `host` is a numeric IPv4 or IPv6 address (nothing to resolve).
    public var hostIsNumeric: Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    public var description: String {
        (tls ? "mqtts://" : "mqtt://") + (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }
}

/// `[mqtt]`: the daemon as an MQTT client of a broker (Home Assistant,
/// fleets). Off while `broker` is empty.
public struct MQTTConfig: Equatable, Sendable {
    public var broker: MQTTBroker? = nil
    public var username: String? = nil
    /// The file the password is read from (never the INI itself).
    public var passwordFile: String? = nil
    /// CA certificates for `mqtts://`; nil: the system's store (/etc/ssl/certs).
    public var caFile: String? = nil
    /// nil: the host name.
    public var clientID: String? = nil
    /// nil: `carouseld/<client id>`.
    public var topic: String? = nil
    /// Home Assistant's discovery prefix; empty: no discovery.
    public var discoveryPrefix = "homeassistant"
    /// Seconds between keep-alives (PINGREQ) when nothing else is sent.
    public var keepalive = 60
    public init() {}

    /// The client id in effect: `client_id`, else the host name.
    public var effectiveClientID: String {
        if let clientID { return clientID }
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return "carouseld" }
        let host = String(cString: name)
        // A host name is a valid topic level; anything else falls back.
        return host.isEmpty || host.contains(where: { "+#/ ".contains($0) }) ? "carouseld" : host
    }

    /// The base topic in effect: `topic`, else `carouseld/<client id>`.
    public var effectiveTopic: String { topic ?? "carouseld/\(effectiveClientID)" }

    /// Reads the password from `password_file` (nil without one): its first
    /// line, without the line end. An unreadable or empty file is one error
    /// naming it: `check-config`, start and reload refuse such a configuration.
    public func readPassword() throws(ValueError) -> String? {
        guard let path = passwordFile else { return nil }
        guard let f = fopen(path, "rb") else {
            throw ValueError("[mqtt] password_file \(path) cannot be read: \(errnoDescription(errno))"
                             + " (it must be readable by the user carouseld runs as)")
        }
        defer { fclose(f) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let n = fread(&bytes, 1, bytes.count, f)
        if ferror(f) != 0 {
            throw ValueError("[mqtt] password_file \(path) cannot be read: \(errnoDescription(errno))")
        }
        let text = String(decoding: bytes[0..<n], as: UTF8.self)
        let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let password = line.hasSuffix("\r") ? String(line.dropLast()) : line
        guard !password.isEmpty else { throw ValueError("[mqtt] password_file \(path) is empty (the password is its first line)") }
        return password
    }

    /// What must hold beyond each key's own value: the files named exist and
    /// are readable, and the password file by its owner alone (`SecretFile`).
    /// Checked where the file is read (`check-config`, start, reload, `set`);
    /// one error naming the file.
    public func checkFiles() throws(ValueError) {
        guard broker != nil else { return }
        // libmosquitto refuses a password without a user name only when it
        // connects, which took the frame off its broker until a restart.
        if passwordFile != nil, username == nil {
            throw ValueError("[mqtt] password_file needs [mqtt] username: MQTT sends a password only with a user name")
        }
        if let passwordFile { try SecretFile.check(passwordFile, key: "[mqtt] password_file", reader: "carouseld runs as") }
        _ = try readPassword()
        if let ca = caFile, access(ca, R_OK) != 0 {
            throw ValueError("[mqtt] ca_file \(ca) cannot be read: \(errnoDescription(errno))")
        }
    }
}
