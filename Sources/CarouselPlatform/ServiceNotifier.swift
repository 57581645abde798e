#if canImport(Glibc)
import Glibc
#endif

/// The service manager's notification socket (systemd's `sd_notify`
/// protocol): one datagram of `KEY=VALUE` lines per message to the
/// `AF_UNIX` socket named by `$NOTIFY_SOCKET` (a path, or `@name` for the
/// abstract namespace). Without `$NOTIFY_SOCKET` every call does nothing, so
/// the daemon behaves the same outside systemd.
///
/// The watchdog interval comes from `$WATCHDOG_USEC` (and applies to us only
/// when `$WATCHDOG_PID` is unset or our own pid), as systemd sets them.
public final class ServiceNotifier {
    private let socket: FileDescriptor?
    private var address = sockaddr_un()
    private var addressLength = socklen_t(0)
    /// How often the service manager expects `WATCHDOG=1`, in microseconds.
    public let watchdogInterval: Int64?

    /// Reads the environment as systemd sets it for the service.
    public convenience init() {
        self.init(environment: { key in getenv(key).map { String(cString: $0) } })
    }

    /// `environment` maps a variable name to its value (tests pass their own).
    public init(environment: (String) -> String?) {
        if let text = environment("WATCHDOG_USEC"), let usec = Int64(text), usec > 0,
           environment("WATCHDOG_PID").map({ Int32($0) == getpid() }) ?? true {
            watchdogInterval = usec
        } else {
            watchdogInterval = nil
        }
        guard let path = environment("NOTIFY_SOCKET"), !path.isEmpty,
              path.hasPrefix("/") || path.hasPrefix("@"),
              path.utf8.count < MemoryLayout.size(ofValue: address.sun_path)
        else {
            socket = nil
            return
        }
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            socket = nil
            return
        }
        socket = FileDescriptor(fd)
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        // An abstract address starts with a NUL byte and has no terminator.
        if bytes[0] == UInt8(ascii: "@") { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        addressLength = socklen_t(pathOffset + bytes.count + (bytes[0] == 0 ? 0 : 1))
    }

    /// Whether a service manager listens.
    public var isActive: Bool { socket != nil }

    /// Sends `fields` (e.g. `["READY=1", "STATUS=showing 3 images"]`) as one
    /// message. Returns false when it could not be sent (no manager, or the
    /// socket refused it): notifications are advisory and never stop the daemon.
    @discardableResult
    public func notify(_ fields: [String]) -> Bool {
        guard let socket else { return false }
        // A value never spans lines: a newline would start a new field.
        let text = fields.map { $0.replacing("\n", with: " ") }.joined(separator: "\n")
        let bytes = Array(text.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bytes.withUnsafeBytes { buffer in
                    sendto(socket.raw, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL), sa, addressLength)
                }
            }
        }
        return sent == bytes.count
    }

    /// `READY=1`, with a status line.
    public func ready(status: String) { notify(["READY=1", "STATUS=\(status)"]) }

    public func status(_ text: String) { notify(["STATUS=\(text)"]) }

    /// `RELOADING=1` with the CLOCK_MONOTONIC instant systemd wants alongside it.
    public func reloading() {
        notify(["RELOADING=1", "MONOTONIC_USEC=\(MonotonicClock.now())"])
    }

    public func watchdog() { notify(["WATCHDOG=1"]) }

    /// Asks the service manager for `microseconds` more before it gives up on
    /// start-up (a kiosk waiting for its monitor to be switched on).
    public func extendTimeout(microseconds: Int64, status text: String) {
        notify(["EXTEND_TIMEOUT_USEC=\(microseconds)", "STATUS=\(text)"])
    }

    public func stopping() { notify(["STOPPING=1"]) }
}
