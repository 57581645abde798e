import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// What `carouseld sync` last did, as it leaves it in the folder it fills
/// (hidden: the album ignores dot-files): the time of its last pass, the
/// files and bytes it keeps, the last error. The daemon reads it for
/// `status` and MQTT's state; the sync and the daemon share nothing else.
public enum SyncStatusFile {
    public static let name = ".carouseld-sync.json"

    /// The status for `config`'s [sync], as a JSON object: nil without a
    /// [sync] source; `{"error": ...}` when no pass has written one yet.
    public static func read(for config: Configuration) -> JSONValue? {
        guard config.sync.source != nil else { return nil }
        let path = (config.sync.folder ?? config.images.path) + "/" + name
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return .object(["error": .string("no sync has run yet (\(path))")]) }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard n > 0, n < bytes.count, let value = JSONValue.parse(String(decoding: bytes[0..<n], as: UTF8.self)),
              case .object = value else {
            return .object(["error": .string("\(path) cannot be read as the sync's status")])
        }
        return value
    }
}
