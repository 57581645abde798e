// The fbdev backend's pure parts: the 5-6-5 row kernel, the refresh
// period from a mode's timings, and which failures to open are worth
// waiting for. The device itself is tested in the VM (Tests/VM/e2e_fbdev.py:
// bochs' /dev/fb0 at 32 bits, vfb at 16, and vfb loaded after the daemon
// started waiting for it).

import CFBDev
import CarouselDisplay
import Foundation
import Testing
@testable import CarouselFBDev

@Suite("fbdev backend: pixels and timings") struct FBDevTests {
    @Test func xrgbRowsBecome565WithTheTopBitsOfEachChannelInEitherOrder() {
        let source: [UInt32] = [0x00FF_0000, 0x0000_FF00, 0x0000_00FF, 0x00FF_FFFF, 0x0000_0000, 0x0012_3456, 0xFF08_0408]
        var rgb = [UInt16](repeating: 0, count: source.count)
        var bgr = [UInt16](repeating: 0, count: source.count)
        cfbdev_xrgb_to_565(source, &rgb, source.count, 0)
        cfbdev_xrgb_to_565(source, &bgr, source.count, 1)
        #expect(rgb[0] == 0xF800 && rgb[1] == 0x07E0 && rgb[2] == 0x001F && rgb[3] == 0xFFFF && rgb[4] == 0)
        #expect(bgr[0] == 0x001F && bgr[1] == 0x07E0 && bgr[2] == 0xF800 && bgr[3] == 0xFFFF && bgr[4] == 0)
        // 0x12 0x34 0x56: red 0x12 >> 3 = 2, green 0x34 >> 2 = 13, blue 0x56 >> 3 = 10.
        #expect(rgb[5] == UInt16(2 << 11 | 13 << 5 | 10))
        #expect(bgr[5] == UInt16(10 << 11 | 13 << 5 | 2))
        // The X byte is ignored; a channel below its 5 or 6 bits' step is 0... or 1 in green's sixth bit.
        #expect(rgb[6] == UInt16(1 << 11 | 1 << 5 | 1))
    }

    @Test func theRefreshPeriodComesFromThePixelClockAndTheBlankingElseSixtyHertz() {
        var info = cfbdev_info()
        info.xres = 1280
        info.yres = 800
        #expect(FBDevBackend.framePeriod(info) == 16_667, "no pixel clock: 60 Hz")
        // 1280x800 with 160/23 pixels and lines of blanking at 71 MHz (14084 ps a pixel): 60 Hz.
        info.pixclock = 14_084
        info.left_margin = 80
        info.right_margin = 48
        info.hsync_len = 32
        info.upper_margin = 14
        info.lower_margin = 3
        info.vsync_len = 6
        let period = FBDevBackend.framePeriod(info)
        #expect((16_500...16_800).contains(period), "\(period) µs")
        info.pixclock = 1  // absurd: a period outside 5 to 100 ms is not believed
        #expect(FBDevBackend.framePeriod(info) == 16_667)
    }
}

@Suite("fbdev backend: waiting for a framebuffer that is not there yet") struct FBDevWaitingTests {
    /// A path in a fresh temporary folder, with nothing at it.
    private func missingPath() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fbdev-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.appendingPathComponent("fb1").path
    }

    @Test func aMissingDeviceIsNoDeviceAndWorthWaitingFor() throws {
        let path = try missingPath()
        #expect {
            _ = try FBDevBackend(device: path, terminal: nil)
        } throws: { error in
            guard let error = error as? DisplayError else { return false }
            return error.reason == .noDevice && FBDevBackend.isWorthWaiting(error) && error.message.contains(path)
        }
    }

    @Test func aNodeWithoutItsDriverIsNoDeviceToo() {
        // ENXIO and ENODEV: the node is there but its driver is not (not yet loaded, or unloaded).
        for e in [ENOENT, ENXIO, ENODEV] {
            let error = FBDevBackend.openError("/dev/fb1", errno: e)
            #expect(error.reason == .noDevice, "errno \(e)")
            #expect(FBDevBackend.isWorthWaiting(error), "errno \(e)")
        }
    }

    @Test func noRightsAWrongKindOfDeviceOrAnUnsupportedFormatAreNotWaitedFor() {
        for e in [EACCES, EPERM] {
            let error = FBDevBackend.openError("/dev/fb1", errno: e)
            #expect(error.reason == .permission)
            #expect(!FBDevBackend.isWorthWaiting(error))
        }
        #expect(!FBDevBackend.isWorthWaiting(FBDevBackend.openError("/dev/fb1", errno: EISDIR)))
        // /dev/null opens but is no framebuffer: FBIOGET_VSCREENINFO fails.
        #expect {
            _ = try FBDevBackend(device: "/dev/null", terminal: nil)
        } throws: { error in
            guard let error = error as? DisplayError else { return false }
            return error.reason == .other && !FBDevBackend.isWorthWaiting(error)
        }
        // The format's error (thrown after the device answered) is decided by its reason alone.
        #expect(!FBDevBackend.isWorthWaiting(DisplayError("/dev/fb1 (vfb) is 8 bits a pixel")))
        // A reason the DRM backend waits for (a display plugged into a card) means nothing here.
        #expect(!FBDevBackend.isWorthWaiting(DisplayError("x", reason: .notConnected)))
    }

    @Test func theWaitEndsWhenTheNodeAppears() throws {
        let path = try missingPath()
        var rounds = 0
        let found = FBDevBackend.waitForDevice(path, interval: 0.01, shouldStop: {
            rounds += 1
            // The driver registers its framebuffer after the first look, before the second.
            if rounds == 2 { _ = FileManager.default.createFile(atPath: path, contents: nil) }
            return false
        })
        #expect(found)
        #expect(rounds == 2, "the wait ended at the first look after the node appeared")
    }

    @Test func theWaitEndsAtOnceForAFailureWaitingWillNotCure() throws {
        // A directory is there but is no device (EISDIR): `init` says why, the wait does not hide it.
        let folder = try missingPath() + "-folder"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var rounds = 0
        #expect(FBDevBackend.waitForDevice(folder, interval: 0.01, shouldStop: { rounds += 1; return false }))
        #expect(rounds == 1)
    }

    @Test func theWaitStopsWhenAskedTo() throws {
        let path = try missingPath()
        var rounds = 0
        #expect(!FBDevBackend.waitForDevice(path, interval: 0.01, shouldStop: { rounds += 1; return rounds > 3 }))
        #expect(rounds == 4)
    }
}
