import CarouselCore
import CarouselPlatform
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
    let (config, sources) = try readConfigurationLayers(path, for: reader)
    for line in sources.ignored { log(.warning, "settings: \(line)") }
    return config
}

/// The files read one over the other for `path`: `path` itself, the
/// drop-ins in `path.d/` whose names end in .ini (in name order), then the
/// frame's settings file (`[control] settings`, as those two say; absent is
/// none yet).
public func configurationLayers(_ path: String) throws -> [ConfigurationLayer] {
    var layers = [ConfigurationLayer(text: try readTextFile(path), file: path)]
    for name in dropInNames(path + ".d") {
        let file = path + ".d/" + name
        layers.append(ConfigurationLayer(text: try readTextFile(file), file: file))
    }
    // Where the settings file is, as the administrator's files say.
    let settings = try Configuration.parse(layers: layers).configuration.control.settings
    if let settings, access(settings, F_OK) == 0 {
        // A program writes it: one that cannot be read is left out, said, never fatal.
        let text: String
        do {
            text = try readTextFile(settings)
        } catch {
            text = ""
            log(.warning, "settings: \(error); the settings file is left out")
        }
        layers.append(ConfigurationLayer(text: text, file: settings, allows: [.look, .drive, .tune, .configure], lenient: true))
    }
    return layers
}

/// The `.ini` files of a drop-in folder, in name order (none when it is missing).
func dropInNames(_ folder: String) -> [String] {
    guard let dir = opendir(folder) else { return [] }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name.hasSuffix(".ini"), !name.hasPrefix(".") { names.append(name) }
    }
    return names.sorted()
}

/// `readConfiguration`, with where each value came from (`check-config`, the web page).
public func readConfigurationLayers(_ path: String, for reader: ConfigurationReader = .daemon) throws
    -> (configuration: Configuration, sources: ConfigurationSources)
{
    let (config, sources) = try Configuration.parse(layers: try configurationLayers(path))
    // The files [mqtt] and [sync] name are read when connecting; a missing
    // one, or a secret others may read, is refused here, with the rest of a
    // bad configuration.
    do {
        try config.checkSecrets(for: reader)
    } catch {
        throw FileReadError(message: "\(path): \(error.message)")
    }
    return (config, sources)
}
