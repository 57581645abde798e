import CarouselCore
import Testing

@Suite("Touch slop and panel density")
struct TouchDensityTests {
    @Test func aReferencePanelKeepsTheConfiguredSlop() throws {
        // 160 dpi: 1600 px over 254 mm.
        #expect(try #require(TouchDensity.slopScale(pixels: 1600, millimetres: 254)) == 1)
    }

    @Test func densePanelsGetALargerSlopAndCoarseOnesASmallerOne() throws {
        // A 7" 1024x600 panel (154 mm wide, ~169 dpi) and a 10" 1280x800 one (~217 mm, 150 dpi).
        let seven = try #require(TouchDensity.slopScale(pixels: 1024, millimetres: 154))
        #expect(abs(seven * 160 - 1024 / (154 / 25.4)) < 1e-9)
        // A phone-like 6" 1080x2340 panel (~68 mm wide): ~400 dpi, 2.5x.
        let phone = try #require(TouchDensity.slopScale(pixels: 1080, millimetres: 68))
        #expect(phone > 2.4 && phone < 2.6)
        // A 27" 1920x1080 monitor (598 mm): ~82 dpi, about half.
        let monitor = try #require(TouchDensity.slopScale(pixels: 1920, millimetres: 598))
        #expect(monitor > 0.5 && monitor < 0.52)
    }

    @Test(arguments: [(1920, 0), (1920, 16), (1920, 1), (3840, 60), (640, 1000)])
    func unknownOrImplausibleSizesAreIgnored(pixels: Int, millimetres: Int) {
        #expect(TouchDensity.slopScale(pixels: pixels, millimetres: millimetres) == nil)
    }
}
