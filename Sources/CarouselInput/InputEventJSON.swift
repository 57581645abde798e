import CarouselPlatform
/// One-line JSON for `carouseld input-test` and logs: what the end-to-end
/// tests read to check that a device's events reach libinput intact.
///
///     {"t":1234567,"type":"touchDown","slot":0,"x":640.5,"y":400}
///     {"t":1234567,"type":"deviceAdded","id":1,"name":"...","sysname":"event5",...}
extension InputEvent {
    /// `now` stands in for the time of device events, which have none.
    public func jsonLine(now: UInt64) -> String { json(now: now).encoded }

    /// The event as a JSON object: its time first, then its type and fields.
    public func json(now: UInt64) -> JSONValue {
        var fields = [JSONField("t", .int(Int(time ?? now)))]
        func add(_ key: String, _ value: JSONValue) { fields.append(JSONField(key, value)) }
        switch self {
        case let .touchDown(slot, x, y, _):
            add("type", "touchDown"); add("slot", .int(slot)); add("x", .double(x)); add("y", .double(y))
        case let .touchMotion(slot, x, y, _):
            add("type", "touchMotion"); add("slot", .int(slot)); add("x", .double(x)); add("y", .double(y))
        case let .touchUp(slot, _):
            add("type", "touchUp"); add("slot", .int(slot))
        case let .touchCancel(slot, _):
            add("type", "touchCancel"); add("slot", .int(slot))
        case .touchFrame:
            add("type", "touchFrame")
        case let .pointerMotion(dx, dy, _):
            add("type", "pointerMotion"); add("dx", .double(dx)); add("dy", .double(dy))
        case let .pointerMotionAbsolute(x, y, _):
            add("type", "pointerMotionAbsolute"); add("x", .double(x)); add("y", .double(y))
        case let .pointerButton(button, pressed, _):
            add("type", "pointerButton"); add("button", .int(Int(button))); add("pressed", .bool(pressed))
        case let .key(code, pressed, _):
            add("type", "key"); add("code", .int(Int(code))); add("pressed", .bool(pressed))
        case let .deviceAdded(info):
            add("type", "deviceAdded"); fields += info.jsonFields
        case let .deviceRemoved(info):
            add("type", "deviceRemoved"); fields += info.jsonFields
        }
        return .fields(fields)
    }
}

extension InputDeviceInfo {
    var jsonFields: [JSONField] {
        var fields = [JSONField("id", .int(id)), JSONField("name", .string(name)), JSONField("sysname", .string(sysname))]
        if let devnode { fields.append(JSONField("devnode", .string(devnode))) }
        fields.append(JSONField("capabilities", .array(capabilities.names.map { .string($0) })))
        if let size = physicalSize {
            fields.append(JSONField("width_mm", .double(size.width)))
            fields.append(JSONField("height_mm", .double(size.height)))
        }
        return fields
    }

    /// The device as one JSON object (the fields of its device events).
    public var jsonObject: String { JSONValue.fields(jsonFields).encoded }
}
