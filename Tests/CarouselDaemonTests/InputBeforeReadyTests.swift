// "first frame on screen" (and READY=1) means touch works too: input opens
// with the first frame handed to the display, before the line is said,
// also on a display whose frames are on screen at once (offscreen, fbdev,
// DRM without vblank). The e2e scenarios drag right after the line.

import CarouselDaemon
import CarouselLoop
import Testing

/// Notes whether the first frame was already said to be on screen when the
/// loop told its services it was handed to the display.
private final class FirstFrameSpy: LoopService {
    let name = "first-frame spy"
    let subscriptions: LoopHappening.Kinds = .firstFramePresented
    unowned let daemon: Daemon
    var toldAfterShown: Bool?
    init(daemon: Daemon) { self.daemon = daemon }
    func observe(_ happening: LoopHappening, now: Int64) {
        if case .firstFramePresented = happening { toldAfterShown = daemon.frames.firstFrameShown }
    }
}

@Test("services hear of the first frame (input opens) before it is said to be on screen, on a display that shows it at once")
func inputOpensBeforeTheFirstFrameLine() throws {
    let d = try OffscreenDaemon()
    #expect(!d.backend.presentsAsynchronously)
    let spy = FirstFrameSpy(daemon: d.daemon)
    d.daemon.register { _ in spy }
    d.showFirstPicture()
    #expect(d.daemon.frames.firstFrameShown)
    #expect(spy.toldAfterShown == false, "told \(spy.toldAfterShown.map { $0 ? "after" : "before" } ?? "never")")
}
