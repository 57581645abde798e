import CarouselCore
import CarouselImaging
import CarouselPlatform
import CarouselRender
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Decodes give way to the event loop on a busy CPU: the decoding thread
/// runs nicer than the thread that asks for pictures.
@Suite("Decode priority")
struct DecodePriorityTests {
    @Test("pictures are decoded on a thread nicer than the loop's by ThreadPriority.backgroundNice")
    func decodesRunNicer() throws {
        let seen = Mutex<[Int32]>([])
        let cache = ItemCache(settings: ItemCache.Settings(itemSize: PixelSize(width: 8, height: 8), fit: .contain,
                                                           background: .black, maxPixels: 1_000_000, budgetBytes: 1 << 20),
                              prepare: { _, _ in
            seen.withLock { $0.append(ThreadPriority.currentNice()) }
            return try DecodedImage(width: 8, height: 8, format: .xrgb8888) { _, _ in }
        })
        cache.want([PageKey("a"), PageKey("b"), PageKey("c")])
        cache.waitUntilIdle()
        let loop = ThreadPriority.currentNice()
        let nices = seen.withLock { $0 }
        #expect(nices.count == 3)
        // At least: libdispatch may run its utility threads nicer already.
        #expect(nices.allSatisfy { $0 >= min(loop + ThreadPriority.backgroundNice, 19) }, "loop \(loop), decodes \(nices)")
    }

    @Test("a thread is made nicer once, however often it asks")
    func onceAThread() {
        let result = Mutex<(Int32, Int32, Int32)>((0, 0, 0))
        let done = Mutex(false)
        // A thread of its own: the test's own thread keeps its priority.
        var thread = pthread_t()
        let box = Unmanaged.passRetained(Box {
            let before = ThreadPriority.currentNice()
            ThreadPriority.yieldToTheLoop()
            let once = ThreadPriority.currentNice()
            ThreadPriority.yieldToTheLoop()
            result.withLock { $0 = (before, once, ThreadPriority.currentNice()) }
            done.withLock { $0 = true }
        })
        let rc = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            box.body()
            return nil
        }, box.toOpaque())
        #expect(rc == 0)
        if rc == 0 { pthread_join(thread, nil) }
        #expect(done.withLock { $0 })
        let (before, once, twice) = result.withLock { $0 }
        #expect(once == min(before + ThreadPriority.backgroundNice, 19))
        #expect(twice == once)
    }

    final class Box: @unchecked Sendable {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }
}
