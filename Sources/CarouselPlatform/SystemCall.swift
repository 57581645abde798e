#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A system call that failed: which call, and the errno it left.
public struct SystemCallError: Error, Sendable, Equatable, CustomStringConvertible {
    public let call: String
    public let errno: Int32

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    public var description: String { "\(call): \(errnoDescription(errno))" }
}

/// The one way carouseld makes system calls.
///
/// Retries while the call fails with EINTR (a signal arrived before it could
/// finish; the daemon's signals come through a signalfd, but a debugger or a
/// library may still interrupt us). Returns nil for EAGAIN/EWOULDBLOCK ("not
/// now", only possible on non-blocking descriptors) and throws any other
/// failure with the call's name and errno. `failed` says whether a result is
/// the call's failure value; errno is read only then.
public func attemptSystemCall<T>(
    _ call: String, failed: (T) -> Bool, _ body: () -> T
) throws(SystemCallError) -> T? {
    while true {
        let result = body()
        guard failed(result) else { return result }
        let code = errno
        if code == EINTR { continue }
        if code == EAGAIN || code == EWOULDBLOCK { return nil }
        throw SystemCallError(call: call, errno: code)
    }
}

/// `attemptSystemCall` for calls that return -1 on failure.
public func attemptSystemCall<T: BinaryInteger>(_ call: String, _ body: () -> T) throws(SystemCallError) -> T? {
    try attemptSystemCall(call, failed: { $0 < 0 }, body)
}

/// `attemptSystemCall` for calls on blocking descriptors or paths, where
/// EAGAIN cannot mean "try later" and is reported like any other error.
@discardableResult
public func systemCall<T: BinaryInteger>(_ call: String, _ body: () -> T) throws(SystemCallError) -> T {
    guard let result = try attemptSystemCall(call, body) else {
        throw SystemCallError(call: call, errno: EAGAIN)
    }
    return result
}

/// strerror's text for an errno value.
public func errnoDescription(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "error \(code)" }
    return String(cString: text)
}
