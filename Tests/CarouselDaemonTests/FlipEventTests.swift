// A display whose frames reach the screen later (DRM's page flips): its
// descriptor is watched by the display's service, and the flip event it
// reads frees the pacer for the next frame. The real kernel's side (bochs,
// virtio-gpu in QEMU) is Tests/VM.

import CarouselDaemon
import CarouselDisplay
import CarouselImaging
import CarouselPlatform
import Testing

/// An offscreen panel whose presented frame is on screen only once its
/// "flip event" was read: an eventfd, signalled at each present.
final class FlippingDisplay: DisplayBackend, @unchecked Sendable {
    let inner = OffscreenBackend(size: PixelSize(width: 320, height: 200))
    let flips: Wakeup
    private var inFlight = false
    /// How often the daemon had the events read.
    var dispatched = 0
    init() throws { flips = try Wakeup() }
    var panelSize: PixelSize { inner.panelSize }
    var panelRotation: PanelOrientation { .normal }
    var summary: String { "flipping test display" }
    var connectorName: String { "test" }
    var modeName: String { "320x200" }
    var framePeriodMicroseconds: Int64 { 16_667 }
    var fileDescriptor: Int32? { flips.fd.raw }
    var physicalSize: PhysicalSize? { nil }
    var pixelFormat: PixelFormat { .xrgb8888 }
    var presentsAsynchronously: Bool { true }
    func acquire() -> ScanoutBuffer? { inFlight ? nil : inner.acquire() }
    var isPoweredOn: Bool { inner.isPoweredOn }
    func setPower(on: Bool) throws(DisplayError) { try inner.setPower(on: on) }
    func reserveWindowRoom(_ room: Int, along axis: ScanoutAxis) -> Int { 0 }
    func present(_ buffer: ScanoutBuffer, window: PixelPoint) throws(DisplayError) {
        try inner.present(buffer, window: window)
        inFlight = true
        flips.signal()
    }
    func dispatch() throws(DisplayError) -> Bool {
        dispatched += 1
        flips.acknowledge()
        defer { inFlight = false }
        return inFlight
    }
    func reprobe() throws(DisplayError) -> Bool { false }
    func changeMode(to request: DisplayModeRequest?) throws(DisplayError) -> Bool { false }
    func restore() {}
}

@Suite("A display whose frames reach the screen later") struct FlipEventTests {
    @Test func theFlipEventReadThroughTheDisplaysServiceFreesThePacer() throws {
        let display = try FlippingDisplay()
        let room = try OffscreenDaemon(backend: display)
        room.advance(ms: 0)
        room.daemon.settleDecodes()
        room.advance(ms: 20)
        #expect(display.inner.presented == 1)
        #expect(room.daemon.frames.pacer.framePending, "in flight until its event is read")
        #expect(!room.daemon.frames.firstFrameShown)
        try room.daemon.dispatchDescriptors(timeoutMilliseconds: 1000)
        #expect(display.dispatched == 1)
        #expect(!room.daemon.frames.pacer.framePending)
        #expect(room.daemon.frames.firstFrameShown, "on screen once the flip came")
    }

    @Test func aDisplayThatCameBackIsWatchedInsteadOfTheOneThatWent() throws {
        let first = try FlippingDisplay()
        let second = try FlippingDisplay()
        let room = try OffscreenDaemon(backend: first, reopen: { _ in second })
        room.advance(ms: 0)
        room.daemon.settleDecodes()
        room.advance(ms: 20)
        try room.daemon.dispatchDescriptors(timeoutMilliseconds: 1000)
        #expect(first.dispatched == 1)
        room.daemon.displayWentAway("its card was removed")
        room.daemon.displayMayBeBack()
        #expect(!room.daemon.displayIsAway)
        room.advance(ms: 20)
        #expect(second.inner.presented == 1)
        try room.daemon.dispatchDescriptors(timeoutMilliseconds: 1000)
        #expect(second.dispatched == 1 && first.dispatched == 1)
        #expect(!room.daemon.frames.pacer.framePending)
    }
}
