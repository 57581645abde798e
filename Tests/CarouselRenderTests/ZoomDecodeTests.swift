import CarouselCore
import CarouselImaging
import CarouselRender
import Foundation
import Testing

/// The decode a zoom needs (issue 13): off the loop, at the resolution the
/// scale asks for, within max_pixels, the file's own pixels and an explicit
/// budget, and let go when the zoom ends.
@Suite("ItemCache: decodes for a zoom", .enabled(if: Tools.imageMagickAvailable, Comment(rawValue: imageMagickMissing)))
struct ZoomDecodeTests {
    static let item = PixelSize(width: 100, height: 50)

    static func cache(maxPixels: Int = 64_000_000, budgetBytes: Int = 64 << 20, explicit: Bool = false) -> ItemCache {
        ItemCache(settings: ItemCache.Settings(itemSize: item, fit: .contain, background: .black, maxPixels: maxPixels,
                                               budgetBytes: budgetBytes, keepsUnwanted: explicit))
    }

    /// A 1000x500 file, a page alone: ten times the item's pixels along each side.
    static func file(_ scratch: Scratch) throws -> PageKey {
        let path = scratch.file("big.png")
        try Tools.magick(["-size", "1000x500", "gradient:red-blue", path])
        return PageKey(path)
    }

    @Test("the scale rounded up to a half, then let go when the zoom ends")
    func atTheScale() throws {
        let scratch = try Scratch("zoomdecode")
        let page = try Self.file(scratch)
        let cache = Self.cache()
        cache.want([page])
        cache.waitUntilIdle()
        let screenBytes = cache.residentBytes
        cache.wantZoom(page, scale: 2.2)
        cache.waitUntilIdle()
        let zoomed = try #require(cache.zoomImage(for: page))
        #expect(zoomed.width == 250 && zoomed.height == 125)
        #expect(cache.residentBytes == screenBytes + zoomed.byteCount)
        // Coming back from 2.2 keeps the sharper picture; further in makes a sharper one.
        cache.wantZoom(page, scale: 1.4)
        cache.waitUntilIdle()
        #expect(cache.zoomImage(for: page)?.identity == zoomed.identity)
        cache.wantZoom(page, scale: 4)
        cache.waitUntilIdle()
        #expect(cache.zoomImage(for: page)?.width == 400)
        cache.wantZoom(nil, scale: 1)
        #expect(cache.zoomImage(for: page) == nil)
        #expect(cache.residentBytes == screenBytes)
    }

    @Test("no more than the file has or an explicit budget leaves")
    func bounded() throws {
        let scratch = try Scratch("zoombound")
        let page = try Self.file(scratch)
        // The file is 10x the item: a zoom of 16 gets 10.
        let native = Self.cache()
        native.want([page])
        native.wantZoom(page, scale: 16)
        native.waitUntilIdle()
        #expect(native.zoomImage(for: page)?.width == 1000)
        // cache_mb given: the screen picture is kept in 15,000 bytes (3 a
        // pixel), a zoom's decode takes 20,000 a screen (4 a pixel); a
        // budget of 95,000 holds the screen picture and a zoom of sqrt(4) = 2.
        let budget = Self.cache(budgetBytes: 15_000 + 4 * 20_000, explicit: true)
        budget.want([page])
        budget.wantZoom(page, scale: 4)
        budget.waitUntilIdle()
        #expect(budget.zoomImage(for: page)?.width == 200)
        #expect(budget.residentBytes <= 15_000 + 4 * 20_000)
        // A file no larger than the screen: nothing to decode, the screen picture is scaled up.
        let small = scratch.file("small.png")
        try Tools.magick(["-size", "100x50", "xc:green", small])
        let upscale = Self.cache()
        upscale.want([PageKey(small)])
        upscale.wantZoom(PageKey(small), scale: 3)
        upscale.waitUntilIdle()
        #expect(upscale.zoomImage(for: PageKey(small)) == nil)
        #expect(upscale.missing.isEmpty)
    }
}
