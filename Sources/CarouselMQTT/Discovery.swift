import CarouselPlatform
import CarouselWords

/// Home Assistant's MQTT discovery for one frame: retained config
/// messages under `<prefix>/<component>/<node_id>/<object_id>/config`,
/// one device per frame (identified by the client id), each entity with the
/// frame's availability topic. An empty retained payload on the same topic
/// removes an entity.
extension FrameProtocol {
    /// The node id: the client id with what Home Assistant does not take in
    /// one (anything but letters, digits, `_` and `-`) as `_`.
    public var nodeID: String {
        String(identity.clientID.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") ? $0 : "_" })
    }

    /// The discovery config messages (empty without a prefix).
    public var discovery: [MQTTMessage] {
        guard !identity.discoveryPrefix.isEmpty else { return [] }
        return entities.map { entity in
            var config = entity.fields
            config["name"] = .string(entity.name)
            config["unique_id"] = .string("carouseld_\(nodeID)_\(entity.object)")
            config["object_id"] = .string("\(nodeID)_\(entity.object)")
            config["availability_topic"] = .string(availabilityTopic)
            config["device"] = device
            return MQTTMessage(configTopic(entity.component, entity.object), text: JSONValue.object(config).encoded,
                               retain: true, qos: 1)
        }
    }

    /// The topics `discovery` publishes on, for removing them later.
    public var discoveryTopics: [String] { discovery.map(\.topic) }

    /// Empty retained payloads that remove what `topics` announced.
    /// QoS 0: they go out as the connection closes (a reload), and
    /// libmosquitto holds QoS 1 messages beyond its in-flight quota until
    /// PUBACKs arrive, which a closing connection never reads (only 2 of 7
    /// reached the broker); QoS 0 is written at once, in order, before the
    /// DISCONNECT on the same TCP stream.
    public static func removal(of topics: [String]) -> [MQTTMessage] {
        topics.map { MQTTMessage($0, [], retain: true, qos: 0) }
    }

    private func configTopic(_ component: String, _ object: String) -> String {
        "\(identity.discoveryPrefix)/\(component)/\(nodeID)/\(object)/config"
    }

    private var device: JSONValue {
        .object([
            "identifiers": .array([.string("carouseld_\(nodeID)")]),
            "name": .string("carouseld \(identity.clientID)"),
            "manufacturer": .string("carouseld"),
            "model": .string("image carousel"),
            "sw_version": .string(identity.version),
        ])
    }

    private struct Entity {
        var component: String
        var object: String
        var name: String
        var fields: [String: JSONValue]
    }

    private var entities: [Entity] {
        let command = JSONValue.string(commandTopic)
        let state = JSONValue.string(stateTopic)
        var list = [
            Entity(component: "button", object: "next", name: "Next",
                   fields: ["command_topic": command, "payload_press": .string("next"), "icon": .string("mdi:skip-next")]),
            Entity(component: "button", object: "previous", name: "Previous",
                   fields: ["command_topic": command, "payload_press": .string("prev"), "icon": .string("mdi:skip-previous")]),
            // `autoplay.enabled`: `[autoplay] enabled` as `pause` and `resume`
            // last set it (`resume` turns on autoplay the INI keeps off). A
            // finger or the display being off pause it only for a while: the
            // switch stays on.
            Entity(component: "switch", object: "autoplay", name: "Autoplay",
                   fields: ["command_topic": command, "payload_on": .string("resume"), "payload_off": .string("pause"),
                            "state_topic": state, "state_on": .string("ON"), "state_off": .string("OFF"),
                            "value_template": .string("{{ 'ON' if value_json.autoplay.enabled else 'OFF' }}"),
                            "icon": .string("mdi:play-pause")]),
            Entity(component: "switch", object: "display", name: "Display",
                   fields: ["command_topic": command, "payload_on": .string("display on"), "payload_off": .string("display off"),
                            "state_topic": state, "state_on": .string("ON"), "state_off": .string("OFF"),
                            "value_template": .string("{{ 'ON' if value_json.display.power == 'on' else 'OFF' }}"),
                            "icon": .string("mdi:monitor")]),
            Entity(component: "sensor", object: "picture", name: "Picture",
                   fields: ["state_topic": state,
                            "value_template": .string("{{ (value_json.image or '').split('/') | last }}"),
                            "icon": .string("mdi:image")]),
            Entity(component: "number", object: "interval", name: "Interval",
                   fields: ["command_topic": command, "command_template": .string("set interval {{ value }}"),
                            "state_topic": state, "value_template": .string("{{ value_json.autoplay.interval }}"),
                            "min": .double(0.1), "max": .int(86_400), "step": .double(0.1), "mode": .string("box"),
                            "unit_of_measurement": .string("s"), "icon": .string("mdi:timer-outline")]),
            // `screenshot` on the command topic publishes a new picture here.
            Entity(component: "image", object: "screenshot", name: "Screen",
                   fields: ["image_topic": .string(screenshotTopic), "content_type": .string("image/png")]),
            // A clip on screen holds its frame, and plays on; autoplay too
            // (`play` lifts a pause without turning on what the INI keeps off).
            Entity(component: "button", object: "play", name: "Play",
                   fields: ["command_topic": command, "payload_press": .string("play"), "icon": .string("mdi:play")]),
            Entity(component: "button", object: "pause", name: "Pause",
                   fields: ["command_topic": command, "payload_press": .string("pause"), "icon": .string("mdi:pause")]),
        ]
        if identity.hasBacklight {
            list.append(Entity(component: "number", object: "brightness", name: "Brightness",
                               fields: ["command_topic": command, "command_template": .string("brightness {{ value }}"),
                                        "state_topic": state, "value_template": .string("{{ value_json.display.brightness }}"),
                                        "min": .int(1), "max": .int(100), "step": .int(1), "mode": .string("slider"),
                                        "unit_of_measurement": .string("%"), "icon": .string("mdi:brightness-6")]))
        }
        // The capabilities' own entities, as their words declare them.
        for words in identity.capabilityEntities {
            let entity = Entity(component: words.component, object: words.object, name: words.name,
                                fields: words.fields.mapValues { field in
                                    switch field {
                                    case .commandTopic: command
                                    case .stateTopic: state
                                    case let .value(value): value
                                    }
                                })
            let at = words.after.flatMap { after in list.firstIndex { $0.object == after }.map { $0 + 1 } } ?? list.endIndex
            list.insert(entity, at: at)
        }
        return list
    }
}
