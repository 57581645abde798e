import CarouselControl
import CarouselCore
import CarouselPlatform
import Foundation
import Testing
import CarouselDaemon

/// A folder laid out as the kernel's backlight class shows one device
/// (brightness, max_brightness, bl_power, type). The daemon's rules are
/// checked here on the manual clock; the real class device, its sysfs
/// files and a hardened service writing them are checked in the VM
/// (Tests/VM/e2e_power.py "backlight", service_e2e.py).
private final class BacklightFolder {
    let root: URL
    let device: URL

    init(name: String = "panel", max: Int = 1023, level: Int = 700, power: Int = 0, type: String = "raw") throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("carouseld-bl-\(UUID().uuidString)")
        device = root.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: device, withIntermediateDirectories: true)
        try write("max_brightness", "\(max)")
        try write("brightness", "\(level)")
        try write("bl_power", "\(power)")
        try write("type", type)
    }

    func write(_ file: String, _ value: String) throws {
        try Data((value + "\n").utf8).write(to: device.appendingPathComponent(file))
    }

    func read(_ file: String) -> Int? {
        (try? String(contentsOf: device.appendingPathComponent(file), encoding: .utf8))
            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    deinit { try? FileManager.default.removeItem(at: root) }
}

private func field(_ d: OffscreenDaemon, _ key: String) -> JSONValue? {
    guard case let .object(display)? = d.daemon.status()["display"] else { return nil }
    return display[key]
}

private func isOK(_ reply: ControlReply) -> Bool {
    if case .ok = reply { return true }
    return false
}

private func errorText(_ reply: ControlReply) -> String? {
    if case let .error(message) = reply { return message }
    return nil
}

@Suite("[power] backlight, brightness and dim_after, manual clock") struct BacklightRuleTests {
    func idle(_ d: OffscreenDaemon, seconds: Int) {
        for _ in 0..<seconds { d.advance(ms: 1000) }
    }

    @Test func itDimsAfterDimAfterAndTheFirstTouchLightsItAgainAndActs() throws {
        let bl = try BacklightFolder()
        let d = try OffscreenDaemon(ini: "[power]\ndim_after = 1\ndim_level = 10\nbrightness = 50\n", backlightRoot: bl.root.path)
        d.showFirstPicture()
        #expect(bl.read("brightness") == 512, "50 % of 1023, written at start")
        #expect(field(d, "backlight") == .string("panel"))
        #expect(field(d, "brightness") == .int(50))
        // The loop's timer is armed for the dim: one wake-up, no polling.
        #expect(d.daemon.nextWake(now: d.now) == d.daemon.startTime + 60_000_000)
        idle(d, seconds: 59)
        #expect(bl.read("brightness") == 512)
        idle(d, seconds: 2)
        #expect(bl.read("brightness") == 102, "dimmed to 10 % of 1023")
        #expect(field(d, "dimmed") == .bool(true))
        #expect(d.daemon.nextWake(now: d.now) == nil, "dimmed, nothing is due until use")
        #expect(d.daemon.displayIsOff == false)
        // The touch that lights it is not swallowed: the picture was visible.
        #expect(d.index == .int(0))
        d.swipe()
        idle(d, seconds: 2)
        #expect(bl.read("brightness") == 512)
        #expect(field(d, "dimmed") == .bool(false))
        #expect(d.index == .int(1), "the swipe that lit it paged too")
    }

    @Test func displayOffPowersTheBacklightDownAndWakingLightsItUndimmed() throws {
        let bl = try BacklightFolder()
        let d = try OffscreenDaemon(ini: "[power]\ndim_after = 1\nbrightness = 80\n", backlightRoot: bl.root.path)
        d.showFirstPicture()
        idle(d, seconds: 61)
        #expect(bl.read("brightness") == 205, "dimmed to the default 20 %")
        #expect(isOK(d.answer("display off")))
        #expect(bl.read("bl_power") == 4)
        #expect(d.daemon.nextWake(now: d.now) == nil)
        d.tap()  // wakes, swallowed
        #expect(bl.read("bl_power") == 0)
        #expect(bl.read("brightness") == 818, "woken at the lit level, 80 % of 1023")
        #expect(field(d, "dimmed") == .bool(false))
    }

    @Test func brightnessSetsTheLitLevelKeepsItForTheNextStartAndIsRefusedWithoutABacklight() throws {
        let bl = try BacklightFolder()
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("carouseld-blstate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: state) }
        do {
            let d = try OffscreenDaemon(stateDirectory: state.path, backlightRoot: bl.root.path)
            d.showFirstPicture()
            #expect(bl.read("brightness") == 700, "auto: the board's own level is left as it is")
            #expect(field(d, "brightness") == .int(68))
            #expect(isOK(d.answer("brightness 30")))
            #expect(bl.read("brightness") == 307)
            #expect(isOK(d.answer("display off")))
            #expect(isOK(d.answer("brightness 40")))
            #expect(bl.read("bl_power") == 4, "off stays off")
            #expect(bl.read("brightness") == 307)
            #expect(isOK(d.answer("display on")))
            #expect(bl.read("brightness") == 409, "woken at the level set while off")
        }
        // A restart while dimmed: the kernel holds the dimmed level, the
        // state directory the lit one.
        try bl.write("brightness", "20")
        let again = try OffscreenDaemon(stateDirectory: state.path, backlightRoot: bl.root.path)
        again.showFirstPicture()
        #expect(bl.read("brightness") == 409)
        // No backlight: one clear error, nothing else changes.
        let none = try OffscreenDaemon(ini: "[power]\nbacklight = none\n", backlightRoot: bl.root.path)
        none.showFirstPicture()
        #expect(errorText(none.answer("brightness 50"))?.contains("no backlight") == true)
        #expect(field(none, "backlight") == .null)
        #expect(bl.read("brightness") == 409)
    }

    @Test func aBacklightLeftPoweredDownIsLitAtStartAndOneThatFailsIsLetGo() throws {
        let bl = try BacklightFolder(power: 4)
        let d = try OffscreenDaemon(backlightRoot: bl.root.path)
        d.showFirstPicture()
        #expect(bl.read("bl_power") == 0, "a daemon stopped while off left it dark")
        // The device goes away (driver unloaded): one warning, the carousel runs on.
        try FileManager.default.removeItem(at: bl.device)
        #expect(isOK(d.answer("display off")))
        #expect(field(d, "backlight") == .null)
        #expect(isOK(d.answer("display on")))
        #expect(d.backend.isPoweredOn)
    }

    @Test func autoPrefersFirmwareThenPlatformThenRawAndANamedOneMustExist() throws {
        let bl = try BacklightFolder(name: "pwm-backlight", type: "raw")
        let firmware = bl.root.appendingPathComponent("acpi_video0")
        try FileManager.default.createDirectory(at: firmware, withIntermediateDirectories: true)
        for (file, value) in [("max_brightness", "15"), ("brightness", "15"), ("bl_power", "0"), ("type", "firmware")] {
            try Data((value + "\n").utf8).write(to: firmware.appendingPathComponent(file))
        }
        let d = try OffscreenDaemon(backlightRoot: bl.root.path)
        #expect(field(d, "backlight") == .string("acpi_video0"))
        let named = try OffscreenDaemon(ini: "[power]\nbacklight = pwm-backlight\n", backlightRoot: bl.root.path)
        #expect(field(named, "backlight") == .string("pwm-backlight"))
        let missing = try OffscreenDaemon(ini: "[power]\nbacklight = intel_backlight\n", backlightRoot: bl.root.path)
        #expect(field(missing, "backlight") == .null)
    }
}

@Suite("Backlight levels") struct BacklightLevelTests {
    @Test func percentMapsOntoTheRangeAndNeverToZero() {
        let b = Backlight(name: "b", directory: "/x", type: "raw", maxBrightness: 7)
        #expect(b.level(percent: 1) == 1)
        #expect(b.level(percent: 50) == 4)
        #expect(b.level(percent: 100) == 7)
        #expect(b.percent(level: 7) == 100)
        let wide = Backlight(name: "w", directory: "/x", type: "raw", maxBrightness: 1023)
        for p in 1...100 { #expect(abs(wide.percent(level: wide.level(percent: p)) - p) <= 0, "\(p) %") }
    }
}
