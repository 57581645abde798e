import CarouselConfig
#if canImport(Glibc)
import Glibc
#endif

/// A file that could not be read: which, and why.
public struct FileReadError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// Reads a whole file as UTF-8 text; errors name the file and the reason.
public func readTextFile(_ path: String) throws(FileReadError) -> String {
    guard let f = fopen(path, "rb") else {
        throw FileReadError(message: "cannot open \(path): \(String(cString: strerror(errno)))")
    }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buffer, 1, buffer.count, f)
        if n > 0 { bytes.append(contentsOf: buffer[0..<n]) }
        if n < buffer.count {
            if ferror(f) != 0 { throw FileReadError(message: "cannot read \(path): \(String(cString: strerror(errno)))") }
            break
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Reads and validates a configuration file: the one way `run`, reload,
/// SIGHUP, `check-config`, `sync` and the tools read one. Throws the reason
/// (a `ConfigError` names FILE:LINE). `reader` says whose secret files are
/// checked: each service can read its own only.
public func readConfiguration(_ path: String, for reader: ConfigurationReader = .daemon) throws -> Configuration {
    let config = try Configuration.parse(try readTextFile(path), file: path)
    // The files [mqtt] and [sync] name are read when connecting; a missing
    // one, or a secret others may read, is refused here, with the rest of a
    // bad configuration.
    do {
        try config.checkSecrets(for: reader)
    } catch {
        throw FileReadError(message: "\(path): \(error.message)")
    }
    return config
}
