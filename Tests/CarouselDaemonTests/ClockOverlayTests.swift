// [overlay] clock on the offscreen display with a manual clock and a manual
// week: the loop wakes once a minute, on the wall clock's minute, and each
// wake-up rewrites the clock's rectangle and nothing else; a clock step
// re-aligns it; without a clock the loop sleeps at rest.

import CarouselControl
import CarouselCore
import CarouselDisplay
import CarouselImaging
import Foundation
import Testing
import CarouselDaemon
import CarouselLoop
@testable import CarouselServices

@Suite("[overlay] clock, manual clock and week") struct ClockOverlayTests {
    /// Every screen pixel.
    func screen(_ d: OffscreenDaemon) -> [UInt32] {
        let size = d.backend.panelSize
        var pixels: [UInt32] = []
        for y in 0..<size.height { for x in 0..<size.width { pixels.append(d.backend.pixel(x: x, y: y)) } }
        return pixels
    }

    /// Runs the loop as `run` does on the manual clock, from one wake-up to
    /// the next, until `end`; returns the instants it woke at.
    func wakeUps(_ d: OffscreenDaemon, until end: Int64) -> [Int64] {
        var wakes: [Int64] = []
        while let due = d.daemon.nextWake(now: d.now), due <= end {
            #expect(due > d.now, "a deadline in the past would spin the loop")
            wakes.append(due)
            d.advance(ms: (due - d.now) / 1000)
        }
        return wakes
    }

    @Test func withoutAClockTheLoopSleepsAtRest() throws {
        let d = try OffscreenDaemon(ini: "[overlay]\ncaption = name\n")
        d.showFirstPicture()
        #expect(d.daemon.nextWake(now: d.now) == nil)
    }

    @Test func theNextMinuteIsDrawnOffTheLoopAndHandedBack() throws {
        let start = Int64(1_000_000_000)
        let week = ManualWeek(start: ManualWeek.minute(0, 9, 58), origin: start - 25_000_000)
        let d = try OffscreenDaemon(ini: "[overlay]\nclock = HH:MM\n", localClock: week.clock)
        d.showFirstPicture()
        // The first minute is drawn on the loop (nothing could be drawn ahead of it).
        #expect(d.clockOverlay.drawnOnTheLoop == 1)
        // The next one comes back through the executor, as the loop's wake-up would collect it.
        for _ in 0..<500 where d.clockOverlay.ahead == nil {
            usleep(10_000)
            d.daemon.collectCompleted()
        }
        #expect(d.clockOverlay.ahead?.text == "09:59")
        d.advance(ms: (week.loopTime(of: ManualWeek.minute(0, 9, 59)) - d.now) / 1000)
        #expect(d.clockOverlay.text == "09:59")
        #expect(d.clockOverlay.drawnOnTheLoop == 1, "the minute took the stamp drawn ahead")
    }

    @Test func theClockIsTheOneWakeUpAtRestOncePerMinuteOnTheMinute() throws {
        // The wall clock is 25 s into Monday 09:58 when the daemon starts.
        let start = Int64(1_000_000_000)
        let week = ManualWeek(start: ManualWeek.minute(0, 9, 58), origin: start - 25_000_000)
        let d = try OffscreenDaemon(ini: "[overlay]\nclock = HH:MM\nclock_position = bottom-right\n", localClock: week.clock)
        d.showFirstPicture()
        #expect(d.clockOverlay.text == "09:58")
        let stamp = try #require(d.clockOverlay.stamp)
        // Drawn where it says, inside the screen's bottom-right quarter.
        #expect(stamp.x > 160 && stamp.y > 100)
        var before = screen(d)
        let end = week.loopTime(of: ManualWeek.minute(0, 10, 8))
        var minute = ManualWeek.minute(0, 9, 59)
        var wakes = 0
        while let due = d.daemon.nextWake(now: d.now), due <= end {
            #expect(due == week.loopTime(of: minute), "woken on the minute, not \((due - start) / 1000) ms after start")
            d.advance(ms: (due - d.now) / 1000)
            wakes += 1
            let text = d.clockOverlay.text
            let h = (minute % 1440) / 60, m = minute % 60
            #expect(text == String(format: "%02d:%02d", h, m))
            // Only the clock's rectangle was written: its pixels (and no others) changed.
            let s = try #require(d.clockOverlay.stamp)
            let area = s.image.width * s.image.height
            #expect(d.daemon.pixelsWritten > 0)
            // The first minute into each buffer of the pair may write it whole:
            // the buffers are made anew, longer, once the first picture is on
            // screen (window room for slides), and when that happens depends
            // on when the decode finished.
            if wakes > 2 {
                #expect(d.daemon.pixelsWritten <= 2 * area, "the clock's rectangle, old and new, no more")
            }
            let after = screen(d)
            let left = min(s.x, stamp.x) - 40, top = min(s.y, stamp.y) - 4
            for (i, (a, b)) in zip(before, after).enumerated() where a != b {
                let x = i % 320, y = i / 320
                #expect(x >= left && y >= top, "pixel (\(x), \(y)) outside the clock changed")
                if x < left || y < top { break }
            }
            before = after
            minute += 1
        }
        #expect(wakes == 10, "one wake-up a minute for ten minutes")
        #expect(d.daemon.nextWake(now: d.now) == week.loopTime(of: ManualWeek.minute(0, 10, 9)))
    }

    /// A wall clock that can be set: loop time `origin` shows `start`.
    final class SettableWall: @unchecked Sendable {
        var origin: Int64
        var start: Int
        init(start: Int, origin: Int64) { (self.start, self.origin) = (start, origin) }
        var clock: LocalClock {
            LocalClock(
                weekMinute: { now in self.start + Int((now - self.origin) / 60_000_000) },
                instant: { minutes, now in self.origin + ((now - self.origin) / 60_000_000 + Int64(minutes)) * 60_000_000 })
        }
    }

    @Test func aClockStepRealignsTheNextWakeUp() throws {
        let start = Int64(1_000_000_000)
        let wall = SettableWall(start: ManualWeek.minute(2, 14, 0), origin: start - 10_000_000)
        let d = try OffscreenDaemon(ini: "[overlay]\nclock = H:MM\n", localClock: wall.clock)
        d.showFirstPicture()
        #expect(d.clockOverlay.text == "14:00")
        #expect(d.daemon.nextWake(now: d.now) == start + 50_000_000)
        // NTP sets the clock an hour and 20 s on: 15:00:30 now.
        wall.start = ManualWeek.minute(2, 15, 0)
        wall.origin = d.now - 30_000_000
        d.daemon.ask(.wallClockSet(at: d.now))
        #expect(d.clockOverlay.text == "15:00")
        #expect(d.daemon.nextWake(now: d.now) == d.now, "the new time is drawn at once")
        d.advance(ms: 0)
        #expect(d.daemon.pixelsWritten > 0)
        #expect(d.daemon.nextWake(now: d.now) == d.now + 30_000_000, "the next minute of the clock as it is now")
    }

    @Test func aFontThatIsNotInstalledDrawsNoClockAndTheCarouselRunsOn() throws {
        let week = ManualWeek(start: ManualWeek.minute(0, 9, 0))
        let d = try OffscreenDaemon(ini: "[overlay]\nclock = HH:MM\nfont = No Such Font Family\n", localClock: week.clock)
        d.showFirstPicture()
        #expect(d.clockOverlay.stamp == nil)
        #expect(d.backend.presented > 0)
    }
}

@Suite("[overlay] caption on the daemon's screen") struct CaptionDaemonTests {
    func screen(_ d: OffscreenDaemon) -> [UInt32] {
        let size = d.backend.panelSize
        var pixels: [UInt32] = []
        for y in 0..<size.height { for x in 0..<size.width { pixels.append(d.backend.pixel(x: x, y: y)) } }
        return pixels
    }

    /// The pixels where `a` and `b` differ, as a bounding box.
    func changed(_ a: [UInt32], _ b: [UInt32], width: Int) -> (x0: Int, y0: Int, x1: Int, y1: Int)? {
        var box: (Int, Int, Int, Int)?
        for i in a.indices where a[i] != b[i] {
            let x = i % width, y = i / width
            box = box.map { (min($0.0, x), min($0.1, y), max($0.2, x), max($0.3, y)) } ?? (x, y, x, y)
        }
        return box.map { (x0: $0.0, y0: $0.1, x1: $0.2, y1: $0.3) }
    }

    @Test func theNameCaptionSitsBottomLeftAndASetTakesItAway() throws {
        let plain = try OffscreenDaemon(ini: "[indicator]\nenabled = false\n")
        plain.showFirstPicture()
        let d = try OffscreenDaemon(ini: "[indicator]\nenabled = false\n[overlay]\ncaption = name\nsize = 16\n")
        d.showFirstPicture()
        let box = try #require(changed(screen(plain), screen(d), width: 320), "the caption is drawn")
        // "01-mountains" in 16 px: bottom-left, a margin in, a line high.
        #expect(box.x0 >= 8 && box.x0 <= 16, "\(box)")
        #expect(box.y1 <= 200 - 8 && box.y0 >= 200 - 40, "\(box)")
        #expect(box.x1 > 80 && box.x1 < 200, "\(box)")
        // Taken away at run time: the pictures are prepared again, without it.
        #expect(isOK(d.daemon.answer(.set(key: "overlay.caption", value: "none"), grant: .controlSocket)))
        d.daemon.settleDecodes()
        for _ in 0..<3 { d.advance(ms: 4000) }
        #expect(changed(screen(plain), screen(d), width: 320) == nil)
    }
}

@Suite("[overlay] clock on a turned panel") struct ClockRotationTests {
    @Test(arguments: [0, 90, 180, 270])
    func theClockIsUprightInItsCornerOfTheLogicalScreen(rotation: Int) throws {
        let week = ManualWeek(start: ManualWeek.minute(0, 12, 34))
        let ini = "[display]\nrotation = \(rotation)\n[indicator]\nenabled = false\n"
        let plain = try OffscreenDaemon(ini: ini, localClock: week.clock)
        plain.showFirstPicture()
        let d = try OffscreenDaemon(ini: ini + "[overlay]\nclock = HH:MM\nclock_position = top-right\nsize = 16\n",
                                    localClock: week.clock)
        d.showFirstPicture()
        // Where the screens differ, in the upright (logical) picture people see.
        let panel = d.backend.panelSize
        let turn = Rotation(rawValue: rotation)!
        let logical = turn.logicalSize(panelWidth: panel.width, panelHeight: panel.height)
        var box: (x0: Int, y0: Int, x1: Int, y1: Int)?
        for ly in 0..<logical.height {
            for lx in 0..<logical.width {
                let p = turn.panel(x: lx, y: ly, panelWidth: panel.width, panelHeight: panel.height)
                guard d.backend.pixel(x: p.x, y: p.y) != plain.backend.pixel(x: p.x, y: p.y) else { continue }
                box = box.map { (min($0.x0, lx), min($0.y0, ly), max($0.x1, lx), max($0.y1, ly)) } ?? (lx, ly, lx, ly)
            }
        }
        let b = try #require(box, "the clock is drawn")
        // Top-right of the logical screen, wider than high (upright text).
        #expect(b.y0 < 20 && b.x1 > logical.width - 20, "\(b) on \(logical)")
        #expect(b.x1 - b.x0 > 2 * (b.y1 - b.y0), "\(b): the text runs across, upright")
    }
}

private func isOK(_ reply: ControlReply) -> Bool {
    if case .ok = reply { return true }
    return false
}

extension OffscreenDaemon {
    /// The clock's service on the loop (registered on every daemon).
    var clockOverlay: ClockOverlay { daemon.service(ClockOverlay.self)! }
}
