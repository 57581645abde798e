import CarouselPlatform
import CPlatform
#if canImport(Glibc)
import Glibc
#endif

// ControlServer's socket file: its directory, a stale file replaced, removed on close only if it is still ours.
extension ControlServer {
    // MARK: Socket file

    static func address(_ path: String) throws(ControlServerError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity else {
            throw ControlServerError(
                "control socket path '\(path)' is \(bytes.isEmpty ? "empty" : "too long (\(bytes.count) bytes, a Unix socket path holds at most \(capacity - 1))")")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    static func bind(_ fd: Int32, _ address: inout sockaddr_un) -> Int32 {
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }

    /// Removes `path` only if it is a socket nobody listens on: connect()
    /// failing with ECONNREFUSED is the kernel saying so.
    static func removeStaleSocket(_ path: String) throws(ControlServerError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }  // gone meanwhile: bind again
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw ControlServerError("\(path) exists and is not a socket; carouseld will not remove it (move it away or choose another control socket path)")
        }
        var address = try address(path)
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard probe >= 0 else { throw ControlServerError("cannot probe \(path): \(errnoDescription(errno))") }
        defer { Glibc.close(probe) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        let code = errno
        // Connected, or a full backlog (EAGAIN): a live server owns the socket.
        if result == 0 || code == EAGAIN {
            throw ControlServerError("another process is already listening on \(path) (is carouseld already running? stop it or choose another control socket path)")
        }
        guard code == ECONNREFUSED else {
            if code == ENOENT { return }
            throw ControlServerError("cannot tell whether \(path) is in use: connect: \(errnoDescription(code))")
        }
        if unlink(path) != 0 && errno != ENOENT {
            throw ControlServerError("cannot remove the stale control socket \(path): \(errnoDescription(errno))")
        }
    }

    static func makeDirectory(parentOf path: String) throws(ControlServerError) {
        var components = path.split(separator: "/", omittingEmptySubsequences: true).dropLast()
        var current = path.hasPrefix("/") ? "" : "."
        while let next = components.first {
            components = components.dropFirst()
            current += "/" + next
            // 0755: the socket file's own mode and group are what guard access.
            if mkdir(current, 0o755) != 0 && errno != EEXIST {
                throw ControlServerError("cannot create the control socket's directory \(current): \(errnoDescription(errno))\(permissionHint(errno))")
            }
        }
    }

    static func groupID(_ name: String, path: String) throws(ControlServerError) -> gid_t {
        var group = Glibc.group()
        var result: UnsafeMutablePointer<Glibc.group>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        let code = getgrnam_r(name, &group, &buffer, buffer.count, &result)
        guard code == 0, result != nil else {
            if let number = gid_t(name) { return number }
            throw ControlServerError("unknown group '\(name)' for the control socket \(path) (create it with groupadd, or fix the group in the config)")
        }
        return group.gr_gid
    }

    static func permissionHint(_ code: Int32) -> String {
        code == EACCES || code == EPERM ? " (carouseld needs write access there; is it running as the right user, with RuntimeDirectory=carouseld?)" : ""
    }
}
