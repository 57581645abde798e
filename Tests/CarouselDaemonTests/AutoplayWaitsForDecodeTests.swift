// Autoplay slides on only to a picture that can be shown: at its moment it
// waits on the picture on screen while the next one is still being decoded
// (a 4K picture under emulation took longer than the 2 s interval, and the
// carousel slid onto a blank page), then slides as soon as it is ready.

import CarouselCore
@testable import CarouselDaemon
import CarouselRender
import Dispatch
import Foundation
import Testing

@Suite("autoplay waits for the next picture's decode")
struct AutoplayWaitsForDecodeTests {
    @Test("the moment passes on the picture on screen while the next is decoded; it slides once that is ready")
    func waitsThenSlides() throws {
        let gate = DispatchSemaphore(value: 0)
        let d = try OffscreenDaemon(prepare: { key, settings in
            // The second picture's decode is held until the test lets it go.
            if key.first.hasSuffix("02-sunset.jpg") {
                gate.wait()
                gate.signal()
            }
            return try ItemCache.prepare(key, settings: settings)
        })
        defer { gate.signal() }
        let first = try #require(d.daemon.album.key(0)), second = try #require(d.daemon.album.key(1))
        // The first picture on screen (the decoder is serial: it comes first).
        // (A generous limit: the held decode is the second one, never this.)
        for _ in 0..<6000 where d.daemon.cache.missing.contains(first) { usleep(10_000) }
        d.daemon.decodesFinished()
        d.advance(ms: 10)
        #expect(d.daemon.cache.image(for: first) != nil)
        #expect(d.daemon.cache.missing.contains(second))
        _ = d.daemon.answer(.set(key: "autoplay.interval", value: "2"), grant: .controlSocket)
        _ = d.daemon.answer(.resume, grant: .controlSocket)
        func index() -> Int { d.daemon.model.currentItemIndex(at: Timestamp(microseconds: d.now)) }
        let moment = try #require(d.daemon.model.autoplayStatus.next)
        // Past the moment: still the first picture, at rest, and the latest
        // it waits to is one interval (2 s) after the moment.
        while d.now < moment.microseconds + 500_000 { d.advance(ms: 100) }
        #expect(index() == 0 && d.daemon.model.motionState == .idle)
        #expect(d.daemon.model.upcomingAutoplayItem == 1 && !d.daemon.model.isUpcomingReady)
        #expect(d.daemon.model.autoplayStatus.next == moment.adding(seconds: 2))
        // Ready: it slides at once.
        gate.signal()
        d.daemon.settleDecodes()
        d.advance(ms: 10)
        #expect(d.daemon.model.motionState == .animating)
        for _ in 0..<10 { d.advance(ms: 100) }
        #expect(index() == 1)
    }
}
