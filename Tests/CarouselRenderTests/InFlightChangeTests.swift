// A file that changes on disk while the decoder reads it: the result of that
// read (a failure of the half-copied file, or the old pixels) must not stick.
// Without this, a picture copied into the folder while the daemon was reading
// it stayed out of the carousel for good, although complete on disk.

import CarouselCore
import CarouselImaging
@testable import CarouselRender
import Dispatch
import Synchronization
import Testing

@Suite("ItemCache: a file that changes during its decode")
struct InFlightChangeTests {
    static let settings = ItemCache.Settings(
        itemSize: PixelSize(width: 8, height: 4), fit: .cover, background: PixelColor(red: 0, green: 0, blue: 0),
        maxPixels: 1_000_000, budgetBytes: 1 << 20)

    /// A decoder whose first read of the file is held until the test lets it
    /// go, and fails as a truncated file would; later reads succeed.
    final class HeldDecoder: Sendable {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let calls = Mutex(0)

        func prepare(key: PageKey, settings: ItemCache.Settings) throws -> DecodedImage {
            let call = calls.withLock { n -> Int in
                n += 1
                return n
            }
            if call == 1 {
                entered.signal()
                release.wait()
                throw ImageError(path: key.first, reason: .corrupt(.jpeg, detail: "file is truncated (100 bytes)"))
            }
            return try DecodedImage(width: settings.itemSize.width, height: settings.itemSize.height,
                                    format: .xrgb8888) { bytes, _ in bytes.initializeMemory(as: UInt8.self, repeating: 0x80) }
        }
    }

    @Test("a failure read before the file was replaced is thrown away; the file is decoded again")
    func staleFailure() throws {
        let decoder = HeldDecoder()
        let cache = ItemCache(settings: Self.settings, prepare: decoder.prepare)
        cache.want([PageKey("/pictures/new.jpg")])
        #expect(decoder.entered.wait(timeout: .now() + 30) == .success, "the decoder never started")
        // The copy completes: the album sees the file changed and forgets it.
        cache.forget(["/pictures/new.jpg"])
        decoder.release.signal()
        cache.waitUntilIdle()
        #expect(cache.drainFailures().isEmpty, "the half-copied read was reported as a broken file")
        #expect(cache.failure(for: PageKey("/pictures/new.jpg")) == nil)
        #expect(cache.image(for: PageKey("/pictures/new.jpg")) != nil, "the complete file was not decoded again")
        #expect(decoder.calls.withLock { $0 } == 2)
    }

    @Test("a failure with no change meanwhile is reported once, and the file is not read again")
    func realFailure() throws {
        let decoder = HeldDecoder()
        let cache = ItemCache(settings: Self.settings, prepare: decoder.prepare)
        cache.want([PageKey("/pictures/bad.jpg")])
        #expect(decoder.entered.wait(timeout: .now() + 30) == .success, "the decoder never started")
        decoder.release.signal()
        cache.waitUntilIdle()
        #expect(cache.drainFailures().map(\.key) == [PageKey("/pictures/bad.jpg")])
        cache.want([PageKey("/pictures/bad.jpg")])
        cache.waitUntilIdle()
        #expect(cache.image(for: PageKey("/pictures/bad.jpg")) == nil)
        #expect(decoder.calls.withLock { $0 } == 1)
    }

    @Test("forgetting another file does not throw away the decode in flight")
    func otherFile() throws {
        let decoder = HeldDecoder()
        let cache = ItemCache(settings: Self.settings, prepare: decoder.prepare)
        cache.want([PageKey("/pictures/a.jpg")])
        #expect(decoder.entered.wait(timeout: .now() + 30) == .success, "the decoder never started")
        cache.forget(["/pictures/b.jpg"])
        decoder.release.signal()
        cache.waitUntilIdle()
        #expect(cache.drainFailures().map(\.key) == [PageKey("/pictures/a.jpg")])
    }
}
