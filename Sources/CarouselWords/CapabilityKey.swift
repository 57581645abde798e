import CarouselCore

/// One INI key: its section and name, what values it takes, its default,
/// its help, what `set` of it needs, and how its value is read into `Root`:
/// the whole configuration for the house's keys (`KeySpec`), a capability's
/// settings for a capability's (lifted into the configuration's
/// `SettingsBag` with `inBag`). The one statement of a key, from which its
/// validation, its `accepts` text, the documents and the tests that walk
/// its edges all come.
public struct KeyDeclaration<Root>: Sendable {
    public let section: String
    public let name: String
    /// What values it takes.
    public let domain: ValueDomain
    /// What the key accepts, for error messages and `--help`, and what the
    /// README and carouseld.ini(5) say it accepts.
    public let accepts: String
    /// The default as the INI writes it, "" for empty: a value the key takes
    /// that leaves the built-in default as it is (a test holds it to that).
    /// Computed defaults are written as what asks for them (`auto`, empty),
    /// and `help` says what they come to.
    public let defaultValue: String
    /// What the key does, for the shipped INI's comments, the README and
    /// carouseld.ini(5): plain sentences, `code` in backticks, nothing else
    /// (no links, no `|`). Line breaks and runs of spaces count as one space.
    /// Made from the source text when asked (documentation, `--help`), not
    /// for every key at every start.
    public var help: String { writtenHelp.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
    private let writtenHelp: String
    /// What `set` of it needs (the trust boundary's classes); nil for the
    /// house's keys, whose lists are in KeyCapabilities.swift.
    public let capability: Capability?
    /// A capability's key in a section of the house: the key it follows in
    /// the shipped INI, the README and the manual; nil: at the section's end.
    public let after: String?
    public let apply: @Sendable (inout Root, String) throws(ValueError) -> Void

    public init(section: String, name: String, domain: ValueDomain, accepts: String, default defaultValue: String,
                help: String, needs capability: Capability? = nil, after: String? = nil,
                apply: @escaping @Sendable (inout Root, String) throws(ValueError) -> Void) {
        self.section = section
        self.name = name
        self.domain = domain
        self.accepts = accepts
        self.defaultValue = defaultValue
        self.writtenHelp = help
        self.capability = capability
        self.after = after
        self.apply = apply
    }

    /// The same key, read into the part of `Outer` that `part` reaches.
    public func reading<Outer>(into part: WritableKeyPath<Outer, Root> & Sendable) -> KeyDeclaration<Outer> {
        let apply = self.apply
        return KeyDeclaration<Outer>(section: section, name: name, domain: domain, accepts: accepts, default: defaultValue,
                                     help: writtenHelp, needs: capability, after: after) { outer, value throws(ValueError) in
            try apply(&outer[keyPath: part], value)
        }
    }
}

/// A capability's key as the configuration reads it: into its settings in the bag.
public typealias CapabilityKey = KeyDeclaration<SettingsBag>

extension KeyDeclaration where Root: CapabilitySettings {
    /// The key read into its settings where the configuration keeps them.
    public var inBag: CapabilityKey {
        let apply = self.apply
        return CapabilityKey(section: section, name: name, domain: domain, accepts: accepts, default: defaultValue,
                             help: help, needs: capability, after: after) { bag, value throws(ValueError) in
            var settings = bag[Root.self]
            try apply(&settings, value)
            bag[Root.self] = settings
        }
    }
}

// MARK: - Builders: how most keys are written

extension KeyDeclaration {
    /// A key checked by its own rule (`accepts` says what it takes).
    public static func text(_ section: String, _ name: String, _ accepts: String, default defaultValue: String,
                            needs capability: Capability? = nil, after: String? = nil, help: String,
                            _ read: @escaping @Sendable (inout Root, String) throws(ValueError) -> Void) -> KeyDeclaration {
        KeyDeclaration(section: section, name: name, domain: .text, accepts: accepts, default: defaultValue, help: help,
                       needs: capability, after: after, apply: read)
    }

    public static func flag(_ section: String, _ name: String, default defaultValue: String,
                            needs capability: Capability? = nil, after: String? = nil, help: String,
                            _ store: @escaping @Sendable (inout Root, Bool) -> Void) -> KeyDeclaration {
        KeyDeclaration(section: section, name: name, domain: .boolean, accepts: "true or false", default: defaultValue,
                       help: help, needs: capability, after: after) { r, v throws(ValueError) in
            store(&r, try ValueText.bool(v))
        }
    }

    /// A number in `range`, in `unit`; `note` follows the range in `accepts`.
    public static func number(_ section: String, _ name: String, _ range: ClosedRange<Double>, unit: String = "",
                              note: String = "", default defaultValue: String, needs capability: Capability? = nil,
                              after: String? = nil, help: String,
                              _ store: @escaping @Sendable (inout Root, Double) -> Void) -> KeyDeclaration {
        let accepts = (unit.isEmpty ? "" : unit + ", ")
            + "\(ValueText.format(range.lowerBound)) to \(ValueText.format(range.upperBound))" + note
        return KeyDeclaration(section: section, name: name, domain: .number(range, unit: unit), accepts: accepts,
                              default: defaultValue, help: help, needs: capability, after: after) { r, v throws(ValueError) in
            store(&r, try ValueText.number(v, range, unit: unit))
        }
    }

    public static func integer(_ section: String, _ name: String, _ range: ClosedRange<Int>, default defaultValue: String,
                               needs capability: Capability? = nil, after: String? = nil, help: String,
                               _ store: @escaping @Sendable (inout Root, Int) -> Void) -> KeyDeclaration {
        KeyDeclaration(section: section, name: name, domain: .integer(range), accepts: "\(range.lowerBound) to \(range.upperBound)",
                       default: defaultValue, help: help, needs: capability, after: after) { r, v throws(ValueError) in
            store(&r, try ValueText.integer(v, range))
        }
    }

    public static func choice<E: RawRepresentable & CaseIterable & Sendable>(
        _ section: String, _ name: String, _ type: E.Type, default defaultValue: String, needs capability: Capability? = nil,
        after: String? = nil, help: String, _ store: @escaping @Sendable (inout Root, E) -> Void
    ) -> KeyDeclaration where E.RawValue == String {
        let words = E.allCases.map(\.rawValue)
        return KeyDeclaration(section: section, name: name, domain: .choice(words), accepts: ValueText.accepts(choice: words),
                              default: defaultValue, help: help, needs: capability, after: after) { r, v throws(ValueError) in
            store(&r, try ValueText.choice(v, type))
        }
    }

    public static func color(_ section: String, _ name: String, default defaultValue: String,
                             needs capability: Capability? = nil, after: String? = nil, help: String,
                             _ store: @escaping @Sendable (inout Root, PixelColor) -> Void) -> KeyDeclaration {
        KeyDeclaration(section: section, name: name, domain: .color, accepts: "#RRGGBB or #RRGGBBAA", default: defaultValue,
                       help: help, needs: capability, after: after) { r, v throws(ValueError) in
            store(&r, try ValueText.color(v))
        }
    }
}
