import CarouselConfig
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// The picture on screen, kept in the state directory so that a restart or a
/// power cut comes back to it (`[images] resume`).
///
/// The file holds the picture's name (relative to the images folder, or the
/// path as `[images] files` lists it) and a newline: a name, not an index,
/// so that pictures added or removed while the daemon was down do not move
/// the viewer to another picture.
public struct PositionStore {
    static let fileName = "position"
    /// Longer than any name a file system allows under a folder (PATH_MAX):
    /// a bigger file is not ours.
    static let sizeLimit = 4096

    let directory: String
    var path: String { directory + "/" + Self.fileName }
    /// The name the file holds (written or read), so that each picture is
    /// written once however often the loop asks.
    private(set) var saved: String?
    /// A write failed: said once, and again only after one succeeded.
    private var failing = false

    init(directory: String) {
        self.directory = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
    }

    /// Where the position is kept: systemd's `StateDirectory=` (the first
    /// of `$STATE_DIRECTORY`'s colon-separated paths), else /var/lib/carouseld.
    public static func directory(environment value: String?) -> String {
        let first = value?.split(separator: ":", omittingEmptySubsequences: true).first.map(String.init)
        return first ?? "/var/lib/carouseld"
    }

    enum Loaded: Equatable {
        case name(String)
        /// No file yet (first start, or `resume` was off).
        case missing
        /// A file that cannot be used; the text says why, for the log.
        case unusable(String)
    }

    /// Reads the file; remembers the name it holds.
    mutating func load() -> Loaded {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            let code = errno
            return code == ENOENT ? .missing : .unusable(errnoDescription(code))
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while bytes.count <= Self.sizeLimit {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .unusable(errnoDescription(errno))
            }
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        guard bytes.count <= Self.sizeLimit else { return .unusable("larger than \(Self.sizeLimit) bytes") }
        // The writer always ends the name with a newline: without one the
        // file is not what it wrote.
        guard bytes.last == UInt8(ascii: "\n") else { return .unusable("not a picture name and a newline") }
        bytes.removeLast()
        guard !bytes.isEmpty, !bytes.contains(0), !bytes.contains(UInt8(ascii: "\n")),
              let name = String(validating: bytes, as: UTF8.self) else {
            return .unusable("not a picture name and a newline")
        }
        saved = name
        return .name(name)
    }

    /// Writes `name` unless the file already holds it, atomically and synced
    /// (IniRewriter.writeAtomically: the file, then its directory). A
    /// failure is logged once until a write works.
    mutating func save(_ name: String) {
        guard name != saved else { return }
        do throws(ConfigWriteError) {
            do {
                try IniRewriter.writeAtomically(path: path, text: name + "\n", mode: 0o640)
            } catch {
                // Run by hand rather than by the unit (whose StateDirectory=
                // makes it), the default /var/lib/carouseld may not exist yet:
                // it is made, as systemd would, when its parent exists.
                guard makeDirectory() else { throw error }
                try IniRewriter.writeAtomically(path: path, text: name + "\n", mode: 0o640)
            }
        } catch {
            if !failing {
                log(.warning, "cannot keep the position (the picture on screen) in \(path): \(error.message);"
                    + " after a restart the carousel starts at start_index (check that \(directory) exists and is writable)")
            }
            failing = true
            return
        }
        if failing { log(.info, "keeping the position in \(path) again") }
        failing = false
        saved = name
    }

    /// Makes the state directory (its last component only, mode 0750) when
    /// it does not exist; true when it was made.
    private func makeDirectory() -> Bool {
        var info = stat()
        guard stat(directory, &info) != 0, errno == ENOENT, mkdir(directory, 0o750) == 0 else { return false }
        log(.info, "made \(directory) to keep the position (the picture on screen) in")
        return true
    }
}
