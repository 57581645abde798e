import CarouselCore
import CarouselPlatform

/// Everything a capability says to the world, declared in its own room: its
/// INI keys, its requests on the control socket (and so MQTT's command
/// topic), its status fields, its events, its Home Assistant entities. The
/// schema, `help`, the control answers' refusals, MQTT discovery and the
/// documents are made from these (`Capabilities.all` lists them), so a
/// capability adds no word to the house's files.
public struct CapabilityWords: Sendable {
    /// The capability, as log lines and the documents name it.
    public let name: String
    /// Sections of its own (`[video]`), in the order the documents list them.
    public let sections: [SectionSpec]
    /// Its keys: in its sections, or in one of the house's.
    public let keys: [CapabilityKey]
    /// Why the settings as read cannot work together, checked once all keys
    /// are in (nil: they can); the house's settings it may read beside its own.
    public let check: (@Sendable (any SettingsReading) -> String?)?
    public let requests: [RequestWords]
    /// The fields its service adds to `status` (and MQTT's state).
    public let status: [StatusWords]
    /// The events its service sends to subscribers (and MQTT's event topic).
    public let events: [EventWords]
    public let entities: [EntityWords]

    public init(name: String, sections: [SectionSpec] = [], keys: [CapabilityKey] = [],
                check: (@Sendable (any SettingsReading) -> String?)? = nil, requests: [RequestWords] = [],
                status: [StatusWords] = [], events: [EventWords] = [], entities: [EntityWords] = []) {
        self.name = name
        self.sections = sections
        self.keys = keys
        self.check = check
        self.requests = requests
        self.status = status
        self.events = events
        self.entities = entities
    }
}

/// What a capability's check may read: its own settings and the house's
/// overlay corners (pushed text must not cover the captions).
public protocol SettingsReading {
    var overlay: OverlaySettings { get }
    subscript<S: CapabilitySettings>(_ type: S.Type) -> S { get }
}

/// A request a capability serves: its first word, its usage line (for
/// `help` and errors), what it does, and how the rest of the line is read.
public struct RequestWords: Sendable {
    public let name: String
    public let usage: String
    public let help: String
    /// A message on MQTT's command topic may hold it over several lines,
    /// which are joined as `\n` (a text for the screen that Home Assistant
    /// templates as JSON); other requests are one line.
    public let joinsLines: Bool
    /// Reads the words after `name` (blanks before them dropped, the inner
    /// spacing kept) into the request, or says why not.
    public let parse: @Sendable (_ rest: String) -> Result<DeclaredRequest, ValueError>

    public init(name: String, usage: String, help: String, joinsLines: Bool = false,
                parse: @escaping @Sendable (_ rest: String) -> Result<DeclaredRequest, ValueError>) {
        self.name = name
        self.usage = usage
        self.help = help
        self.joinsLines = joinsLines
        self.parse = parse
    }
}

/// A capability's request as read: the service that declared it serves it.
public struct DeclaredRequest: Equatable, Sendable {
    /// What it is called in a refusal and by the service (`overlay text`),
    /// never with a value (which may be private).
    public let name: String
    /// Its argument as read (the text to show), nil for none.
    public let argument: String?
    /// What it needs of a grant.
    public let capability: Capability
    /// The request as a client sends it (without the newline).
    public let line: String

    public init(name: String, argument: String? = nil, needs capability: Capability, line: String) {
        self.name = name
        self.argument = argument
        self.capability = capability
        self.line = line
    }
}

/// A word a capability's service says and what it means: a field it adds
/// to the status object (`StatusWords`), an event it sends (`EventWords`).
public struct DeclaredWord: Sendable, Equatable {
    public let name: String
    public let help: String
    public init(_ name: String, help: String) {
        self.name = name
        self.help = help
    }
}

/// A field a capability's service adds to the status object.
public typealias StatusWords = DeclaredWord
/// An event a capability's service sends, by the name subscribers see.
public typealias EventWords = DeclaredWord

/// A Home Assistant entity announced by MQTT discovery for a capability.
/// Two are equal when they announce the same (`shown` aside).
public struct EntityWords: Sendable, Equatable {
    public let component: String
    public let object: String
    public let name: String
    public let fields: [String: EntityField]
    /// The house's entity it follows in discovery (its `object`); nil: after them all.
    public let after: String?
    /// Whether these settings have it announced (a sensor configured); nil: always.
    public let shown: (@Sendable (any SettingsReading) -> Bool)?

    public init(component: String, object: String, name: String, fields: [String: EntityField], after: String? = nil,
                shown: (@Sendable (any SettingsReading) -> Bool)? = nil) {
        self.component = component
        self.object = object
        self.name = name
        self.fields = fields
        self.after = after
        self.shown = shown
    }

    public static func == (a: EntityWords, b: EntityWords) -> Bool {
        (a.component, a.object, a.name, a.after) == (b.component, b.object, b.name, b.after) && a.fields == b.fields
    }
}

/// A field of a discovery config: the frame's own topics are known only to
/// the MQTT room; everything else is a value.
public enum EntityField: Sendable, Equatable {
    case commandTopic
    case stateTopic
    case value(JSONValue)
}
