// Start-up: the first picture comes as early as the machine allows, so the
// start item is decoded while the rest of the daemon is still being set up.

import CarouselCore
@testable import CarouselDaemon
import Testing

@Suite("Start-up: the start picture first")
struct StartPictureTests {
    @Test("the start item is being decoded when the daemon is built, before the loop draws a first frame")
    func startPictureIsAskedForAtOnce() throws {
        let d = try OffscreenDaemon(ini: "[carousel]\nstart_index = 2\n")
        #expect(d.daemon.frames.pacer.framesPresented == 0)
        d.daemon.cache.waitUntilIdle()
        let start = try #require(d.daemon.album.path(2))
        #expect(d.daemon.cache.image(for: PageKey(start)) != nil, "nothing asked for \(start) before the first frame")
    }
}
