import CarouselCore
import Testing
@testable import CarouselControl

@Suite("What each request touches, and what a grant lets through")
struct CapabilityTests {
    func needs(_ line: String, key: Capability? = .configure) throws -> Capability {
        try ControlRequest.parse(line: line).get().capability { _ in key }
    }

    @Test("looking, driving, configuring and administering, word by word")
    func everyWord() throws {
        for line in ["status", "list", "version", "help", "subscribe", "screenshot", "screenshot raw"] {
            #expect(try needs(line) == .look, "\(line)")
        }
        for line in ["next", "prev", "goto 2", "pause", "play", "resume", "zoom 2", "zoom reset", "display off",
                     "brightness 40", "overlay text hello", "overlay clear"] {
            #expect(try needs(line) == .drive, "\(line)")
        }
        #expect(try needs("reload") == .configure)
        // It writes a file where the peer says, with the daemon's rights.
        #expect(try needs("screenshot /tmp/x.png") == .administer)
    }

    @Test("set needs what its key needs; a key nobody knows is left to the schema's own refusal")
    func setFollowsItsKey() throws {
        #expect(try needs("set overlay.text_file /etc/shadow", key: .administer) == .administer)
        #expect(try needs("set interval 5", key: .tune) == .tune)
        #expect(try needs("set nonsense 1", key: nil) == .tune)
        var asked: [String] = []
        _ = try ControlRequest.parse(line: "set mqtt.broker mqtt://x:1").get().capability { asked.append($0); return nil }
        #expect(asked == ["mqtt.broker"])
    }

    @Test("a refusal names the grant, the request and what it needs, never a value")
    func refusalWords() throws {
        let request = try ControlRequest.parse(line: "set mqtt.password_file /root/secret").get()
        let text = try #require(Grant.mqtt.refusal(of: request.refusalName, needing: .administer))
        #expect(text.hasPrefix("set mqtt.password_file is not granted to MQTT: it needs administer"))
        #expect(text.hasSuffix("MQTT may: look, drive, tune"))
        #expect(!text.contains("/root/secret"))
        #expect(Grant.mqtt.refusal(of: "next", needing: .drive) == nil)
        #expect(Grant.mqtt.refusal(of: "reload", needing: .configure) != nil)
        for capability in Capability.allCases {
            #expect(Grant.controlSocket.refusal(of: "x", needing: capability) == nil, "the socket's peers may do everything")
        }
        #expect(try ControlRequest.parse(line: "screenshot /tmp/a.png").get().refusalName == "screenshot PATH")
        #expect(try ControlRequest.parse(line: "overlay text secret words").get().refusalName == "overlay text")
    }
}
