import CarouselImaging
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// Any rclone remote (WebDAV, Nextcloud, SMB, S3, SFTP and the rest rclone
/// knows): `rclone lsjson` lists it, `rclone cat` fetches a file into the
/// sync's temporary file. The user's own rclone configuration names the
/// remote; carouseld keeps none of its secrets.
public struct RcloneSource: SyncSourceClient {
    /// REMOTE:PATH, as rclone takes it.
    public let remote: String
    /// rclone's configuration file (nil: rclone's default, ~/.config/rclone/rclone.conf).
    public let configFile: String?
    public let videos: Bool
    public var executable = "rclone"
    /// Each file's deadline (its listed size at a minimum rate).
    public var limits = TransferLimits.fromEnvironment()

    public init(remote: String, configFile: String?, videos: Bool) {
        self.remote = remote
        self.configFile = configFile
        self.videos = videos
    }

    public var summary: String { "rclone \(remote)" }

    /// Timeouts and retries: a stalled server is given up, not waited on for ever.
    private var common: [String] {
        var args = ["--contimeout", "15s", "--timeout", "30s", "--retries", "1", "--low-level-retries", "2", "-q"]
        if let configFile { args += ["--config", configFile] }
        return args
    }

    public func list() throws(SyncError) -> [RemoteItem] {
        let run = try ToolRun(executable: executable, arguments: ["lsjson", "--recursive", "--files-only", "--no-mimetype"]
                                  + common + [remote]).run()
        guard run.status == 0 else { throw Self.error(run, listing: remote, path: remote) }
        guard case let .array(entries)? = JSONValue.parse(String(decoding: run.output, as: UTF8.self)) else {
            throw SyncError(.server, "rclone lsjson \(remote): not a JSON list")
        }
        var items: [RemoteItem] = []
        for entry in entries {
            guard let path = entry["Path"]?.stringValue, let size = entry["Size"]?.intValue,
                  let time = entry["ModTime"]?.stringValue, Self.isWanted(path, videos: videos) else { continue }
            // A size of -1: the backend does not know it beforehand.
            items.append(RemoteItem(key: path, name: Self.localName(path), version: "\(time) \(size)", bytes: size >= 0 ? size : nil))
        }
        // rclone lists in no promised order: by path, as a folder shows them.
        return items.sorted { $0.key < $1.key }
    }

    public func fetch(_ item: RemoteItem, into fd: Int32, maxBytes: Int) throws(SyncError) -> Int {
        if let size = item.bytes, size > maxBytes {
            throw SyncError(.server, "\(item.key) is \(size / 1_048_576) MB, over the \(maxBytes / 1_048_576) MB a file may be")
        }
        let source = remote.hasSuffix(":") || remote.hasSuffix("/") ? remote + item.key : remote + "/" + item.key
        // Read by the listed size: one byte more than listed is enough to
        // refuse it, and a stream that does not end is not written whole
        // first. Unlisted, the file's cap bounds it.
        let count = ["--count", String((item.bytes ?? maxBytes) + 1)]
        let seconds = limits.deadline(forBytes: item.bytes)
        let run = try ToolRun(executable: executable, arguments: ["cat"] + count + common + [source]).run(output: fd, deadline: seconds)
        if run.timedOut {
            // This file alone: the pass goes on with the next.
            throw SyncError(.server, "rclone \(source): not done within \(limits.explainDeadline(forBytes: item.bytes)); stopped")
        }
        guard run.status == 0 else { throw Self.error(run, listing: source, path: source) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SyncError(.local, "fstat: \(errnoDescription(errno))") }
        let written = Int(info.st_size)
        if written > (item.bytes ?? maxBytes) {
            throw SyncError(.server, "rclone \(source): longer than the \(item.bytes.map { "\($0) bytes listed" } ?? "\(maxBytes >> 20) MB a file may be"); refused")
        }
        if let size = item.bytes, written != size {
            // A cut transfer rclone did not notice: never shown as a whole picture.
            throw SyncError(.server, "\(item.key): \(written) of \(size) bytes arrived")
        }
        return written
    }

    /// What kind of failure rclone's message is (its exit codes: 3 a
    /// directory not found, 4 a file not found, 5 a temporary error, 1 and
    /// 2 the rest).
    static func error(_ run: ToolRun.Outcome, listing what: String, path: String) -> SyncError {
        let message = "rclone \(what): \(run.lastError)"
        // Matched without the path: IMG_0403.JPG is not a 403.
        let text = run.errors.replacingAll(path, with: "").lowercased()
        if text.contains("no space left on device") { return SyncError(.diskFull, message) }
        switch run.status {
        case 3, 4: return SyncError(.missing, message)
        case 5: return SyncError(.offline, message)
        default:
            if text.contains("401") || text.contains("403") || text.contains("unauthorized") || text.contains("authentication") {
                return SyncError(.unauthorized, message)
            }
            if text.contains("connection refused") || text.contains("no such host") || text.contains("timeout")
                || text.contains("i/o timeout") || text.contains("network is unreachable") {
                return SyncError(.offline, message)
            }
            if text.contains("didn't find section in config file") || text.contains("not found in config") {
                return SyncError(.local, message + " (is the remote in rclone's configuration? rclone listremotes)")
            }
            if text.contains("directory not found") || text.contains("object not found") { return SyncError(.missing, message) }
            return SyncError(.server, message)
        }
    }

    static let pictureExtensions = Set(ImageFormat.allCases.flatMap(\.fileExtensions).map { $0.lowercased() })
    /// The clips the carousel plays (`ClipName`, the album's own list).
    static let videoExtensions = Set(ClipName.fileExtensions)

    static func isWanted(_ path: String, videos: Bool) -> Bool {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard !name.hasPrefix("."), let dot = name.lastIndex(of: ".") else { return false }
        let ext = name[name.index(after: dot)...].lowercased()
        return pictureExtensions.contains(ext) || (videos && videoExtensions.contains(ext))
    }

    /// The file's name in the folder: the remote's path with its folders
    /// joined by '_' (the album may not look into folders), anything a
    /// name cannot hold replaced. A name over 200 bytes keeps its end (the
    /// extension) within that, after a hash of the whole path, so that two
    /// long paths do not become one name and `.NAME.part` fits 255 bytes.
    static func localName(_ path: String) -> String {
        var name = ""
        for scalar in path.unicodeScalars {
            name.unicodeScalars.append(scalar == "/" ? "_" : scalar.value < 0x20 ? "_" : scalar)
        }
        while name.hasPrefix(".") { name.removeFirst() }
        if name.utf8.count > 200 {
            var tail = String.UnicodeScalarView()
            var bytes = 0
            for scalar in name.unicodeScalars.reversed() {
                bytes += String(scalar).utf8.count
                if bytes > 180 { break }
                tail.insert(scalar, at: tail.startIndex)
            }
            name = SyncFolder.hash(path) + "_" + String(tail)
        }
        return name.isEmpty ? "_" : name
    }
}

extension String {
    /// The string with every `target` replaced (Foundation's, without Foundation).
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var out = ""
        var rest = self[...]
        while let range = rest.firstRange(of: target) {
            out += rest[..<range.lowerBound] + replacement
            rest = rest[range.upperBound...]
        }
        return out + rest
    }
}
