// ItemCache: memory stays within the budget however many files there are,
// and the render path never waits for a decode (SPEC.md section 5).

import CarouselCore
import CarouselImaging
import CarouselRender
import Dispatch
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("ItemCache: bounded memory, never blocking", .enabled(if: Tools.imageMagickAvailable, Comment(rawValue: imageMagickMissing)))
struct ItemCacheTests {
    static let item = PixelSize(width: 64, height: 40)
    /// Pictures are kept at 3 bytes a pixel (rows of 192 bytes, already on a 4-byte boundary).
    static let itemBytes = 64 * 40 * 3

    /// 20 distinct small PNGs (one ImageMagick call) and `count` symbolic
    /// links cycling through them, a page each: distinct paths, so distinct
    /// cache entries.
    static func folder(count: Int, in scratch: Scratch) throws -> [PageKey] {
        var args: [String] = []
        var originals: [String] = []
        for i in 0..<20 {
            let path = scratch.file("original-\(i).png")
            let c = Palette.sets[i % Palette.sets.count][i / Palette.sets.count % 4]
            // Sizes vary so that scaling (up and down, both aspects) is exercised.
            args += ["-size", "\(24 + 7 * i)x\(20 + 3 * (19 - i))", "xc:\(c.hex)", "-write", path, "+delete"]
            originals.append(path)
        }
        try Tools.magick(args + ["-size", "1x1", "xc:black", "null:"])
        var pages: [PageKey] = []
        for i in 0..<count {
            let link = scratch.file(String(format: "img%05d.png", i))
            guard symlink(originals[i % 20], link) == 0 else { throw ToolError(message: "symlink \(link): errno \(errno)") }
            pages.append(PageKey(link))
        }
        return pages
    }

    static func settings(budgetItems: Int) -> ItemCache.Settings {
        ItemCache.Settings(itemSize: item, fit: .contain, background: .black, maxPixels: 64_000_000,
                           budgetBytes: budgetItems * itemBytes)
    }

    /// Scrolls from the first to the last of 2,000 files in half-item steps,
    /// wanting what is visible (one or two items) then two neighbours.
    @Test("scrolling 2,000 files keeps residentBytes within the budget (plus the item on screen)",
          arguments: [6, 3, 1])
    func scroll(budgetItems: Int) throws {
        let scratch = try Scratch("cache")
        let pages = try Self.folder(count: 2000, in: scratch)
        let budget = budgetItems * Self.itemBytes
        let cache = ItemCache(settings: Self.settings(budgetItems: budgetItems))
        var peakBytes = 0, peakCount = 0
        var missingOnScreen: [Int] = []
        for step in 0..<(2 * pages.count - 1) {
            let first = step / 2
            let visible = step % 2 == 0 ? [first] : [first, first + 1]
            let neighbours = [visible.last! + 1, first - 1]
            let wanted = (visible + neighbours).filter { pages.indices.contains($0) }.map { pages[$0] }
            cache.want(wanted)
            cache.waitUntilIdle()
            peakBytes = max(peakBytes, cache.residentBytes)
            peakCount = max(peakCount, cache.residentCount)
            // The budget holds whole items; the one on screen is decoded whatever the budget.
            if cache.image(for: wanted[0]) == nil { missingOnScreen.append(step) }
            if cache.residentBytes > budget + Self.itemBytes {
                Issue.record("step \(step): \(cache.residentBytes) bytes resident, budget \(budget) + one item")
                break
            }
        }
        #expect(peakBytes <= budget + Self.itemBytes, "peak \(peakBytes) bytes, budget \(budget)")
        #expect(peakCount <= budgetItems + 1, "peak \(peakCount) pictures for a budget of \(budgetItems)")
        #expect(missingOnScreen.isEmpty, "the item on screen was not ready after waitUntilIdle at steps \(missingOnScreen.prefix(10))")
        #expect(cache.drainFailures().isEmpty)
        // Pictures come out at the item size, whatever the file's size.
        let last = try #require(cache.image(for: pages[pages.count - 1]))
        #expect(last.size == Self.item)
    }

    @Test("with room, everything wanted is ready after waitUntilIdle")
    func allWantedReady() throws {
        let scratch = try Scratch("cache-ready")
        let pages = try Self.folder(count: 40, in: scratch)
        let cache = ItemCache(settings: Self.settings(budgetItems: 8))
        for start in stride(from: 0, to: 36, by: 3) {
            let wanted = Array(pages[start..<(start + 4)])
            cache.want(wanted)
            cache.waitUntilIdle()
            for p in wanted { #expect(cache.image(for: p) != nil, "\(p) not ready") }
            #expect(cache.residentBytes <= 8 * Self.itemBytes)
        }
    }

    @Test("a picture the wanted list leaves out is let go at once, though the budget has room")
    func unwantedPicturesAreLetGo() throws {
        let scratch = try Scratch("cache-let-go")
        let pages = try Self.folder(count: 6, in: scratch)
        let cache = ItemCache(settings: Self.settings(budgetItems: 8))
        cache.want(Array(pages[0..<4]))
        cache.waitUntilIdle()
        #expect(cache.residentCount == 4)
        cache.want([pages[1], pages[2]])
        #expect(cache.residentCount == 2)
        #expect(cache.residentBytes == 2 * Self.itemBytes)
        #expect(cache.image(for: pages[0]) == nil && cache.image(for: pages[1]) != nil)
        // Wanted again: decoded again.
        cache.want([pages[0], pages[1]])
        cache.waitUntilIdle()
        #expect(cache.image(for: pages[0]) != nil)
        #expect(cache.residentCount == 2)
        // Given memory to keep them (an explicit cache_mb): they stay while they fit.
        var keeping = Self.settings(budgetItems: 8)
        keeping.keepsUnwanted = true
        let kept = ItemCache(settings: keeping)
        kept.want(Array(pages[0..<4]))
        kept.waitUntilIdle()
        kept.want([pages[4]])
        kept.waitUntilIdle()
        #expect(kept.residentCount == 5)
        #expect(kept.image(for: pages[0]) != nil)
    }

    /// A flag that is true once.
    final class Once: @unchecked Sendable {
        private let lock = NSLock()
        private var armed = true
        func take() -> Bool {
            lock.lock()
            defer { lock.unlock() }
            let was = armed
            armed = false
            return was
        }
    }

    @Test("image(for:) returns nil at once for an item not decoded yet, while the decoder is busy")
    func neverBlocks() throws {
        let scratch = try Scratch("cache-nonblocking")
        let pages = try Self.folder(count: 2, in: scratch)
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let once = Once()
        // The decoder thread calls onReady after each picture: hold it there
        // after the first, so the second is certainly not decoded yet.
        let cache = ItemCache(settings: Self.settings(budgetItems: 8), onReady: {
            if once.take() {
                entered.signal()
                release.wait()
            }
        })
        #expect(cache.image(for: pages[0]) == nil, "nothing wanted yet")
        cache.want([pages[0]])
        guard entered.wait(timeout: .now() + 30) == .success else {
            Issue.record("the decoder never finished the first picture")
            release.signal()
            return
        }
        #expect(cache.image(for: pages[0]) != nil)
        cache.want([pages[0], pages[1]])

        // Ask on another thread with a watchdog, so that a blocking call fails
        // the test instead of hanging it. (A liveness guard, not a timing assertion.)
        let answered = DispatchSemaphore(value: 0)
        final class Box: @unchecked Sendable { var image: DecodedImage?; var asked = false }
        let box = Box()
        let cacheRef = cache
        let second = pages[1]
        DispatchQueue.global().async {
            box.image = cacheRef.image(for: second)
            box.asked = true
            answered.signal()
        }
        let returned = answered.wait(timeout: .now() + 30) == .success
        #expect(returned, "image(for:) blocked while the decoder was busy")
        if returned { #expect(box.image == nil, "a picture the decoder has not reached was returned") }
        #expect(cache.residentCount == 1)

        release.signal()
        cache.waitUntilIdle()
        #expect(cache.image(for: pages[1]) != nil, "the picture appears once decoded")
    }

    @Test("a broken file is reported once and never returned")
    func failure() throws {
        let scratch = try Scratch("cache-failure")
        let bad = PageKey(try scratch.write("bad.jpg", bytes: [0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10]))
        let good = try Self.folder(count: 1, in: scratch)[0]
        let cache = ItemCache(settings: Self.settings(budgetItems: 4))
        cache.want([bad, good])
        cache.waitUntilIdle()
        #expect(cache.image(for: bad) == nil)
        #expect(cache.failure(for: bad) != nil)
        #expect(cache.image(for: good) != nil)
        let failures = cache.drainFailures()
        #expect(failures.map(\.key) == [bad])
        #expect(failures.first?.message.hasPrefix(bad.first + ": ") == true, "\(failures)")
        // Wanting it again does not decode or report it again.
        cache.want([bad, good])
        cache.waitUntilIdle()
        #expect(cache.drainFailures().isEmpty)
    }
}
