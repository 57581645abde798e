import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselImaging
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

    /// The picture on screen, as PNG bytes. The daemon writes its pixels
    /// (`screenshot raw`) into a memory file passed with the request, and
    /// the PNG is made here: the daemon, which draws the frame, spends a
    /// copy on it, not a compression.
    public func screenshot() async throws(DaemonError) -> [UInt8] {
        let request = ControlRequest.screenshotPixels
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
        let fields: [String: JSONValue]
        do {
            let client = try ControlClient(path: path, timeoutSeconds: timeout)
            let line = try client.request(.screenshotPixels, passing: file)
            switch ControlReply(line: line) {
            case let .ok(said)?: fields = said
            case let .error(message)?: return .failure(DaemonError(message))
            case nil: return .failure(DaemonError("the frame answered something that is not a reply"))
            }
        } catch {
            return .failure(DaemonError("the frame does not answer: \(error)"))
        }
        guard case let .int(width)? = fields["width"], case let .int(height)? = fields["height"],
              case let .int(stride)? = fields["stride"], fields["format"] == .string("XRGB8888"),
              width > 0, height > 0, width <= 16384, height <= 16384, stride >= width * 4, stride <= width * 4 + 64
        else { return .failure(DaemonError("the frame's screenshot is not pixels the page knows")) }
        var info = stat()
        guard fstat(file, &info) == 0, Int(info.st_size) == stride * height else {
            return .failure(DaemonError("the screenshot cannot be read"))
        }
        guard let pixels = mmap(nil, stride * height, PROT_READ, MAP_PRIVATE, file, 0), pixels != MAP_FAILED else {
            return .failure(DaemonError("the screenshot cannot be read: \(String(cString: strerror(errno)))"))
        }
        defer { munmap(pixels, stride * height) }
        let png = cplatform_memory_file("carouseld-web-screenshot-png")
        guard png >= 0 else { return .failure(DaemonError("no memory file for the screenshot: \(String(cString: strerror(errno)))")) }
        defer { close(png) }
        do throws(PNGWriteError) {
            try PNGWriter.write(descriptor: png, pixels: UnsafeRawPointer(pixels), width: width, height: height, stride: stride)
        } catch {
            return .failure(DaemonError("the screenshot could not be made into a PNG: \(error.reason)"))
        }
        let size = Int(lseek(png, 0, SEEK_END))
        var bytes = [UInt8](repeating: 0, count: max(size, 0))
        let read = bytes.withUnsafeMutableBytes { pread(png, $0.baseAddress, size, 0) }
        guard size > 0, read == size else { return .failure(DaemonError("the screenshot cannot be read")) }
        return .success(bytes)
    }
}
