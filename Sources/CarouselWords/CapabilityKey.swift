import CarouselCore

/// One INI key a capability declares: its section (its own, or one of the
/// house's, such as `[power]` for the presence sensor's keys), how its
/// value is read into the capability's settings, what it accepts, its help
/// and what `set` of it needs. The schema takes it as it takes its own keys.
public struct CapabilityKey: Sendable {
    public let section: String
    public let name: String
    public let domain: ValueDomain
    public let accepts: String
    public let defaultValue: String
    /// Written as `KeySpec.help` is: plain sentences, `code` in backticks;
    /// line breaks and runs of spaces count as one space.
    public var help: String { writtenHelp.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
    private let writtenHelp: String
    /// What `set` of it needs (the trust boundary's classes).
    public let capability: Capability
    /// In a section of the house, the key it follows in the shipped INI, the
    /// README and the manual; nil: at the section's end.
    public let after: String?
    public let apply: @Sendable (inout SettingsBag, String) throws(ValueError) -> Void

    public init<S: CapabilitySettings>(
        _ section: String, _ name: String, _ settings: S.Type, domain: ValueDomain, accepts: String,
        default defaultValue: String, needs capability: Capability, after: String? = nil, help: String,
        _ read: @escaping @Sendable (inout S, String) throws(ValueError) -> Void
    ) {
        self.section = section
        self.name = name
        self.domain = domain
        self.accepts = accepts
        self.defaultValue = defaultValue
        self.writtenHelp = help
        self.capability = capability
        self.after = after
        self.apply = { bag, value throws(ValueError) in
            var settings = bag[S.self]
            try read(&settings, value)
            bag[S.self] = settings
        }
    }

    /// A key checked by its own rule (`accepts` says what it takes).
    public static func text<S: CapabilitySettings>(
        _ section: String, _ name: String, _ settings: S.Type, _ accepts: String, default defaultValue: String,
        needs capability: Capability, after: String? = nil, help: String,
        _ read: @escaping @Sendable (inout S, String) throws(ValueError) -> Void
    ) -> CapabilityKey {
        CapabilityKey(section, name, settings, domain: .text, accepts: accepts, default: defaultValue, needs: capability,
                      after: after, help: help, read)
    }

    public static func flag<S: CapabilitySettings>(
        _ section: String, _ name: String, _ settings: S.Type, default defaultValue: String,
        needs capability: Capability, after: String? = nil, help: String,
        _ store: @escaping @Sendable (inout S, Bool) -> Void
    ) -> CapabilityKey {
        CapabilityKey(section, name, settings, domain: .boolean, accepts: "true or false", default: defaultValue,
                      needs: capability, after: after, help: help) { s, v throws(ValueError) in
            store(&s, try ValueText.bool(v))
        }
    }

    /// A number in `range`, in `unit`.
    public static func number<S: CapabilitySettings>(
        _ section: String, _ name: String, _ settings: S.Type, _ range: ClosedRange<Double>, unit: String = "",
        default defaultValue: String, needs capability: Capability, after: String? = nil, help: String,
        _ store: @escaping @Sendable (inout S, Double) -> Void
    ) -> CapabilityKey {
        let accepts = (unit.isEmpty ? "" : unit + ", ") + "\(ValueText.format(range.lowerBound)) to \(ValueText.format(range.upperBound))"
        return CapabilityKey(section, name, settings, domain: .number(range, unit: unit), accepts: accepts,
                             default: defaultValue, needs: capability, after: after, help: help) { s, v throws(ValueError) in
            store(&s, try ValueText.number(v, range, unit: unit))
        }
    }

    public static func integer<S: CapabilitySettings>(
        _ section: String, _ name: String, _ settings: S.Type, _ range: ClosedRange<Int>, default defaultValue: String,
        needs capability: Capability, after: String? = nil, help: String,
        _ store: @escaping @Sendable (inout S, Int) -> Void
    ) -> CapabilityKey {
        CapabilityKey(section, name, settings, domain: .integer(range), accepts: "\(range.lowerBound) to \(range.upperBound)",
                      default: defaultValue, needs: capability, after: after, help: help) { s, v throws(ValueError) in
            store(&s, try ValueText.integer(v, range))
        }
    }

    public static func choice<S: CapabilitySettings, E: RawRepresentable & CaseIterable & Sendable>(
        _ section: String, _ name: String, _ settings: S.Type, _ type: E.Type, default defaultValue: String,
        needs capability: Capability, after: String? = nil, help: String,
        _ store: @escaping @Sendable (inout S, E) -> Void
    ) -> CapabilityKey where E.RawValue == String {
        let words = E.allCases.map(\.rawValue)
        return CapabilityKey(section, name, settings, domain: .choice(words), accepts: ValueText.accepts(choice: words),
                             default: defaultValue, needs: capability, after: after, help: help) { s, v throws(ValueError) in
            store(&s, try ValueText.choice(v, type))
        }
    }
}
