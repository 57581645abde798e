// The render loop hands the cache its wanted list only when the list
// changes, not on every frame: what makes a wanted picture missing without
// a new list (a file replaced on disk, new settings) must start the decoder
// by itself, or that picture stays background until something moves.

import CarouselCore
import CarouselImaging
@testable import CarouselRender
import Synchronization
import Testing

@Suite("ItemCache: pictures lost without a new wanted list come back")
struct WantedAgainTests {
    static let settings = ItemCache.Settings(
        itemSize: PixelSize(width: 8, height: 4), fit: .cover, background: PixelColor(red: 0, green: 0, blue: 0),
        maxPixels: 1_000_000, budgetBytes: 1 << 20)

    /// A decoder that counts its calls and makes a grey picture of the item size.
    final class CountingDecoder: Sendable {
        let calls = Mutex<[PageKey]>([])
        func prepare(key: PageKey, settings: ItemCache.Settings) throws -> DecodedImage {
            calls.withLock { $0.append(key) }
            return try DecodedImage(width: settings.itemSize.width, height: settings.itemSize.height,
                                    format: .xrgb8888) { bytes, _ in bytes.initializeMemory(as: UInt8.self, repeating: 0x80) }
        }
    }

    @Test("a wanted file forgotten (replaced on disk) is decoded again without being asked again")
    func forgottenIsDecodedAgain() {
        let decoder = CountingDecoder()
        let cache = ItemCache(settings: Self.settings, prepare: decoder.prepare)
        cache.want([PageKey("/p/a.jpg"), PageKey("/p/b.jpg")])
        cache.waitUntilIdle()
        cache.forget(["/p/b.jpg"])
        cache.waitUntilIdle()
        #expect(cache.image(for: PageKey("/p/b.jpg")) != nil, "the replaced file stayed missing until the next want")
        #expect(decoder.calls.withLock { $0 } == [PageKey("/p/a.jpg"), PageKey("/p/b.jpg"), PageKey("/p/b.jpg")])
        // The same list again decodes nothing more.
        cache.want([PageKey("/p/a.jpg"), PageKey("/p/b.jpg")])
        cache.waitUntilIdle()
        #expect(decoder.calls.withLock { $0.count } == 3)
    }

    @Test("after a reset (new item size) the wanted pictures are decoded at the new size without being asked again")
    func resetDecodesAnew() throws {
        let decoder = CountingDecoder()
        let cache = ItemCache(settings: Self.settings, prepare: decoder.prepare)
        cache.want([PageKey("/p/a.jpg")])
        cache.waitUntilIdle()
        var wider = Self.settings
        wider.itemSize = PixelSize(width: 16, height: 4)
        cache.reset(settings: wider)
        cache.waitUntilIdle()
        let image = try #require(cache.image(for: PageKey("/p/a.jpg")), "the picture on screen stayed missing after the reset")
        #expect(image.size == wider.itemSize)
    }
}
