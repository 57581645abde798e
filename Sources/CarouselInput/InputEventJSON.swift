import CarouselPlatform
/// One-line JSON for `carouseld input-test` and logs: what the end-to-end
/// tests read to check that a device's events reach libinput intact.
///
///     {"t":1234567,"type":"touchDown","slot":0,"x":640.5,"y":400}
///     {"t":1234567,"type":"deviceAdded","id":1,"name":"...","sysname":"event5",...}
extension InputEvent {
    /// `now` stands in for the time of device events, which have none.
    public func jsonLine(now: UInt64) -> String {
        var fields: [(String, String)] = [("t", String(time ?? now))]
        func add(_ key: String, _ value: String) { fields.append((key, value)) }
        switch self {
        case let .touchDown(slot, x, y, _):
            add("type", InputJSON.string("touchDown")); add("slot", String(slot))
            add("x", InputJSON.number(x)); add("y", InputJSON.number(y))
        case let .touchMotion(slot, x, y, _):
            add("type", InputJSON.string("touchMotion")); add("slot", String(slot))
            add("x", InputJSON.number(x)); add("y", InputJSON.number(y))
        case let .touchUp(slot, _):
            add("type", InputJSON.string("touchUp")); add("slot", String(slot))
        case let .touchCancel(slot, _):
            add("type", InputJSON.string("touchCancel")); add("slot", String(slot))
        case .touchFrame:
            add("type", InputJSON.string("touchFrame"))
        case let .pointerMotion(dx, dy, _):
            add("type", InputJSON.string("pointerMotion")); add("dx", InputJSON.number(dx)); add("dy", InputJSON.number(dy))
        case let .pointerMotionAbsolute(x, y, _):
            add("type", InputJSON.string("pointerMotionAbsolute")); add("x", InputJSON.number(x)); add("y", InputJSON.number(y))
        case let .pointerButton(button, pressed, _):
            add("type", InputJSON.string("pointerButton")); add("button", String(button)); add("pressed", String(pressed))
        case let .key(code, pressed, _):
            add("type", InputJSON.string("key")); add("code", String(code)); add("pressed", String(pressed))
        case let .deviceAdded(info):
            add("type", InputJSON.string("deviceAdded")); fields += info.jsonFields
        case let .deviceRemoved(info):
            add("type", InputJSON.string("deviceRemoved")); fields += info.jsonFields
        }
        return InputJSON.object(fields)
    }
}

extension InputDeviceInfo {
    var jsonFields: [(String, String)] {
        var fields: [(String, String)] = [
            ("id", String(id)), ("name", InputJSON.string(name)), ("sysname", InputJSON.string(sysname)),
        ]
        if let devnode { fields.append(("devnode", InputJSON.string(devnode))) }
        fields.append(("capabilities", "[" + capabilities.names.map(InputJSON.string).joined(separator: ",") + "]"))
        if let size = physicalSize {
            fields.append(("width_mm", InputJSON.number(size.width)))
            fields.append(("height_mm", InputJSON.number(size.height)))
        }
        return fields
    }

    /// The device as one JSON object (the fields of its device events).
    public var jsonObject: String { InputJSON.object(jsonFields) }
}

/// Just enough JSON writing for flat objects (the input-test lines).
public enum InputJSON {
    /// `{"key":value,...}` from keys and already-encoded values.
    public static func object(_ fields: [(String, String)]) -> String {
        "{" + fields.map { string($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    /// A finite number in the shortest form that reads back the same;
    /// `null` for NaN and infinities, which JSON cannot carry.
    public static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    public static func string(_ text: String) -> String { JSONText.quoted(text) }
}
