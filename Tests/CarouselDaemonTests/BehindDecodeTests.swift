import CarouselCore
import Testing
@testable import CarouselDaemon

/// The picture behind the first waits for the carousel's first motion: at
/// start it is the page nothing shows unless a finger drags back.
@Suite("The picture behind the first")
struct BehindDecodeTests {
    @Test("at start the picture behind the first is not decoded; once the carousel moved (a drag that springs back), it is")
    func thePictureBehindWaitsForTheFirstMotion() throws {
        let d = try OffscreenDaemon(images: ["01-mountains.jpg", "02-sunset.jpg", "03-portrait.jpg", "04-panels.png"])
        d.showFirstPicture()
        let paths = (0..<4).compactMap { d.daemon.album.key($0) }
        #expect(paths.count == 4)
        #expect(d.daemon.cache.image(for: paths[0]) != nil, "the first picture")
        #expect(d.daemon.cache.image(for: paths[1]) != nil, "the one ahead")
        #expect(d.daemon.cache.image(for: paths[3]) == nil, "the one behind (wrap): not yet")
        // A short drag that springs back: the carousel moved, the page did not.
        d.daemon.carryOut(.touch(.down(id: 0, at: .init(x: 100, y: 100)), time: d.now))
        for k in 1...4 {
            d.advance(ms: 16)
            d.daemon.carryOut(.touch(.move(id: 0, to: .init(x: 100 + Double(k) * 8, y: 100)), time: d.now))
        }
        // Held still before lifting: no fling.
        for _ in 0..<20 { d.advance(ms: 16) }
        d.daemon.carryOut(.touch(.up(id: 0), time: d.now))
        for _ in 0..<60 { d.advance(ms: 16) }
        d.daemon.settleDecodes()
        #expect(d.daemon.status()["index"] == .int(0))
        #expect(d.daemon.cache.image(for: paths[3]) != nil, "the one behind, once the carousel moved")
    }
}
