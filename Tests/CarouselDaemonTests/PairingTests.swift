import CarouselControl
import CarouselCore
import CarouselDaemon
import CarouselPairingWords
import CarouselPlatform
import Testing

@Suite("pairing codes on the screen (offscreen, manual clock)")
struct PairingTests {
    func fields(_ reply: ControlReply) -> [String: JSONValue] {
        if case let .ok(fields) = reply { return fields }
        Issue.record("refused: \(reply)")
        return [:]
    }

    /// Runs the loop's descriptors (the drawing handed back) until `condition`.
    func settle(_ d: OffscreenDaemon, until condition: () -> Bool) throws {
        for _ in 0..<300 where !condition() {
            try d.daemon.dispatchDescriptors(timeoutMilliseconds: 10)
        }
        #expect(condition(), "the loop never got there")
    }

    @Test func aCodeShowsForTenMinutesIsUsedOnceAndNeverInStatus() throws {
        let d = try OffscreenDaemon()
        d.showFirstPicture()
        let before = d.daemon.status()
        #expect(before["pairing"] == .null)
        let asked = fields(d.daemon.answer(.declared(PairingWords.ask(.guest)), grant: .controlSocket))
        let code = try #require(asked["code"]?.stringValue)
        #expect(code.count == 6 && code.allSatisfy(\.isNumber))
        // From the answer on, before the code is drawn (off the loop): MQTT's
        // screenshot asked in between was taken once (CI, mqtt_e2e.py).
        #expect(d.daemon.secretOnScreen, "no secret on screen between the answer and the drawing")
        try settle(d) { d.daemon.secretOnScreen }
        var line = ""
        JSONValue.object(d.daemon.status()).encode(into: &line)
        #expect(!line.contains(code), "status carries the code")
        if case let .object(pairing)? = d.daemon.status()["pairing"] { #expect(pairing["guest"] != nil) } else {
            Issue.record("no pairing in status")
        }
        // MQTT may neither ask for a code nor redeem one.
        if case .ok = d.daemon.answer(.declared(PairingWords.redeem(.guest, code: code)), grant: .mqtt) {
            Issue.record("MQTT redeemed a code")
        }
        // Once.
        #expect(fields(d.daemon.answer(.declared(PairingWords.redeem(.guest, code: code)), grant: .web))["redeemed"] == .bool(true))
        if case .ok = d.daemon.answer(.declared(PairingWords.redeem(.guest, code: code)), grant: .web) {
            Issue.record("a code was used twice")
        }
        try settle(d) { !d.daemon.secretOnScreen }
        #expect(d.daemon.status()["pairing"] == .null)
    }

    @Test func aCodeExpiresAfterTenMinutes() throws {
        let d = try OffscreenDaemon()
        d.showFirstPicture()
        let code = try #require(fields(d.daemon.answer(.declared(PairingWords.ask(.setup)), grant: .web))["code"]?.stringValue)
        try settle(d) { d.daemon.secretOnScreen }
        d.advance(ms: 599_000)
        #expect(d.daemon.secretOnScreen)
        d.advance(ms: 2_000)
        try settle(d) { !d.daemon.secretOnScreen }
        guard case let .error(message) = d.daemon.answer(.declared(PairingWords.redeem(.setup, code: code)), grant: .web) else {
            Issue.record("an expired code was taken")
            return
        }
        #expect(message.hasPrefix("no setup code is on the frame's screen now"))
    }
}
