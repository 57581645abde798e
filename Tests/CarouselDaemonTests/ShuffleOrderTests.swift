// [images] order = shuffle in the daemon: the album is reshuffled at every
// rest, and nothing on screen or next to it moves when it is.

@testable import CarouselDaemon
import CarouselCore
import CarouselRender
import Foundation
import Testing

@Suite("[images] order = shuffle in the daemon (offscreen, manual clock)") struct ShuffleOrderTests {
    static let pictures = ["01-mountains.jpg", "02-sunset.jpg", "03-portrait.jpg", "04-panels.png", "05-glow.webp",
                           "more/01-mountains.jpg"]

    func index(_ d: OffscreenDaemon) -> Int { d.daemon.model.currentItemIndex(at: Timestamp(microseconds: d.now)) }

    /// The paths of item `i` and its neighbours (wrapping).
    func around(_ d: OffscreenDaemon, _ i: Int) -> [String] {
        let n = d.daemon.album.count
        return [i - 1, i, i + 1].map { d.daemon.album.paths[(($0 % n) + n) % n] }
    }

    @Test func thePictureOnScreenAndItsNeighboursStayWhileTheRestIsReshuffled() throws {
        let d = try OffscreenDaemon(images: Self.pictures, ini: "[images]\norder = shuffle\nrecursive = true\n")
        let n = d.daemon.album.count
        #expect(n == 6)
        d.advance(ms: 0)
        var orders: Set<[String]> = [d.daemon.album.paths]
        var passes: [[String]] = []
        var pass: [String] = [d.daemon.album.paths[index(d)]]
        for _ in 0..<(n * 12) {
            #expect(d.daemon.perform(.next) == nil)
            d.advance(ms: 20)
            #expect(d.daemon.model.isMoving)
            // Mid-slide: where it is heading, and its neighbours, are what
            // the frames draw and the decoder prepares.
            let target = (index(d) + 1) % n
            let before = around(d, target)
            for _ in 0..<100 { d.advance(ms: 20) }
            #expect(!d.daemon.model.isMoving)
            #expect(index(d) == target)
            // At rest the album was reshuffled around it; nothing drawn moved.
            #expect(around(d, target) == before)
            #expect(d.daemon.statusLine.hasSuffix(before[1]))
            orders.insert(d.daemon.album.paths)
            #expect(Set(d.daemon.album.paths).count == n)
            if target == 0 {
                passes.append(pass)
                pass = []
            }
            pass.append(d.daemon.album.paths[target])
        }
        #expect(orders.count > 5)
        // Every pass from the first slot on shows every picture once, and
        // the seam never repeats one.
        for p in passes.dropFirst() { #expect(p.count == n && Set(p).count == n) }
        for (a, b) in zip(passes, passes.dropFirst()) { #expect(a.last != b.first) }
    }

    @Test func withSeveralPicturesOnScreenNoneOfThemMoves() throws {
        let names = Self.pictures + ["more/02-sunset.jpg", "more/03-portrait.jpg", "more/04-panels.png",
                                     "more/05-glow.webp", "other/01-mountains.jpg", "other/02-sunset.jpg"]
        let d = try OffscreenDaemon(images: names, ini: "[images]\norder = shuffle\nrecursive = true\n"
                                        + "[carousel]\nitem_size = 0.2\n")
        let n = d.daemon.album.count
        #expect(n == 12)
        d.advance(ms: 0)
        var orders: Set<[String]> = []
        for _ in 0..<(n * 3) {
            #expect(d.daemon.perform(.next) == nil)
            for _ in 0..<100 { d.advance(ms: 20) }
            #expect(!d.daemon.model.isMoving)
            // What a frame at rest draws, before and after the reshuffle it
            // made: the same pictures in the same places.
            let x = d.daemon.model.offset(at: Timestamp(microseconds: d.now))
            var placed: [Compositor.Placement] = []
            d.daemon.compositor.placements(offset: x, count: n, wrap: true, into: &placed)
            #expect(placed.count >= 3)
            let drawn = placed.map { d.daemon.album.paths[$0.index] }
            let before = d.daemon.album.paths
            d.daemon.shuffledAt = nil
            d.daemon.reshuffleAtRest()
            #expect(placed.map { d.daemon.album.paths[$0.index] } == drawn)
            orders.insert(before)
            orders.insert(d.daemon.album.paths)
        }
        #expect(orders.count > 5)
    }

    @Test func aFileAddedKeepsTheShuffledOrderOfTheOthers() throws {
        let d = try OffscreenDaemon(images: Self.pictures, ini: "[images]\norder = shuffle\nrecursive = true\n")
        d.advance(ms: 0)
        let before = d.daemon.album.paths
        let shown = before[index(d)]
        try FileManager.default.copyItem(at: demoImages.appendingPathComponent("03-portrait.jpg"),
                                         to: d.folder.appendingPathComponent("images/more/03-portrait.jpg"))
        d.daemon.folderChanged()
        #expect(Array(d.daemon.album.paths.prefix(before.count)) == before)
        #expect(d.daemon.album.paths.last?.hasSuffix("more/03-portrait.jpg") == true)
        #expect(d.daemon.album.paths[index(d)] == shown)
    }
}
