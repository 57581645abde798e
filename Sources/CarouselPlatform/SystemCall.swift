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

/// A C library opened with dlopen when first needed (libheif, libmosquitto:
/// see `cplatform_load_library`), as its table of functions, or why it
/// could not be loaded.
public struct LibraryLoadError: Error, Sendable {
    public var message: String
}

/// Runs a C loader that fills a `Table` of function pointers (`load`
/// returns 0, or -1 with a NUL-terminated message in its buffer). Keep the
/// result in a `static let`: that makes it once per process.
public func loadLibrary<Table>(
    _ load: (UnsafeMutablePointer<Table>, UnsafeMutablePointer<CChar>, Int) -> Int32
) -> Result<Table, LibraryLoadError> {
    // A C struct of function pointers: trivial, filled by the loader.
    let table = UnsafeMutablePointer<Table>.allocate(capacity: 1)
    defer { table.deallocate() }
    var message = [CChar](repeating: 0, count: 256)
    let status = message.withUnsafeMutableBufferPointer { load(table, $0.baseAddress!, $0.count) }
    guard status == 0 else {
        let bytes = message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return .failure(LibraryLoadError(message: String(decoding: bytes, as: UTF8.self)))
    }
    return .success(table.move())
}

/// A whole file's bytes, at most `limit` of them (a larger file is EFBIG):
/// for the small files carouseld's tools read (configuration, manifests, keys).
public func readFileBytes(_ path: String, limit: Int = 64 << 20) throws(SystemCallError) -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw SystemCallError(call: "open", errno: errno) }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            throw SystemCallError(call: "read", errno: errno)
        }
        if n == 0 { return bytes }
        bytes += chunk[0..<n]
        if bytes.count > limit { throw SystemCallError(call: "read", errno: EFBIG) }
    }
}
