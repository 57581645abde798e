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
    /// `--name=value`, in either order.
    public init?(_ arguments: some Sequence<String>) {
        var rest = Array(arguments)[...]
        if rest.first == "run" { rest = rest.dropFirst() }
        var seen: Set<String> = []
        while let argument = rest.popFirst() {
            let name: String, value: String
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
            } else {
                guard let next = rest.popFirst() else { return nil }
                name = argument
                value = next
            }
            guard !value.isEmpty, !value.hasPrefix("-"), seen.insert(name).inserted else { return nil }
            switch name {
            case "--config": config = value
            case "--display":
                guard value == "drm" || value.hasPrefix("offscreen:") else { return nil }
                display = value
            default: return nil
            }
        }
    }
}
