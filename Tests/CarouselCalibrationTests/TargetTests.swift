// Targets drawn on the upright screen become panel fractions through the
// daemon's rotation; the check point measures in millimetres and refuses a
// fit worse than none; the udev rule.

import CarouselCalibration
import CarouselCore
import Testing

@Suite("Calibration targets, check point and udev rule")
struct TargetTests {
    @Test("a calibrated touch at a target's panel point reaches the daemon at the target", arguments: Rotation.allCases)
    func rotation(rotation: Rotation) {
        let panelWidth = 1280, panelHeight = 800
        let logical = rotation.logicalSize(panelWidth: panelWidth, panelHeight: panelHeight)
        for target in CalibrationTargets.standard.targets {
            let p = CalibrationTargets.logicalPixels(target, width: logical.width, height: logical.height)
            let n = rotation.normalizedPanelPoint(p, panelWidth: panelWidth, panelHeight: panelHeight)
            #expect((0...1).contains(n.x) && (0...1).contains(n.y))
            // libinput scales the calibrated fraction to panel pixels; the
            // input service's InputRouter turns them with Rotation.logical.
            let routed = rotation.logical(Point(x: n.x * Double(panelWidth), y: n.y * Double(panelHeight)),
                                          panelWidth: Double(panelWidth), panelHeight: Double(panelHeight))
            #expect(abs(routed.x - p.x) < 1e-9 && abs(routed.y - p.y) < 1e-9, "\(rotation): \(p) came back as \(routed)")
        }
    }

    @Test("a quarter turn puts the upright top-left corner at the panel's top-right")
    func quarterTurn() {
        let n = Rotation.clockwise90.normalizedPanelPoint(Point(x: 100, y: 160), panelWidth: 1280, panelHeight: 800)
        #expect(abs(n.x - (1280 - 160) / 1280.0) < 1e-12 && abs(n.y - 100 / 800.0) < 1e-12)
    }

    @Test("at least four fitted targets and one check point, spread in both directions")
    func standard() {
        let targets = CalibrationTargets.standard.targets
        #expect(targets.filter { !$0.isCheck }.count >= 4)
        #expect(targets.filter(\.isCheck).count == 1 && targets.last!.isCheck)
    }

    @Test("the check point's error in millimetres, calibrated and uncalibrated")
    func checkPoint() {
        // Panel 200 x 100 mm; target in the middle; the raw touch 0.1 to the
        // right and 0.1 down of it: 20 mm and 10 mm off uncalibrated.
        let sample = CalibrationSample(raw: NormalizedPoint(x: 0.6, y: 0.6), target: NormalizedPoint(x: 0.5, y: 0.5))
        let shift = CalibrationMatrix(1, 0, -0.1, 0, 1, -0.1)
        let good = CheckPointResult(matrix: shift, sample: sample, panelMillimetres: (200, 100))
        #expect(abs(good.calibratedMillimetres) < 1e-9)
        #expect(abs(good.uncalibratedMillimetres - (400.0 + 100).squareRoot()) < 1e-9)
        #expect(!good.isWorseThanUncalibrated)
        let half = CheckPointResult(matrix: CalibrationMatrix(1, 0, -0.05, 0, 1, 0), sample: sample, panelMillimetres: (200, 100))
        #expect(abs(half.calibratedMillimetres - (100.0 + 100).squareRoot()) < 1e-9)
    }

    @Test("a fit worse than the uncalibrated panel is refused")
    func refusal() {
        let sample = CalibrationSample(raw: NormalizedPoint(x: 0.52, y: 0.5), target: NormalizedPoint(x: 0.5, y: 0.5))
        let worse = CheckPointResult(matrix: CalibrationMatrix(1, 0, 0.05, 0, 1, 0), sample: sample, panelMillimetres: (200, 100))
        #expect(worse.isWorseThanUncalibrated)
        #expect(worse.refusal.contains("14.00 mm") && worse.refusal.contains("4.00 mm"))
        let nan = CheckPointResult(matrix: CalibrationMatrix(.nan, 0, 0, 0, 1, 0), sample: sample, panelMillimetres: (200, 100))
        #expect(nan.isWorseThanUncalibrated)
        let same = CheckPointResult(matrix: .identity, sample: sample, panelMillimetres: (200, 100))
        #expect(!same.isWorseThanUncalibrated)
    }

    @Test("the panel's millimetres from a turned touchscreen's")
    func deviceMillimetres() throws {
        // Device axes swapped: the panel's width runs along the device's y (60 mm).
        let swapped = try #require(PanelMillimetres.fromDevice(width: 100, height: 60, matrix: CalibrationMatrix(0, 1, 0, 1, 0, 0)))
        #expect(abs(swapped.width - 60) < 1e-9 && abs(swapped.height - 100) < 1e-9)
        // The device covers more than the panel: 1.25 device widths per panel width.
        let scaled = try #require(PanelMillimetres.fromDevice(width: 100, height: 60, matrix: CalibrationMatrix(1.25, 0, 0, 0, 1, 0)))
        #expect(abs(scaled.width - 80) < 1e-9 && abs(scaled.height - 60) < 1e-9)
        #expect(PanelMillimetres.fromDevice(width: 100, height: 60, matrix: CalibrationMatrix(1, 1, 0, 1, 1, 0)) == nil)
        #expect(PanelMillimetres.fromDisplay(widthMM: 16, heightMM: 9) == nil)
        #expect(PanelMillimetres.fromDisplay(widthMM: 154, heightMM: 86)! == (154, 86))
    }

    @Test("the udev rule matches the device's name and sets the matrix")
    func udevRule() {
        let rule = UdevRule.text(deviceName: "ILITEK ILITEK-TP", matrix: CalibrationMatrix(0, -1.12, 1.07, 0.93, 0, -0.04))
        let lines = rule.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.last == "" && lines.dropLast().allSatisfy { $0.hasPrefix("#") || $0.hasPrefix("ACTION") })
        #expect(lines.contains(#"ACTION=="add|change", SUBSYSTEM=="input", KERNEL=="event*", ATTRS{name}=="ILITEK ILITEK-TP", ENV{LIBINPUT_CALIBRATION_MATRIX}="0 -1.12 1.07 0.93 0 -0.04""#))
        let odd = UdevRule.text(deviceName: "Touch \"[pro]*\"\n?", matrix: .identity)
        #expect(odd.contains(#"ATTRS{name}=="Touch ??pro?????""#))
        #expect(odd.split(separator: "\n").count == rule.split(separator: "\n").count)
    }
}

@Suite("A press on a target")
struct PressTests {
    @Test("the mean of the press's positions, from down to up")
    func mean() {
        var press = Press()
        press.down(slot: 0, x: 0.1, y: 0.2)
        press.motion(slot: 0, x: 0.3, y: 0.4)
        press.motion(slot: 1, x: 0.9, y: 0.9)
        #expect(press.up(slot: 1) == nil)
        #expect(press.up(slot: 0) == .pressed(NormalizedPoint(x: 0.2, y: 0.30000000000000004), samples: 2))
    }

    @Test("a finger already down when the target came is ignored until it lifts")
    func alreadyDown() {
        var press = Press(alreadyDown: [3])
        press.down(slot: 0, x: 0.5, y: 0.5)
        #expect(press.up(slot: 0) == nil)
        #expect(press.up(slot: 3) == nil)
        press.down(slot: 0, x: 0.25, y: 0.75)
        #expect(press.up(slot: 0) == .pressed(NormalizedPoint(x: 0.25, y: 0.75), samples: 1))
    }

    @Test("a second finger or a cancel spoils the press")
    func spoiled() {
        var press = Press()
        press.down(slot: 0, x: 0.5, y: 0.5)
        press.down(slot: 1, x: 0.6, y: 0.5)
        guard case .spoiled = press.up(slot: 0) else { Issue.record("two fingers counted as a press"); return }
        #expect(press.up(slot: 1) == nil)
        press.down(slot: 2, x: 0.5, y: 0.5)
        guard case .spoiled = press.cancel(slot: 2) else { Issue.record("a cancel counted as a press"); return }
    }
}
