import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// Who is reading a configuration, and so which of the secrets it names are
/// checked. The daemon and the sync run as different users and each can read
/// only its own secret: the daemon checking the sync's key (or the reverse)
/// would refuse a good configuration for a file it must not read anyway.
public enum ConfigurationReader: Sendable {
    /// `carouseld run` and its reloads: `[mqtt] password_file`.
    case daemon
    /// `carouseld sync`: `[sync] api_key_file`, `rclone_config`.
    case sync
    /// `check-config` (as root, or as whoever runs it): all of them.
    case everyone
    /// `carouseld-web`, which reads none of them.
    case web

    var daemon: Bool { self == .daemon || self == .everyone }
    var sync: Bool { self == .sync || self == .everyone }
}

/// A secret file (a password, an API key, rclone's configuration with its
/// tokens) must be readable by its owner alone: the one service user that
/// reads it (carouseld for `[mqtt] password_file`, carouseld-sync for the
/// sync's). No group read either: the carouseld group is for the people
/// who use carouselctl and add pictures, not for a service's credentials.
public enum SecretFile {
    /// Why `path`, named by `key` (such as `[sync] api_key_file`) and read by
    /// `reader` (a user name, for the hint), cannot hold a secret, with the
    /// `chmod` that fixes it; nil when only its owner may read it, or when it
    /// cannot be looked at (whoever reads it then says why).
    /// The corresponding C function is `stat`: the mode is checked without
    /// reading the file, so root's `check-config` and a reader without
    /// access give the same answer.
    public static func problem(_ path: String, key: String, reader: String) -> String? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        let mode = UInt32(st.st_mode) & 0o7777
        guard mode & 0o077 != 0 else { return nil }
        let others = mode & 0o007 != 0 ? "everyone" : "its group"
        return "\(key) \(path) is readable by \(others) (mode \(octal(mode))): a secret must be readable by its owner alone,"
            + " the user \(reader); fix it with: chmod \(octal(mode & 0o700)) \(shellQuoted(path))"
    }

    /// `problem` as an error.
    static func check(_ path: String, key: String, reader: String) throws(ValueError) {
        if let problem = problem(path, key: key, reader: reader) { throw ValueError(problem) }
    }

    static func octal(_ mode: UInt32) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// The path as a shell word, so that the `chmod` line can be pasted.
    static func shellQuoted(_ path: String) -> String {
        let plain = path.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "/._-+,:@%=".unicodeScalars.contains($0)
        }
        return plain && !path.isEmpty ? path : "'" + path.replacing("'", with: "'\\''") + "'"
    }

    /// Whether `host` (a name or an address, IPv6 without brackets) is this
    /// machine: a secret sent there in clear never crosses a network.
    public static func isLoopback(_ host: String) -> Bool {
        if host.lowercased() == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            let bytes = withUnsafeBytes(of: v6) { Array($0) }
            return bytes == [UInt8](repeating: 0, count: 15) + [1]
        }
        return false
    }
}

extension Configuration {
    /// The secret files `reader` reads, checked: the first one readable by
    /// others is the error (with its `chmod`). Called where the configuration
    /// is read (`readConfiguration`), so `check-config`, start and reload
    /// refuse the same files.
    public func checkSecrets(for reader: ConfigurationReader) throws(ValueError) {
        if reader.daemon { try mqtt.checkFiles() }
        if reader.sync { try sync.checkSecrets() }
    }

    /// One line per secret that `reader` sends over the network unencrypted
    /// (a warning, not an error: a home network may be trusted on purpose).
    public func cleartextWarnings(for reader: ConfigurationReader) -> [String] {
        var lines: [String] = []
        if reader.daemon, let line = mqtt.cleartextWarning { lines.append(line) }
        if reader.sync, let line = sync.cleartextWarning { lines.append(line) }
        return lines
    }
}

extension MQTTConfig {
    /// The warning when the password goes to the broker in clear
    /// (`mqtt://` to another machine); nil otherwise.
    public var cleartextWarning: String? {
        guard let broker, !broker.tls, passwordFile != nil, !SecretFile.isLoopback(broker.host) else { return nil }
        return "[mqtt] the password (password_file) goes to \(broker) unencrypted: anyone on the network between can read it;"
            + " use mqtts:// (with ca_file for a broker's own CA)"
    }
}

extension SyncSettings {
    /// The secret files the sync reads, checked (nil source: no sync, nothing read).
    public func checkSecrets() throws(ValueError) {
        switch source {
        case .immich?:
            if let apiKeyFile { try SecretFile.check(apiKeyFile, key: "[sync] api_key_file", reader: "carouseld sync runs as") }
        case .rclone?:
            if let rcloneConfig { try SecretFile.check(rcloneConfig, key: "[sync] rclone_config", reader: "carouseld sync runs as") }
        case nil:
            break
        }
    }

    /// The warning when Immich's API key goes to an `http://` server on
    /// another machine; nil otherwise. (rclone's remotes say in rclone.conf
    /// how they connect, which is rclone's to read, not ours.)
    public var cleartextWarning: String? {
        guard source == .immich, let server, server.lowercased().hasPrefix("http://") else { return nil }
        var authority = Substring(server.dropFirst("http://".count))
        if let slash = authority.firstIndex(of: "/") { authority = authority[..<slash] }
        let host: Substring
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            host = authority[authority.index(after: authority.startIndex)..<close]
        } else {
            host = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)[0]
        }
        guard !SecretFile.isLoopback(String(host)) else { return nil }
        return "[sync] the API key (api_key_file) goes to \(server) unencrypted: anyone on the network between can read it"
            + " and use the account; use https://"
    }
}
