// The MQTT protocol of one frame, without a broker: topics, requests,
// state coalescing, Home Assistant discovery.

import CarouselCapabilities
import CarouselConfig
import CarouselControl
import CarouselMQTT
import CarouselPlatform
import CarouselPresenceWords
import CarouselPushedTextWords
import Testing

@Suite struct FrameProtocolTests {
    let frame = FrameProtocol(identity: FrameIdentity(clientID: "kitchen", topic: "carouseld/kitchen",
                                                      discoveryPrefix: "homeassistant", version: "1.2.3",
                                                      capabilityEntities: Capabilities.entities(shownWith: Configuration())))

    @Test func topicsUnderTheBaseAndTheSharedCommandTopic() throws {
        #expect(frame.availabilityTopic == "carouseld/kitchen/availability")
        #expect(frame.subscriptions == ["carouseld/kitchen/command", "carouseld/all/command"])
        #expect(frame.isCommandTopic("carouseld/all/command") && frame.isCommandTopic("carouseld/kitchen/command"))
        #expect(!frame.isCommandTopic("carouseld/hall/command"))
        let deep = FrameProtocol(identity: FrameIdentity(clientID: "a", topic: "shop/floor1/a", discoveryPrefix: "", version: "1"))
        #expect(deep.sharedCommandTopic == "shop/floor1/all/command")
        let flat = FrameProtocol(identity: FrameIdentity(clientID: "a", topic: "frame", discoveryPrefix: "", version: "1"))
        #expect(flat.sharedCommandTopic == nil)
        #expect(flat.subscriptions == ["frame/command"])
        #expect(frame.will == MQTTMessage("carouseld/kitchen/availability", text: "offline", retain: true, qos: 1))
        #expect(frame.online.text == "online" && frame.online.retain)
    }

    @Test func commandsAreTheSocketsLanguage() throws {
        #expect(try FrameProtocol.request(payload: Array("next".utf8)).get() == .next)
        #expect(try FrameProtocol.request(payload: Array("goto 3 250\n".utf8)).get() == .goto(index: 3, milliseconds: 250))
        #expect(try FrameProtocol.request(payload: Array("set interval 5".utf8)).get() == .set(key: "interval", value: "5"))
        #expect(try FrameProtocol.request(payload: Array("screenshot".utf8)).get() == .screenshot(path: nil))
        #expect(try FrameProtocol.request(payload: Array("display off".utf8)).get() == .display(.off))
    }

    @Test func pushedTextMayComeInSeveralLines() throws {
        // Home Assistant's text entity, or a JSON payload's real line ends: the text's lines.
        #expect(try FrameProtocol.request(payload: Array("overlay text Sunny 21 °C".utf8)).get() == .declared(PushedTextWords.text("Sunny 21 °C")))
        #expect(try FrameProtocol.request(payload: Array("overlay text Sunny\nRain from 16:00\n".utf8)).get()
                == .declared(PushedTextWords.text("Sunny\\nRain from 16:00")))
        #expect(try FrameProtocol.request(payload: Array("overlay text \"a\r\nb\"".utf8)).get() == .declared(PushedTextWords.text("a\nb")))
        #expect(try FrameProtocol.request(payload: Array("overlay clear".utf8)).get() == .declared(PushedTextWords.clear))
    }

    @Test func refusedRequestsGetTheirErrorOnly() {
        func message(_ text: String) -> String? {
            if case let .failure(e) = FrameProtocol.request(payload: Array(text.utf8)) { return e.message }
            return nil
        }
        #expect(message("jump")?.hasPrefix("unknown command 'jump'") == true)
        #expect(message("goto x") == "goto needs an item index, got 'x'")
        #expect(message("screenshot /tmp/x.png")?.hasPrefix("screenshot PATH is not taken over MQTT") == true)
        #expect(message("screenshot raw")?.hasPrefix("screenshot raw is for the control socket") == true)
        #expect(message("subscribe")?.hasPrefix("subscribe is not taken over MQTT") == true)
        #expect(message("next\nnext") == "one request per message, got several lines")
        #expect(message("")?.hasPrefix("empty request") == true)
        if case .success = FrameProtocol.request(payload: [0xFF, 0xFE]) { Issue.record("bytes that are not UTF-8 were taken") }
        #expect(frame.reply(.error("x")).text == #"{"ok":false,"error":"x"}"#)
        #expect(frame.reply(.error("x")).topic == "carouseld/kitchen/reply")
    }

    @Test func stateIsPublishedOnChangeAtMostFourTimesASecond() {
        var publisher = StatePublisher()
        var status: [String: JSONValue] = ["index": .int(0), "frames": .int(1), "uptime_ms": .int(5),
                                           "autoplay": .object(["running": .bool(true), "next_ms": .int(3000)])]
        // The first look publishes.
        #expect(publisher.take(now: 1_000_000) { status } != nil)
        #expect(publisher.deadline == nil)
        // Frames and time passing are no change.
        status["frames"] = .int(90)
        status["uptime_ms"] = .int(900)
        status["autoplay"] = .object(["running": .bool(true), "next_ms": .int(6000)])
        publisher.noteChange()
        #expect(publisher.take(now: 2_000_000) { status } == nil)
        // A change soon after a publication waits for the end of the interval, then goes once.
        publisher.noteChange()
        #expect(publisher.take(now: 2_100_000) { ["index": .int(1)] } == ["index": .int(1)])
        status = ["index": .int(2)]
        publisher.noteChange()
        #expect(publisher.deadline == 2_350_000)
        #expect(publisher.take(now: 2_200_000) { status } == nil)
        status = ["index": .int(3)]
        publisher.noteChange()
        #expect(publisher.take(now: 2_350_000) { status } == ["index": .int(3)])
        // A new connection publishes again, whatever it is.
        publisher.connected()
        #expect(publisher.take(now: 2_360_000) { status } == ["index": .int(3)])
        #expect(frame.state(status).retain)
    }

    @Test func discoveryAnnouncesOneDeviceWithItsEntities() throws {
        let messages = frame.discovery
        let topics = messages.map(\.topic)
        #expect(topics == [
            "homeassistant/button/kitchen/next/config", "homeassistant/button/kitchen/previous/config",
            "homeassistant/switch/kitchen/autoplay/config", "homeassistant/switch/kitchen/display/config",
            "homeassistant/sensor/kitchen/picture/config", "homeassistant/number/kitchen/interval/config",
            "homeassistant/image/kitchen/screenshot/config", "homeassistant/text/kitchen/text/config",
            "homeassistant/button/kitchen/play/config", "homeassistant/button/kitchen/pause/config",
        ])
        #expect(messages.allSatisfy { $0.retain })
        for m in messages {
            let config = try #require(JSONValue.parse(m.text))
            #expect(config["availability_topic"]?.stringValue == "carouseld/kitchen/availability")
            let device = try #require(config["device"])
            #expect(device["identifiers"] == JSONValue.array([.string("carouseld_kitchen")]))
        }
        let next = try #require(JSONValue.parse(messages[0].text))
        #expect(next["command_topic"]?.stringValue == "carouseld/kitchen/command")
        #expect(next["payload_press"]?.stringValue == "next")
        // The Autoplay switch reads `autoplay.enabled` (on or off as a user
        // switched it), not `paused_by`: with `[autoplay] enabled = false`
        // nothing pauses it, and it is off.
        let autoplay = try #require(JSONValue.parse(messages[2].text))
        #expect(autoplay["value_template"]?.stringValue == "{{ 'ON' if value_json.autoplay.enabled else 'OFF' }}")
        #expect(autoplay["payload_on"]?.stringValue == "resume")
        #expect(autoplay["payload_off"]?.stringValue == "pause")
        let image = try #require(JSONValue.parse(messages[6].text))
        #expect(image["image_topic"]?.stringValue == "carouseld/kitchen/screenshot")
        // The text entity pushes `overlay text` and reads back what shows.
        let text = try #require(JSONValue.parse(messages[7].text))
        #expect(text["command_topic"]?.stringValue == "carouseld/kitchen/command")
        #expect(text["command_template"]?.stringValue == "overlay text {{ value | to_json }}")
        #expect(text["state_topic"]?.stringValue == "carouseld/kitchen/state")
        #expect(text["value_template"]?.stringValue?.contains("value_json.overlay.text") == true)
        // Play and Pause: a clip on screen (and autoplay) hold still, and play on.
        let play = try #require(JSONValue.parse(messages[8].text))
        #expect(play["payload_press"]?.stringValue == "play")
        let pause = try #require(JSONValue.parse(messages[9].text))
        #expect(pause["payload_press"]?.stringValue == "pause")
        // The brightness number only with a backlight.
        var lit = frame.identity
        lit.hasBacklight = true
        #expect(FrameProtocol(identity: lit).discoveryTopics.last == "homeassistant/number/kitchen/brightness/config")
        // The occupancy sensor only with a presence sensor, read from the state's `presence`.
        var sensed = frame.identity
        var withSensor = Configuration()
        withSensor[PresenceSettings.self].source = .key(code: 59, name: "KEY_F1")
        sensed.capabilityEntities = Capabilities.entities(shownWith: withSensor)
        let presence = try #require(FrameProtocol(identity: sensed).discovery.last)
        #expect(presence.topic == "homeassistant/binary_sensor/kitchen/presence/config")
        let sensor = try #require(JSONValue.parse(presence.text))
        #expect(sensor["device_class"]?.stringValue == "occupancy")
        #expect(sensor["state_topic"]?.stringValue == "carouseld/kitchen/state")
        #expect(sensor["value_template"]?.stringValue == "{{ 'ON' if value_json.presence and value_json.presence.present else 'OFF' }}")
        // No prefix, no discovery; removal is an empty retained message per topic.
        lit.discoveryPrefix = ""
        #expect(FrameProtocol(identity: lit).discovery.isEmpty)
        #expect(FrameProtocol.removal(of: topics).allSatisfy { $0.payload.isEmpty && $0.retain })
        let odd = FrameProtocol(identity: FrameIdentity(clientID: "frame.1", topic: "f", discoveryPrefix: "ha", version: "1"))
        #expect(odd.nodeID == "frame_1")
    }
}
