/// `carouseld run` as systemd starts it (`run --config PATH`), read without
/// ArgumentParser. Its parser first builds the tree of every subcommand
/// through the runtime's reflection: 80 ms of a TCG vCPU in the VM (perf),
/// before the configuration is even read, on the way to the first picture.
/// Only the plainest forms are read here; anything else (another command,
/// `--help`, `--version`, a repeated or unknown option, a value that looks
/// like an option or is empty, a display that is neither `drm` nor
/// `offscreen:...`) is `nil`, and ArgumentParser reads it and owns its
/// errors and help, as before.
public struct RunCommandLine: Equatable, Sendable {
    /// `run --config`'s default.
    public static let defaultConfig = "/etc/carouseld/carouseld.ini"
    /// `run --display`'s default.
    public static let defaultDisplay = "drm"

    public var config = Self.defaultConfig
    public var display = Self.defaultDisplay

    /// `arguments` without the program's name: `[run] [--config PATH]
    /// [--display drm|offscreen:...]`, each option once, as `--name value` or
    /// `--name=value`, in either order. Plain arrays and flags: a generic
    /// collection's first use costs the runtime a search of its conformance
    /// records (milliseconds under TCG), which is what this avoids.
    public init?(_ arguments: [String]) {
        var i = arguments.first == "run" ? 1 : 0
        var configSeen = false, displaySeen = false
        while i < arguments.count {
            let argument = arguments[i]
            let name: Substring, value: Substring
            if let equals = argument.firstIndex(of: "=") {
                name = argument[..<equals]
                value = argument[argument.index(after: equals)...]
                i += 1
            } else {
                guard i + 1 < arguments.count else { return nil }
                name = argument[...]
                value = arguments[i + 1][...]
                i += 2
            }
            guard !value.isEmpty, value.first != "-" else { return nil }
            if name == "--config", !configSeen {
                configSeen = true
                config = String(value)
            } else if name == "--display", !displaySeen, value == "drm" || value.hasPrefix("offscreen:") {
                displaySeen = true
                display = String(value)
            } else {
                return nil
            }
        }
    }
}
