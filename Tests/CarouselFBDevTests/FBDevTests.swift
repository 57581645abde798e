// The fbdev backend's pure parts: the 5-6-5 row kernel and the refresh
// period from a mode's timings. The device itself is tested in the VM
// (scripts/vm/e2e.py: bochs' /dev/fb0 at 32 bits, vfb at 16).

import CFBDev
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
