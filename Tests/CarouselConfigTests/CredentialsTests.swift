// Secret files readable by their owner alone, refused with the chmod that
// fixes them; a secret sent in clear to another machine is one warning.

import CarouselConfig
import Foundation
import Testing

@Suite struct CredentialsTests {
    /// A file holding `text` with `mode`, in a fresh folder (removed by the caller).
    private func secret(_ name: String, _ mode: mode_t, _ text: String = "s3cret\n") throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("secrets-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        #expect(chmod(path, mode) == 0)
        return path
    }

    private func remove(_ path: String) { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }

    private func config(_ text: String) throws -> Configuration { try Configuration.parse(text, file: "t.ini") }

    private func refusal(_ body: () throws(ValueError) -> Void) -> String? {
        do { try body(); return nil } catch { return error.message }
    }

    @Test func anMQTTPasswordOthersMayReadIsRefusedWithItsChmod() throws {
        let path = try secret("mqtt.password", 0o644)
        defer { remove(path) }
        let c = try config("[mqtt]\nbroker = mqtts://broker.lan\nusername = frame\npassword_file = \(path)\n")
        #expect(refusal { () throws(ValueError) in try c.mqtt.checkFiles() }
            == "[mqtt] password_file \(path) is readable by everyone (mode 0644): a secret must be readable by its owner alone,"
            + " the user carouseld runs as; fix it with: chmod 0600 \(path)")
        // Its group (the carouseld group is people with carouselctl) is refused too.
        #expect(chmod(path, 0o640) == 0)
        #expect(refusal { () throws(ValueError) in try c.mqtt.checkFiles() }?
            .hasPrefix("[mqtt] password_file \(path) is readable by its group (mode 0640)") == true)
        // The chmod given is the one that fixes it, and keeps what the owner had.
        #expect(chmod(path, 0o444) == 0)
        #expect(refusal { () throws(ValueError) in try c.mqtt.checkFiles() }?.hasSuffix("chmod 0400 \(path)") == true)
        #expect(chmod(path, 0o400) == 0)
        try c.mqtt.checkFiles()
        #expect(chmod(path, 0o600) == 0)
        try c.mqtt.checkFiles()
        // Start and reload read it through checkSecrets(for: .daemon), check-config through .everyone.
        #expect(chmod(path, 0o604) == 0)
        #expect(refusal { () throws(ValueError) in try c.checkSecrets(for: .daemon) }?.contains("chmod 0600") == true)
        #expect(refusal { () throws(ValueError) in try c.checkSecrets(for: .everyone) }?.contains("chmod 0600") == true)
        // The sync runs as another user and cannot read the daemon's password: not its to check.
        try c.checkSecrets(for: .sync)
    }

    @Test func theSyncsKeyAndRcloneConfigOthersMayReadAreRefusedWithTheirChmod() throws {
        let key = try secret("immich.key", 0o644)
        defer { remove(key) }
        let c = try config("[sync]\nsource = immich\nserver = https://photos.example.com\napi_key_file = \(key)\nalbums = Frame\n")
        let expected = "[sync] api_key_file \(key) is readable by everyone (mode 0644): a secret must be readable by its owner alone,"
            + " the user carouseld sync runs as; fix it with: chmod 0600 \(key)"
        #expect(refusal { () throws(ValueError) in try c.sync.checkSecrets() } == expected)
        #expect(refusal { () throws(ValueError) in try c.checkSecrets(for: .sync) } == expected)
        #expect(refusal { () throws(ValueError) in try c.checkSecrets(for: .everyone) } == expected)
        // The daemon cannot read the sync's key (another user's, 0600): not its to check either.
        try c.checkSecrets(for: .daemon)
        #expect(chmod(key, 0o600) == 0)
        try c.checkSecrets(for: .everyone)

        let rclone = try secret("rclone conf", 0o660, "[nas]\ntype = webdav\n")
        defer { remove(rclone) }
        let r = try config("[sync]\nsource = rclone:nas:photos\nrclone_config = \(rclone)\n")
        // A path with a space is quoted, so that the line can be pasted.
        #expect(refusal { () throws(ValueError) in try r.checkSecrets(for: .sync) }?
            .hasSuffix("readable by its group (mode 0660): a secret must be readable by its owner alone, the user carouseld sync runs as;"
                       + " fix it with: chmod 0600 '\(rclone)'") == true)
        #expect(chmod(rclone, 0o600) == 0)
        try r.checkSecrets(for: .sync)
        // Without a source the sync reads nothing: nothing to refuse.
        #expect(chmod(rclone, 0o644) == 0)
        try config("[sync]\nrclone_config = \(rclone)\n").checkSecrets(for: .everyone)
    }

    @Test func aMissingSecretIsLeftToItsReader() throws {
        // Nothing to stat: whoever reads it says why (the daemon at start, the sync at its pass).
        let c = try config("[sync]\nsource = immich\nserver = https://p.example\napi_key_file = /nonexistent/immich.key\nalbums = A\n")
        try c.checkSecrets(for: .sync)
    }

    @Test func aSecretInClearToAnotherMachineIsOneWarning() throws {
        func warnings(_ text: String) throws -> [String] { try config(text).cleartextWarnings(for: .everyone) }
        #expect(try warnings("[mqtt]\nbroker = mqtt://192.0.2.7\npassword_file = /etc/carouseld/mqtt.password\n")
            == ["[mqtt] the password (password_file) goes to mqtt://192.0.2.7:1883 unencrypted: anyone on the network between can read it;"
                + " use mqtts:// (with ca_file for a broker's own CA)"])
        #expect(try warnings("[mqtt]\nbroker = mqtts://192.0.2.7\npassword_file = /p\n").isEmpty)
        // No password, nothing secret (a user name alone is not a credential).
        #expect(try warnings("[mqtt]\nbroker = mqtt://192.0.2.7\nusername = frame\n").isEmpty)
        // A broker on the board itself: nothing crosses a network.
        #expect(try warnings("[mqtt]\nbroker = mqtt://127.0.0.1\npassword_file = /p\n").isEmpty)
        #expect(try warnings("[mqtt]\nbroker = mqtt://[::1]:1883\npassword_file = /p\n").isEmpty)
        #expect(try warnings("[mqtt]\nbroker = mqtt://localhost\npassword_file = /p\n").isEmpty)

        let immich = "[sync]\nsource = immich\napi_key_file = /k\nalbums = A\nserver = "
        #expect(try warnings(immich + "http://photos.lan:2283\n")
            == ["[sync] the API key (api_key_file) goes to http://photos.lan:2283 unencrypted: anyone on the network between can read it"
                + " and use the account; use https://"])
        #expect(try config(immich + "HTTP://[fd00::5]/photos\n").cleartextWarnings(for: .sync).count == 1)
        // The daemon does not send the sync's key: not its warning.
        #expect(try config(immich + "http://photos.lan\n").cleartextWarnings(for: .daemon).isEmpty)
        #expect(try warnings(immich + "https://photos.lan\n").isEmpty)
        #expect(try warnings(immich + "http://127.0.0.1:2283\n").isEmpty)
        #expect(try warnings(immich + "http://[::1]:2283\n").isEmpty)
        #expect(try warnings("[sync]\nsource = rclone:nas:photos\n").isEmpty)
    }
}
