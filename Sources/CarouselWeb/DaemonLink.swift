import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselPlatform
import CPlatform
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Why the daemon gave no answer the page can show.
public struct DaemonError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The page's one way to the frame: the control socket, a connection per
/// request (a blocking client, run off the server's threads), and never a
/// request the web's grant (`Grant.web`) does not allow, whoever asks.
public struct DaemonLink: Sendable {
    public let socketPath: String
    public let grant: Grant
    /// How long one reply may take.
    public let timeoutSeconds: Int

    public init(socketPath: String, grant: Grant = .web, timeoutSeconds: Int = 10) {
        self.socketPath = socketPath
        self.grant = grant
        self.timeoutSeconds = timeoutSeconds
    }

    private static let queue = DispatchQueue(label: "carouseld-web.daemon", attributes: .concurrent)

    /// Sends `request` and returns the daemon's reply: `.error` for a
    /// refusal (the web's grant first, then the daemon's); `DaemonError`
    /// when the daemon cannot be reached.
    public func ask(_ request: ControlRequest) async throws(DaemonError) -> ControlReply {
        if let refusal = grant.refusal(of: request.refusalName, needing: request.capability(keyCapability: Schema.capability(ofKey:))) {
            return .error(refusal)
        }
        let path = socketPath
        let timeout = timeoutSeconds
        let result: Result<ControlReply, DaemonError> = await withCheckedContinuation { continuation in
            Self.queue.async {
                continuation.resume(returning: Self.exchange(request, path: path, timeout: timeout))
            }
        }
        return try result.get()
    }

    private static func exchange(_ request: ControlRequest, path: String, timeout: Int) -> Result<ControlReply, DaemonError> {
        do {
            let client = try ControlClient(path: path, timeoutSeconds: timeout)
            let line = try client.request(request)
            guard let reply = ControlReply(line: line) else {
                return .failure(DaemonError("the frame answered something that is not a reply"))
            }
            return .success(reply)
        } catch {
            return .failure(DaemonError("the frame does not answer: \(error)"))
        }
    }

    /// The picture on screen, as PNG bytes: the daemon writes it into a
    /// memory file passed with the request, which is read back here.
    public func screenshot() async throws(DaemonError) -> [UInt8] {
        let request = ControlRequest.screenshot(path: nil)
        if let refusal = grant.refusal(of: request.refusalName, needing: request.capability(keyCapability: Schema.capability(ofKey:))) {
            throw DaemonError(refusal)
        }
        let path = socketPath
        let timeout = timeoutSeconds
        let result: Result<[UInt8], DaemonError> = await withCheckedContinuation { continuation in
            Self.queue.async {
                continuation.resume(returning: Self.screenshot(path: path, timeout: timeout))
            }
        }
        return try result.get()
    }

    private static func screenshot(path: String, timeout: Int) -> Result<[UInt8], DaemonError> {
        let file = cplatform_memory_file("carouseld-web-screenshot")
        guard file >= 0 else { return .failure(DaemonError("no memory file for the screenshot: \(String(cString: strerror(errno)))")) }
        defer { close(file) }
        do {
            let client = try ControlClient(path: path, timeoutSeconds: timeout)
            let line = try client.request(.screenshot(path: nil), passing: file)
            switch ControlReply(line: line) {
            case .ok?: break
            case let .error(message)?: return .failure(DaemonError(message))
            case nil: return .failure(DaemonError("the frame answered something that is not a reply"))
            }
        } catch {
            return .failure(DaemonError("the frame does not answer: \(error)"))
        }
        var info = stat()
        guard fstat(file, &info) == 0 else { return .failure(DaemonError("the screenshot cannot be read")) }
        let size = Int(info.st_size)
        guard size > 0, size <= 256 << 20 else { return .failure(DaemonError("the screenshot is empty")) }
        var bytes = [UInt8](repeating: 0, count: size)
        let read = bytes.withUnsafeMutableBytes { pread(file, $0.baseAddress, size, 0) }
        guard read == size else { return .failure(DaemonError("the screenshot cannot be read")) }
        return .success(bytes)
    }
}
