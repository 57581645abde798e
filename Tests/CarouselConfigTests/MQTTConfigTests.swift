// [mqtt]: the broker URL, the files it names, the topics.

import CarouselConfig
import Foundation
import Testing

@Suite struct MQTTConfigTests {
    private func parse(_ lines: String) throws(ConfigError) -> Configuration {
        try Configuration.parse("[mqtt]\n" + lines, file: "t.ini")
    }

    private func error(_ lines: String) -> String {
        do {
            _ = try parse(lines)
            return "accepted"
        } catch {
            return error.description
        }
    }

    @Test func brokerURLs() throws {
        #expect(try parse("broker =\n").mqtt.broker == nil)
        #expect(try parse("broker = mqtt://10.0.0.2:1884\n").mqtt.broker == MQTTBroker(host: "10.0.0.2", port: 1884, tls: false))
        #expect(try parse("broker = mqtts://ha.local\n").mqtt.broker == MQTTBroker(host: "ha.local", port: 8883, tls: true))
        #expect(try parse("broker = mqtt://broker\n").mqtt.broker?.port == 1883)
        #expect(try parse("broker = mqtt://[fd00::1]:1883\n").mqtt.broker == MQTTBroker(host: "fd00::1", port: 1883, tls: false))
        #expect(MQTTBroker(host: "fd00::1", port: 1883, tls: false).hostIsNumeric)
        #expect(MQTTBroker(host: "127.0.0.1", port: 1883, tls: false).hostIsNumeric)
        #expect(!MQTTBroker(host: "homeassistant.local", port: 1883, tls: false).hostIsNumeric)
    }

    @Test func badBrokerURLsAreOneClearError() {
        #expect(error("broker = http://x:1883\n")
            == "t.ini:2: broker = 'http://x:1883': expected mqtt://HOST:PORT or mqtts://HOST:PORT (empty: no MQTT)")
        #expect(error("broker = mqtt://x:99999\n") == "t.ini:2: broker = 'mqtt://x:99999': the port must be a number from 1 to 65535, got '99999'")
        #expect(error("broker = mqtt://x:port\n").contains("the port must be a number from 1 to 65535, got 'port'"))
        #expect(error("broker = mqtt://:1883\n").contains("the broker's host name is missing"))
        #expect(error("broker = mqtt://user:pw@x:1883\n").contains("the port must be a number")
            || error("broker = mqtt://user:pw@x:1883\n").contains("no user, path or query"))
        #expect(error("broker = mqtt://[fd00::1\n").contains("closing ']'"))
    }

    @Test func topicsAndIdentity() throws {
        let c = try parse("client_id = kitchen\n")
        #expect(c.mqtt.effectiveClientID == "kitchen")
        #expect(c.mqtt.effectiveTopic == "carouseld/kitchen")
        #expect(try parse("topic = shop/frames/7\n").mqtt.effectiveTopic == "shop/frames/7")
        #expect(try parse("discovery_prefix =\n").mqtt.discoveryPrefix == "")
        #expect(error("topic = frames/+\n").contains("wildcards"))
        #expect(error("topic = /frames\n").contains("cannot start or end with '/'"))
        #expect(error("client_id = a/b\n").contains("without spaces, '/'"))
        #expect(error("keepalive = 2\n").contains("out of range: allowed 5 to 65535"))
        #expect(error("password_file = secret.txt\n").contains("expected an absolute path"))
        // The default client id is the host name, a valid topic level.
        #expect(!Configuration().mqtt.effectiveClientID.isEmpty)
        #expect(!Configuration().mqtt.effectiveTopic.contains("+"))
    }

    @Test func thePasswordComesFromItsFileAndAMissingFileIsOneError() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pw-\(UUID().uuidString.prefix(8))").path
        defer { unlink(path) }
        // A password without a user name is refused first: libmosquitto
        // refused it only at the connect, taking the frame off its broker.
        var c = try parse("broker = mqtt://127.0.0.1:1883\npassword_file = \(path)\n")
        #expect(throws: ValueError("[mqtt] password_file needs [mqtt] username: MQTT sends a password only with a user name")) {
            try c.mqtt.checkFiles()
        }
        c.mqtt.username = "frame"
        #expect(throws: ValueError("[mqtt] password_file \(path) cannot be read: No such file or directory"
                                   + " (it must be readable by the user carouseld runs as)")) { try c.mqtt.checkFiles() }
        try Data("s3cret\n".utf8).write(to: URL(fileURLWithPath: path))
        // Readable by its owner alone, as a secret must be (CredentialsTests).
        #expect(chmod(path, 0o600) == 0)
        #expect(try c.mqtt.readPassword() == "s3cret")
        try c.mqtt.checkFiles()
        try Data("\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: ValueError.self) { try c.mqtt.checkFiles() }
        // Without a broker the files are not looked at.
        c.mqtt.broker = nil
        try c.mqtt.checkFiles()
    }
}
