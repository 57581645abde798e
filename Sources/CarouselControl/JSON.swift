import CarouselPlatform

/// The one reply every request gets.
public enum ControlReply: Equatable, Sendable {
    /// `{"ok":true, ...fields}`; a field named "ok" is ignored, the reply decides that.
    case ok([String: JSONValue])
    /// `{"ok":false,"error":"..."}`: the message names the problem and, where
    /// it can, what to do about it.
    case error(String)

    public static var ok: ControlReply { .ok([:]) }

    /// The one answer to `help`, wherever it is asked (the socket, MQTT):
    /// every command with its usage.
    public static var help: ControlReply {
        .ok(["commands": .array(ControlRequest.commandNames.map { .string(ControlRequest.usage[$0] ?? $0) })])
    }

    /// The reply as one JSON line, without the newline; "ok" comes first so
    /// a human reading `socat` output sees the verdict before the details.
    public var line: String {
        var out = ""
        switch self {
        case let .ok(fields):
            let rest = fields.filter { $0.key != "ok" }.sorted { $0.key < $1.key }
            JSONValue.encode(fields: [("ok", .bool(true))] + rest, into: &out)
        case let .error(message):
            JSONValue.encode(fields: [("ok", .bool(false)), ("error", .string(message))], into: &out)
        }
        return out
    }

    /// Reads a reply line; nil when the line is not a reply (not JSON, or no boolean "ok").
    public init?(line: String) {
        guard let value = JSONValue.parse(line), case let .object(fields) = value,
              let ok = fields["ok"]?.boolValue else { return nil }
        if ok {
            self = .ok(fields.filter { $0.key != "ok" })
        } else {
            self = .error(fields["error"]?.stringValue ?? "carouseld refused the request without saying why")
        }
    }
}

/// An event for subscribers: `{"event":"<name>", ...fields}` as one line.
/// The daemon names its events (`indexChanged`, `paused`, ...) and passes
/// the line to `ControlServer.broadcast(line:)`.
public func controlEventLine(_ name: String, _ fields: [String: JSONValue] = [:]) -> String {
    var out = ""
    let rest = fields.filter { $0.key != "event" }.sorted { $0.key < $1.key }
    JSONValue.encode(fields: [("event", .string(name))] + rest, into: &out)
    return out
}
