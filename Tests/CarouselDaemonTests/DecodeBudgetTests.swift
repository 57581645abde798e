// cache_mb = auto: the decode budget is what the screen needs. Scrolling
// through an album far larger than that keeps no more pictures than the
// carousel can want at once, and never leaves a wanted picture undecoded
// for lack of room (an item drawn as background while it should show).

import CarouselConfig
import CarouselCore
@testable import CarouselDaemon
import Foundation
import Testing

@Suite("cache_mb = auto: the decode budget follows the screen")
struct DecodeBudgetTests {
    /// The wanted list's most pictures, worked out by hand for a 320x200 screen:
    /// * full screen, paging: mid-slide items i and i+1 are on screen, the
    ///   current item's neighbours (one ahead, one behind) add one, the
    ///   other being on screen, and a `goto` far away wants the one item
    ///   there: 2 + 1 + 1 = 4;
    /// * without paging a fling rests anywhere, two items visible there: 2 + 1 + 2 = 5;
    /// * item_size 0.5 (neighbours peek in by a quarter screen each side):
    ///   three on screen, the neighbours among them, and three where a
    ///   motion rests: 3 + 3 = 6.
    static let cases: [(ini: String, pictures: Int)] = [
        ("", 4),
        ("[carousel]\npaging = false\n", 5),
        ("[carousel]\nitem_size = 0.5\n", 6),
    ]

    @Test("the budget is room for the pictures the carousel can want at once",
          arguments: cases.indices)
    func budget(_ k: Int) throws {
        let (ini, pictures) = Self.cases[k]
        let d = try OffscreenDaemon(images: [], ini: ini)
        let layout = d.daemon.layout
        #expect(AlbumState.wantedLimit(geometry: layout.compositor.geometry, paging: layout.settings.paging) == pictures)
        let item = layout.compositor.itemPixelSize
        #expect(layout.cacheSettings(d.daemon.config).budgetBytes == pictures * item.width * item.height * 3)
    }

    @Test("cache_mb, when set, is the budget whatever the screen")
    func explicitBudget() throws {
        let d = try OffscreenDaemon(images: [])
        guard case .ok = d.daemon.set("images.cache_mb", "9") else {
            Issue.record("set images.cache_mb 9 was refused")
            return
        }
        #expect(d.daemon.layout.cacheSettings(d.daemon.config).budgetBytes == 9 << 20)
        guard case .ok = d.daemon.set("images.cache_mb", "auto") else {
            Issue.record("set images.cache_mb auto was refused")
            return
        }
        #expect(d.daemon.layout.cacheSettings(d.daemon.config).budgetBytes == 4 * 320 * 200 * 3)
    }

    @Test("scrolling through 30 pictures keeps at most that many decoded, and every wanted one is",
          arguments: cases.indices)
    func scroll(_ k: Int) throws {
        let (ini, pictures) = Self.cases[k]
        let d = try OffscreenDaemon(images: [], ini: ini)
        let demo = ["01-mountains.jpg", "02-sunset.jpg", "03-portrait.jpg", "04-panels.png", "05-glow.webp"]
        let images = d.folder.appendingPathComponent("images")
        for i in 0..<30 {
            let name = demo[i % demo.count]
            try FileManager.default.copyItem(at: demoImages.appendingPathComponent(name),
                                             to: images.appendingPathComponent(String(format: "p%02d-", i) + name))
        }
        d.daemon.rescanAlbum()
        #expect(d.daemon.album.count == 30)
        var peak = 0
        var problems: [String] = []
        /// Frames for `ms`, letting the decoder catch up after each as a fast board would.
        func run(_ ms: Int, _ what: String) {
            for _ in 0..<(ms / 10) {
                d.advance(ms: 10)
                d.daemon.settleDecodes()
                peak = max(peak, d.daemon.cache.residentCount)
                let missing = d.daemon.cache.missing
                if !missing.isEmpty, problems.count < 5 { problems.append("\(what): \(missing) not decoded") }
            }
        }
        run(100, "start")
        for n in 0..<32 {
            _ = d.daemon.answer(.next, grant: .controlSocket)
            run(600, "next \(n)")
        }
        // Far away and back, then swipes both ways (a fling without paging).
        _ = d.daemon.answer(.goto(index: 17, milliseconds: 400), grant: .controlSocket)
        run(800, "goto 17")
        _ = d.daemon.answer(.goto(index: 3, milliseconds: 400), grant: .controlSocket)
        run(800, "goto 3")
        for dx in [-40.0, 40, 40, -40] {
            var t = d.now
            d.daemon.feed(.down(id: 0, at: Point(x: 160, y: 100)), at: t)
            for s in 1...4 {
                t += 16_000
                d.daemon.feed(.move(id: 0, to: Point(x: 160 + Double(s) * dx, y: 100)), at: t)
            }
            d.daemon.feed(.up(id: 0), at: t)
            d.now = t
            run(3000, "swipe \(dx)")
        }
        #expect(!d.daemon.model.isMoving)
        #expect(problems.isEmpty, "\(problems)")
        #expect(peak <= pictures, "\(peak) pictures decoded at once; the screen needs \(pictures)")
        #expect(peak >= 4, "the scroll never wanted the neighbours: \(peak)")
    }
}
