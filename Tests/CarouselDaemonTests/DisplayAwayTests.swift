// A display whose device goes away while the daemon runs (its driver
// unbound, the module unloaded): the carousel runs on without drawing and
// draws again on the display that comes back. The real kernel's side
// (bochs unbound and bound in QEMU) is Tests/VM/faults.py.

import CarouselConfig
import CarouselCore
import CarouselDaemon
import CarouselDisplay
import CarouselImaging
import Foundation
import Testing

/// A display whose device was unplugged: presenting fails with ENODEV's
/// reason, as DRM's ioctls do after an unbind.
final class UnpluggedDisplay: DisplayBackend {
    let inner = OffscreenBackend(size: PixelSize(width: 320, height: 200))
    var presents = 0
    var panelSize: PixelSize { inner.panelSize }
    var panelRotation: PanelOrientation { .normal }
    var summary: String { "unplugged test display" }
    var connectorName: String { "test" }
    var modeName: String { "320x200" }
    var framePeriodMicroseconds: Int64 { 16_667 }
    var fileDescriptor: Int32? { nil }
    var physicalSize: PhysicalSize? { nil }
    var pixelFormat: PixelFormat { .xrgb8888 }
    var presentsAsynchronously: Bool { false }
    func acquire() -> ScanoutBuffer? { inner.acquire() }
    var isPoweredOn: Bool { inner.isPoweredOn }
    func setPower(on: Bool) throws(DisplayError) { try inner.setPower(on: on) }
    func reserveWindowRoom(_ room: Int, along axis: ScanoutAxis) -> Int { 0 }
    func present(_ buffer: ScanoutBuffer, window: PixelPoint) throws(DisplayError) {
        presents += 1
        throw DisplayError("drmModeAtomicCommit on /dev/dri/card0: No such device", reason: .gone)
    }
    func dispatch() throws(DisplayError) -> Bool { false }
    func reprobe() throws(DisplayError) -> Bool { false }
    func changeMode(to request: DisplayModeRequest?) throws(DisplayError) -> Bool { false }
    func restore() {}
}

/// How often the daemon tried to open the display again.
final class Attempts: @unchecked Sendable { var count = 0 }

@Suite("A display that goes away and comes back") struct DisplayAwayTests {
    @Test func theCarouselRunsOnWithoutTheDisplayAndDrawsOnTheOneThatCameBack() throws {
        let attempts = Attempts()
        let room = try OffscreenDaemon(reopen: { _ in
            attempts.count += 1
            // The first card event is not ours yet (udev also reports connectors).
            if attempts.count == 1 { throw DisplayError("no DRM device /dev/dri/card0", reason: .noDevice) }
            return OffscreenBackend(size: PixelSize(width: 640, height: 400))
        })
        let d = room.daemon
        d.settleDecodes()
        room.advance(ms: 20)
        let drawn = room.backend.presented
        #expect(drawn > 0)

        d.displayWentAway("its card was removed")
        #expect(d.displayIsAway)
        #expect(d.backend.summary.contains("went away"))
        #expect(d.backend.panelSize == PixelSize(width: 320, height: 200))
        // Commands still move the model; nothing is drawn, nothing is lost.
        #expect(d.perform(.next) == nil)
        for _ in 0..<100 { room.advance(ms: 20) }
        #expect(d.status()["index"] == .int(1))
        #expect(room.backend.presented == drawn)

        d.displayMayBeBack()
        #expect(attempts.count == 1)
        #expect(d.displayIsAway)

        d.displayMayBeBack()
        #expect(!d.displayIsAway)
        let fresh = try #require(d.backend as? OffscreenBackend)
        #expect(d.layout.size == PixelSize(width: 640, height: 400))
        d.settleDecodes()
        room.advance(ms: 20)
        #expect(fresh.presented > 0)
        #expect(d.status()["index"] == .int(1))
    }

    @Test func presentingOnAnUnpluggedDeviceSwapsInTheStandInInsteadOfRetrying() throws {
        let unplugged = UnpluggedDisplay()
        let room = try OffscreenDaemon(backend: unplugged)
        let d = room.daemon
        d.settleDecodes()
        for _ in 0..<50 { room.advance(ms: 20) }
        #expect(unplugged.presents == 1)
        #expect(d.displayIsAway)
        // Without a way to open a display again, commands still work.
        #expect(d.perform(.next) == nil)
        d.displayMayBeBack()
        #expect(d.displayIsAway)
    }
}
