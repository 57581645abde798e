// A presence sensor's word reaching a whole daemon on the offscreen display
// with a manual clock (the key path's routed input; the GPIO line's service
// hands over the same call): the display wakes on the same picture, the
// next touch is the model's, presence holds past idle_off, status and the
// events say so. The real kernel's side is Tests/VM/e2e_power.py's presence.

import CarouselControl
import CarouselPlatform
import Testing
import CarouselDaemon

@Suite("[power] presence on a daemon, manual clock") struct PresenceDaemonTests {
    private func idle(_ d: OffscreenDaemon, seconds: Int) {
        for _ in 0..<seconds { d.advance(ms: 1000) }
    }

    private func presence(_ d: OffscreenDaemon) -> [String: JSONValue]? {
        guard case let .object(p)? = d.daemon.status()["presence"] else { return nil }
        return p
    }

    @Test func presenceWakesOnTheSamePictureHoldsAndIdleOffCountsFromItsEnd() throws {
        let d = try OffscreenDaemon(ini: "[power]\nidle_off = 1\npresence = key:KEY_F13\n")
        d.showFirstPicture()
        #expect(presence(d)?["present"] == .bool(false) && presence(d)?["source"] == .string("key:KEY_F13"))
        idle(d, seconds: 61)
        #expect(!d.backend.isPoweredOn)
        #expect(d.daemon.nextWake(now: d.now) == nil, "dark with a sensor configured: nothing due")

        d.daemon.carryOut(.presence(true, time: d.now))
        #expect(d.backend.isPoweredOn)
        #expect(presence(d)?["present"] == .bool(true))
        idle(d, seconds: 1)
        #expect(d.index == .int(0), "the same picture")
        // Held past idle_off, and no deadline meanwhile.
        #expect(d.daemon.nextWake(now: d.now) == nil)
        idle(d, seconds: 180)
        #expect(d.backend.isPoweredOn)
        // The wake swallowed no touch: the next tap is the model's.
        d.tap()
        d.daemon.carryOut(.presence(false, time: d.now))
        idle(d, seconds: 59)
        #expect(d.backend.isPoweredOn)
        idle(d, seconds: 2)
        #expect(!d.backend.isPoweredOn)
    }

    @Test func withoutASensorStatusSaysNull() throws {
        let d = try OffscreenDaemon()
        #expect(d.daemon.status()["presence"] == .null)
    }
}
