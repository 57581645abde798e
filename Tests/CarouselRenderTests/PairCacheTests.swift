import CarouselCore
import CarouselImaging
import CarouselRender
import CarouselText
import Foundation
import Testing

/// A page of two portraits (`[images] pair_portraits`) in the decode cache:
/// one picture of the item size, each portrait fitted to its half, the gap
/// between them background; a broken half names its file; a file forgotten
/// takes its pairs along; a zoom decodes the pair sharper.
@Suite("ItemCache: a pair of portraits", .enabled(if: Tools.imageMagickAvailable, Comment(rawValue: imageMagickMissing)))
struct PairCacheTests {
    /// 200x100 with a 10-pixel gap: halves 95 wide at x 0 and 105.
    static func settings(caption: Captioning? = nil) -> ItemCache.Settings {
        ItemCache.Settings(itemSize: PixelSize(width: 200, height: 100), fit: .contain, background: .black,
                           maxPixels: 64_000_000, budgetBytes: 64 << 20, caption: caption, pairGap: 10)
    }

    /// Two 200x400 portraits, red and blue (each shows 50x100 in a 95x100 half).
    static func portraits(_ scratch: Scratch) throws -> [String] {
        let red = scratch.file("red.png"), blue = scratch.file("blue.png")
        try Tools.magick(["-size", "200x400", "xc:#FF0000", "-write", red, "+delete", "-size", "200x400", "xc:#0000FF", blue])
        return [red, blue]
    }

    @Test func eachPortraitIsFittedToItsHalfWithTheGapBetween() throws {
        let scratch = try Scratch("pair")
        let key = PageKey(paths: try Self.portraits(scratch))
        let page = try ItemCache.prepare(key, settings: Self.settings())
        #expect(page.width == 200 && page.height == 100)
        // Contain: 50x100 in each 95-wide half, centred (22 pixels of bar before it).
        func rgb(_ x: Int, _ y: Int) -> UInt32 { page.pixel(x: x, y: y) & 0xFFFFFF }
        #expect(rgb(21, 50) == 0 && rgb(22, 50) == 0xFF0000 && rgb(71, 50) == 0xFF0000 && rgb(72, 50) == 0)
        #expect(rgb(100, 50) == 0, "the gap is background")
        #expect(rgb(126, 50) == 0 && rgb(127, 50) == 0x0000FF && rgb(176, 50) == 0x0000FF && rgb(177, 50) == 0)
    }

    @Test func theHalvesSplitWhatTheGapLeaves() {
        let halves = ItemCache.pairHalves(box: PixelSize(width: 201, height: 80), gap: 10)
        #expect(halves.left == PixelSize(width: 95, height: 80))
        #expect(halves.right == PixelSize(width: 96, height: 80))
        #expect(halves.rightX == 105)
        // A gap wider than the page leaves a pixel for each.
        let tight = ItemCache.pairHalves(box: PixelSize(width: 4, height: 4), gap: 50)
        #expect(tight.left.width == 1 && tight.right.width == 1 && tight.rightX == 3)
    }

    @Test func aBrokenHalfFailsThePageNamingItsFile() throws {
        let scratch = try Scratch("pairbroken")
        let good = try Self.portraits(scratch)[0]
        let broken = try scratch.write("broken.jpg", "not a picture")
        let key = PageKey(pair: good, broken)
        let cache = ItemCache(settings: Self.settings())
        cache.want([key])
        cache.waitUntilIdle()
        let failures = cache.drainFailures()
        #expect(failures.count == 1)
        #expect(failures.first?.key == key)
        #expect(failures.first?.file == broken)
        #expect(failures.first?.message.contains(broken) == true)
    }

    @Test func forgettingAFileLetsItsPairsGo() throws {
        let scratch = try Scratch("pairforget")
        let paths = try Self.portraits(scratch)
        let key = PageKey(paths: paths)
        let cache = ItemCache(settings: Self.settings())
        cache.want([key, PageKey(paths[0])])
        cache.waitUntilIdle()
        #expect(cache.image(for: key) != nil)
        cache.forget([paths[1]])
        #expect(cache.image(for: PageKey(paths[0])) != nil)
        // Wanted still: decoded again.
        cache.waitUntilIdle()
        #expect(cache.image(for: key) != nil)
        cache.want([PageKey(paths[0])])
        cache.forget([paths[1]])
        #expect(cache.image(for: key) == nil)
    }

    @Test func aZoomDecodesThePairSharper() throws {
        let scratch = try Scratch("pairzoom")
        let key = PageKey(paths: try Self.portraits(scratch))
        let cache = ItemCache(settings: Self.settings())
        cache.want([key])
        cache.waitUntilIdle()
        cache.wantZoom(key, scale: 2)
        cache.waitUntilIdle()
        let zoomed = try #require(cache.zoomImage(for: key))
        #expect(zoomed.width == 400 && zoomed.height == 200)
        func rgb(_ x: Int, _ y: Int) -> UInt32 { zoomed.pixel(x: x, y: y) & 0xFFFFFF }
        // Halves of 190 with a 20-pixel gap; 100x200 pictures 45 pixels in.
        #expect(rgb(95, 100) == 0xFF0000 && rgb(200, 100) == 0 && rgb(305, 100) == 0x0000FF)
    }

    @Test func eachHalfHasItsOwnCaption() throws {
        let scratch = try Scratch("paircaption")
        let key = PageKey(paths: try Self.portraits(scratch))
        let caption = Captioning(kind: .name, position: .bottomLeft, style: TextStyle(), size: 14)
        let plain = try ItemCache.prepare(key, settings: Self.settings())
        let captioned = try ItemCache.prepare(key, settings: Self.settings(caption: caption))
        // Something is drawn in the bottom of each half, nothing in the gap.
        func changed(_ xs: Range<Int>) -> Int {
            var n = 0
            for y in 60..<100 { for x in xs where plain.pixel(x: x, y: y) != captioned.pixel(x: x, y: y) { n += 1 } }
            return n
        }
        #expect(changed(0..<95) > 20)
        #expect(changed(105..<200) > 20)
        #expect(changed(95..<105) == 0)
    }
}
