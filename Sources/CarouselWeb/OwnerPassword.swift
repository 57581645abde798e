import CarouselPlatform
import Foundation
import HummingbirdBcrypt
#if canImport(Glibc)
import Glibc
#endif

/// Who is signed in on the page.
public enum WebRole: String, Codable, Sendable {
    /// Everything the web's grant allows.
    case owner
    /// A paired phone: adds pictures, drives the frame, looks; deletes only
    /// what it added; no settings.
    case guest
}

/// The owner's password: a bcrypt hash in the web's state folder
/// (`owner.bcrypt`, 0600), written by `carouseld-web set-password`. The
/// password itself is never stored nor logged.
public struct OwnerPassword: Sendable {
    public let folder: String
    public var file: String { folder + "/owner.bcrypt" }
    /// bcrypt's cost: 2^11 rounds, about 0.15 s on this machine's cores and
    /// some seconds on a Pi Zero: a guess costs the guesser as much.
    public static let cost: UInt8 = 11
    /// The shortest password taken.
    public static let minimumLength = 8
    /// The longest: bcrypt reads 72 bytes.
    public static let maximumBytes = 72

    public init(folder: String) { self.folder = folder }

    /// Whether a password has been set.
    public var isSet: Bool { hash != nil }

    var hash: String? {
        guard let text = try? String(contentsOfFileAt: file, maxBytes: 256) else { return nil }
        let line = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return line.hasPrefix("$2") ? line : nil
    }

    /// Why `password` is not taken, or nil.
    public static func problem(with password: String) -> String? {
        if password.count < minimumLength { return "a password needs at least \(minimumLength) characters" }
        if password.utf8.count > maximumBytes { return "a password may be at most \(maximumBytes) bytes" }
        if password.contains(where: { $0.isNewline }) { return "a password is one line" }
        return nil
    }

    /// Stores the hash of `password` (a new file renamed over the old one).
    public func set(_ password: String) throws(WebStateError) {
        if let problem = Self.problem(with: password) { throw WebStateError(problem) }
        let hashed = Bcrypt.hash(password, cost: Self.cost)
        try WebState.writeAtomically(Array((hashed + "\n").utf8), to: file, mode: 0o600)
        // `sudo carouseld-web set-password` on a board: the file is the
        // page's user's (the state folder's owner), or the page could not read it.
        var folderStatus = stat()
        if geteuid() == 0, stat(folder, &folderStatus) == 0, folderStatus.st_uid != 0,
           chown(file, folderStatus.st_uid, folderStatus.st_gid) != 0 {
            throw WebStateError("cannot give \(file) to the owner of \(folder): \(String(cString: strerror(errno)))")
        }
    }

    /// Whether `password` is the owner's (false when none is set).
    public func verify(_ password: String) -> Bool {
        guard let hash, password.utf8.count <= Self.maximumBytes else { return false }
        return Bcrypt.verify(password, hash: hash)
    }
}

/// The web's state folder could not be written.
public struct WebStateError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

enum WebState {
    /// `writeFileAtomically`, its refusal thrown.
    static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t) throws(WebStateError) {
        if let problem = writeFileAtomically(bytes, to: path, mode: mode) { throw WebStateError(problem) }
    }
}

extension String {
    /// A small file's text, nil when it cannot be read or is larger than `maxBytes`.
    init(contentsOfFileAt path: String, maxBytes: Int) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw WebStateError("cannot open \(path)") }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: maxBytes + 1)
        var total = 0
        while total <= maxBytes {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + total, maxBytes + 1 - total) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            total += n
        }
        guard total <= maxBytes else { throw WebStateError("\(path) is too large") }
        self = String(decoding: buffer[0..<total], as: UTF8.self)
    }
}

/// Sign-in attempts, limited for the whole page (behind systemd's socket
/// proxy every peer has the same address): after `failures` wrong
/// passwords within `window` seconds, every attempt is refused without
/// being checked until the oldest of them is `window` old.
public actor LoginLimiter {
    public let failures: Int
    public let window: Int64
    private var recent: [Int64] = []
    private let clock: @Sendable () -> Int64

    /// `clock` says the time in seconds (monotonic).
    public init(failures: Int = 5, window: Int64 = 60, clock: @escaping @Sendable () -> Int64 = { MonotonicClock.now() / 1_000_000 }) {
        self.failures = failures
        self.window = window
        self.clock = clock
    }

    /// Seconds to wait before an attempt is checked again, or nil when it may be checked now.
    public func wait() -> Int64? {
        let now = clock()
        recent.removeAll { now - $0 >= window }
        guard recent.count >= failures, let oldest = recent.first else { return nil }
        return max(1, window - (now - oldest))
    }

    public func failed() {
        recent.append(clock())
        if recent.count > failures { recent.removeFirst(recent.count - failures) }
    }
}
