/// A capability's settings: a value of the capability's own type, kept in the
/// configuration under that type (`config[VideoSettings.self]`), so that the
/// house's configuration names no capability. `init()` is the defaults.
public protocol CapabilitySettings: Equatable, Sendable {
    init()
}

/// Every capability's settings, each under its type. A type never set reads
/// as its defaults, and compares so: a configuration that names none of
/// `[video]` equals one that sets every key of it to its default.
public struct SettingsBag: Equatable, Sendable {
    private var values: [ObjectIdentifier: any CapabilitySettings] = [:]

    public init() {}

    public subscript<S: CapabilitySettings>(_ type: S.Type) -> S {
        get { values[ObjectIdentifier(type)] as? S ?? S() }
        set { values[ObjectIdentifier(type)] = newValue }
    }

    public static func == (a: SettingsBag, b: SettingsBag) -> Bool {
        for id in Set(a.values.keys).union(b.values.keys) {
            guard let either = a.values[id] ?? b.values[id] else { continue }
            if !same(either, a.values[id], b.values[id]) { return false }
        }
        return true
    }

    /// `a` and `b` (either may be missing: the defaults) as values of `S`.
    private static func same<S: CapabilitySettings>(_: S, _ a: (any CapabilitySettings)?, _ b: (any CapabilitySettings)?) -> Bool {
        (a as? S ?? S()) == (b as? S ?? S())
    }
}
