import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselPlatform
import Foundation
import Testing
import CarouselDaemon
import CarouselPushedTextWords

/// The daemon answers each way in under its grant: what MQTT is not
/// granted is one error naming the grant, and changes nothing.
@Suite("Requests answered under a way in's grant")
struct GrantTests {
    func request(_ line: String) throws -> ControlRequest { try ControlRequest.parse(line: line).get() }

    func refusal(_ reply: ControlReply) -> String? {
        if case let .error(text) = reply { return text }
        return nil
    }

    @Test("MQTT cannot read a board file, move the frame's folder or broker, reload or write a screenshot")
    func mqttStaysInsideTheFrame() throws {
        let d = try OffscreenDaemon()
        let secret = d.folder.appendingPathComponent("secret.txt")
        try Data("the board's secret\n".utf8).write(to: secret)
        let before = d.daemon.config
        for line in ["set overlay.text_file \(secret.path)", "set images.path /etc", "set mqtt.broker mqtt://127.0.0.1:1",
                     "set mqtt.password_file \(secret.path)", "set control.socket /tmp/x.sock", "reload",
                     "screenshot \(d.folder.appendingPathComponent("x.png").path)", "set images.cache_mb 4096"] {
            let text = try #require(refusal(d.daemon.answer(try request(line), grant: .mqtt)), "\(line) was answered")
            #expect(text.contains("is not granted to MQTT"), "\(line): \(text)")
            #expect(!text.contains(secret.path), "\(line): the refusal repeats the value")
        }
        #expect(d.daemon.config == before, "a refused request changed the configuration")
        #expect(!FileManager.default.fileExists(atPath: d.folder.appendingPathComponent("x.png").path))
        #expect(!JSONValue.object(d.daemon.status()).encoded.contains("board's secret"))
        // What it is granted: looking, driving, tuning.
        #expect(refusal(d.daemon.answer(.next, grant: .mqtt)) == nil)
        #expect(refusal(d.daemon.answer(.list, grant: .mqtt)) == nil)
        #expect(refusal(d.daemon.answer(try request("set autoplay.interval 9"), grant: .mqtt)) == nil)
        #expect(d.daemon.config.autoplay.interval == 9)
    }

    @Test("the control socket's peers may do all of it")
    func theSocketMayDoEverything() throws {
        let d = try OffscreenDaemon()
        let secret = d.folder.appendingPathComponent("note.txt")
        try Data("a note\n".utf8).write(to: secret)
        #expect(refusal(d.daemon.answer(try request("set overlay.text_file \(secret.path)"), grant: .controlSocket)) == nil)
        #expect(d.daemon.config[PushedTextSettings.self].textFile == secret.path)
        #expect(refusal(d.daemon.answer(.reload, grant: .controlSocket)) == nil)
    }

    @Test("a capability's request and keys are granted as its words say, and a refusal shows nothing")
    func aCapabilitysWordsCarryTheirGrants() throws {
        let d = try OffscreenDaemon()
        let viewer = Grant(name: "a viewer", allows: [.look])
        let text = try #require(refusal(d.daemon.answer(try request("overlay text the board's secret"), grant: viewer)))
        #expect(text.hasPrefix("overlay text is not granted to a viewer: it needs drive"), "\(text)")
        #expect(!text.contains("secret"), "the refusal repeats the text")
        #expect(d.daemon.status()["overlay"]?["text"] == .null, "a refused text is not shown")
        // Keys that name a device, or size memory, are not MQTT's; a look is.
        let before = d.daemon.config
        for line in ["set power.presence key:KEY_F13", "set video.hardware off", "set video.max_pixels 100000",
                     "set overlay.text_file /etc/passwd"] {
            let refused = try #require(refusal(d.daemon.answer(try request(line), grant: .mqtt)), "\(line) was answered")
            #expect(refused.contains("is not granted to MQTT"), "\(line): \(refused)")
        }
        #expect(d.daemon.config == before, "a refused set changed the configuration")
        #expect(refusal(d.daemon.answer(try request("set video.loop true"), grant: .mqtt)) == nil)
        #expect(refusal(d.daemon.answer(try request("overlay text Sunny"), grant: .mqtt)) == nil)
        #expect(d.daemon.status()["overlay"]?["text"]?.stringValue == "Sunny")
    }
}
