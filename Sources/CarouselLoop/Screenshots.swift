import CarouselPlatform

/// Where a screenshot goes (`LoopAsk.screenshot`): a path the daemon writes
/// (atomically, under a fresh name then renamed), a file a client opened
/// with its own rights and sent over the socket, or memory (MQTT publishes
/// the bytes).
public enum ScreenshotDestination: Sendable {
    case path(String)
    case descriptor(FileDescriptor)
    case memory
    /// The upright pixels, no PNG, into the file (`screenshot raw`).
    case pixels(FileDescriptor)
}

/// A screenshot written: where, as its destination asked.
public enum ScreenshotOutcome: Sendable {
    case written(path: String)
    case bytes(Int)
    case png([UInt8])
    /// `height` rows of `stride` bytes written, XRGB8888.
    case pixels(width: Int, height: Int, stride: Int)
}

/// Why a screenshot was not written (the client knows its file's name; the daemon says why).
public struct ScreenshotFailure: Error, Sendable {
    public let reason: String
    public init(reason: String) { self.reason = reason }
}
