// cache_mb = auto keeps pictures paged past in 1/64 of the board's memory
// (issue 31, item 1): an album that fits cycles on the decodes of its first
// pass, and one that does not keeps the same pictures pass after pass (the
// picture shown last is let go first), so those are never decoded again.

import CarouselConfig
import CarouselCore
@testable import CarouselDaemon
import CarouselRender
import Foundation
import Synchronization
import Testing

@Suite("cache_mb = auto: pictures paged past are kept in a share of the board's memory")
struct KeptPicturesTests {
    /// Decodes per file, through the real `ItemCache.prepare`.
    final class Decodes: Sendable {
        let counts = Mutex<[String: Int]>([:])
        var prepare: ItemCache.Prepare {
            { key, settings in
                self.counts.withLock { $0[(key.first as NSString).lastPathComponent, default: 0] += 1 }
                return try ItemCache.prepare(key, settings: settings)
            }
        }
        var total: Int { counts.withLock { $0.values.reduce(0, +) } }
    }

    static let demo = ["01-mountains.jpg", "02-sunset.jpg", "03-portrait.jpg", "04-panels.png", "05-glow.webp"]

    /// A daemon on a 320x200 screen with `count` pictures and `boardMemory`.
    static func daemon(count: Int, boardMemory: Int, decodes: Decodes) throws -> OffscreenDaemon {
        try OffscreenDaemon(images: [], prepare: decodes.prepare, folderExtras: { images in
            for i in 0..<count {
                let name = demo[i % demo.count]
                try FileManager.default.copyItem(at: demoImages.appendingPathComponent(name),
                                                 to: images.appendingPathComponent(String(format: "p%02d-", i) + name))
            }
        }, boardMemory: boardMemory)
    }

    /// `n` pages forward, each let come to rest and its decodes finish.
    static func page(_ d: OffscreenDaemon, _ n: Int) {
        for _ in 0..<n {
            _ = d.daemon.answer(.next, grant: .controlSocket)
            for _ in 0..<60 {
                d.advance(ms: 10)
                d.daemon.settleDecodes()
            }
        }
    }

    @Test("on a 1 GiB board an album of 5 is decoded once, however many passes")
    func smallAlbumCyclesWithoutDecoding() throws {
        let decodes = Decodes()
        let d = try Self.daemon(count: 5, boardMemory: 1 << 30, decodes: decodes)
        let settings = d.daemon.layout.cacheSettings(d.daemon.config)
        // 4 pictures the screen can want at once, and 16 MiB kept.
        #expect(settings.budgetBytes == 4 * 320 * 200 * 3 + (1 << 30) / 64)
        #expect(settings.keepsUnwanted)
        #expect(d.daemon.layout.cacheLine(d.daemon.config)
            == "decode cache: 16.7 MiB, 91 pictures of 320x200 at 3 bytes a pixel (cache_mb = auto: what the screen "
            + "needs, and 87 more paged past, in 16 MiB, 1/64 of the board's 1024 MiB)")
        d.advance(ms: 10)
        d.daemon.settleDecodes()
        Self.page(d, 15)
        #expect(d.daemon.model.currentItemIndex(at: Timestamp(microseconds: d.now)) % 5 == 0)
        let counts = decodes.counts.withLock { $0 }
        #expect(counts.count == 5 && counts.values.allSatisfy { $0 == 1 }, "decodes in three passes: \(counts)")
        #expect(d.daemon.cache.residentCount == 5)
    }

    @Test("an album larger than the share keeps the same pictures pass after pass")
    func largerAlbumKeepsASteadySubset() throws {
        // A share of 2 pictures of 320x200 (192,000 bytes each) and a little.
        let board = 64 * (2 * 192_000 + 1_000)
        let decodes = Decodes()
        let d = try Self.daemon(count: 8, boardMemory: board, decodes: decodes)
        #expect(d.daemon.layout.cacheSettings(d.daemon.config).budgetBytes == 4 * 192_000 + board / 64)
        d.advance(ms: 10)
        d.daemon.settleDecodes()
        Self.page(d, 8)
        var perPass: [Int] = []
        for _ in 0..<3 {
            let before = decodes.total
            Self.page(d, 8)
            perPass.append(decodes.total - before)
            #expect(d.daemon.cache.residentCount <= 6, "\(d.daemon.cache.residentCount) pictures held")
        }
        // Letting go of the picture seen longest ago would decode all 8 on
        // every pass; the pictures kept stay, and are not decoded again.
        #expect(perPass.allSatisfy { $0 <= 6 && $0 >= 2 }, "decodes per pass: \(perPass)")
        #expect(perPass[1] == perPass[2], "decodes per pass: \(perPass)")
    }

    @Test("with no share (a board too small for one picture more) pictures paged past are let go, as before")
    func noShareLetsGo() throws {
        let decodes = Decodes()
        let d = try Self.daemon(count: 5, boardMemory: 64 * 100_000, decodes: decodes)
        #expect(!d.daemon.layout.cacheSettings(d.daemon.config).keepsUnwanted)
        d.advance(ms: 10)
        d.daemon.settleDecodes()
        Self.page(d, 10)
        #expect(decodes.total > 5 + 4, "decodes: \(decodes.counts.withLock { $0 })")
        #expect(d.daemon.cache.residentCount <= 4)
    }
}
