/// Why a pass, or one item of it, did not finish: the log line, and the
/// kind that decides what happens next (a new reason is logged once; the
/// pass is tried again after a backoff).
public struct SyncError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The server cannot be reached (DNS, refused, TLS, timeouts).
        case offline
        /// The server refused the key (401, 403).
        case unauthorized
        /// What was asked for is not there (an album or a remote that was deleted).
        case missing
        /// The server answered what cannot be read (malformed JSON, a 5xx).
        case server
        /// This machine: the folder, the disk, the state directory, rclone itself.
        case local
        /// The disk is full: downloading stops, nothing is deleted.
        case diskFull
        /// A stop was requested (SIGTERM) in the middle of a transfer.
        case stopped
    }
    public let kind: Kind
    public let message: String
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
    public var description: String { message }
}
