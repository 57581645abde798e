import CPlatform
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// A command-line tool the sync runs (rclone) and waits for: its standard
/// output into a descriptor of ours, or kept in memory; its standard error
/// kept for the message when it fails.
struct ToolRun {
    let executable: String
    let arguments: [String]

    struct Outcome {
        var status: Int32
        /// Killed at the run's deadline.
        var timedOut = false
        var output: [UInt8]
        var errors: String
        /// The last non-empty line of standard error: what went wrong, as the tool says it.
        var lastError: String {
            errors.split(whereSeparator: \.isNewline).last.map(String.init) ?? "exit status \(status)"
        }
    }

    /// Runs the tool to its end. `output`: where its standard output goes
    /// (nil: kept and returned). `deadline`: seconds after which the tool is
    /// killed and the run refused (rclone's own timeouts are for a stall;
    /// a server that drips a byte a second passes them).
    func run(output: Int32? = nil, deadline: Int? = nil) throws(SyncError) -> Outcome {
        let errorsFile = cplatform_memory_file("tool-stderr")
        guard errorsFile >= 0 else { throw SyncError(.local, "memfd_create: \(errnoDescription(errno))") }
        defer { close(errorsFile) }
        var keptOutput: Int32 = -1
        if output == nil {
            keptOutput = cplatform_memory_file("tool-stdout")
            guard keptOutput >= 0 else { throw SyncError(.local, "memfd_create: \(errnoDescription(errno))") }
        }
        defer { if keptOutput >= 0 { close(keptOutput) } }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        // The tool sees our environment (HOME for rclone's default configuration, proxies).
        var pid: pid_t = 0
        let rc = argv.withUnsafeBufferPointer { args in
            cplatform_spawn_tool(executable, args.baseAddress, environ, output ?? keptOutput, errorsFile, &pid)
        }
        guard rc == 0 else {
            throw SyncError(.local, rc == ENOENT ? "\(executable) is not installed (apt install \(executable))"
                                                  : "cannot start \(executable): \(errnoDescription(rc))")
        }
        var status: Int32 = 0
        let end = deadline.map { MonotonicClock.now() + Int64($0) * 1_000_000 }
        while true {
            let rc = waitpid(pid, &status, end == nil ? 0 : WNOHANG)
            if rc == pid { break }
            if rc < 0 {
                guard errno == EINTR else { throw SyncError(.local, "waitpid: \(errnoDescription(errno))") }
                continue
            }
            // Still running: looked at 20 times a second (no pidfd in this
            // Swift's Glibc), killed once past the deadline.
            if let end, MonotonicClock.now() >= end {
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0, errno == EINTR {}
                return Outcome(status: 128 + SIGKILL, timedOut: true, output: [], errors: "")
            }
            usleep(50_000)
        }
        let exit = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        let output = keptOutput >= 0 ? Self.readAll(keptOutput, limit: Self.outputLimit) : []
        guard let output else {
            throw SyncError(.server, "\(executable) \(arguments.first ?? ""): more than \(Self.outputLimit >> 20) MB of output")
        }
        return Outcome(status: exit, output: output,
                       errors: String(decoding: (Self.readAll(errorsFile, limit: 1 << 20) ?? []).suffix(4096), as: UTF8.self))
    }

    /// A listing larger than this is refused (a million files is under 256 MB of lsjson).
    static let outputLimit = 256 << 20

    /// What the tool wrote, from the start; nil past `limit` bytes.
    private static func readAll(_ fd: Int32, limit: Int) -> [UInt8]? {
        var info = stat()
        if fstat(fd, &info) == 0, Int(info.st_size) > limit { return nil }
        _ = lseek(fd, 0, SEEK_SET)
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { return bytes }
            bytes += chunk[0..<n]
            if bytes.count > limit { return nil }
        }
    }
}
