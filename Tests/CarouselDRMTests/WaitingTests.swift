import Testing
import CarouselDisplay
@testable import CarouselDRM
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

@Suite("Whether a display error is worth waiting for")
struct WaitingTests {
    @Test("no device and no display connected are worth waiting, whatever their hint says")
    func decidedByReason() {
        var noDevice = DRMErrors.noDevice("/dev/dri")
        var notConnected = DRMErrors.noDisplayConnected("/dev/dri/card0", connectors: ["HDMI-A-1"])
        #expect(DRMBackend.isWorthWaiting(noDevice))
        #expect(DRMBackend.isWorthWaiting(notConnected))
        // Rewording a hint (or translating it) must not change what the daemon does.
        noDevice.hint = "load the display driver"
        notConnected.hint = nil
        #expect(noDevice.reason == .noDevice)
        #expect(notConnected.reason == .notConnected)
        #expect(DRMBackend.isWorthWaiting(noDevice))
        #expect(DRMBackend.isWorthWaiting(notConnected))
    }

    @Test("other failures are not worth waiting, even with a waiting hint's text")
    func otherErrors() {
        #expect(!DRMBackend.isWorthWaiting(DRMErrors.notMaster("/dev/dri/card0")))
        #expect(DRMErrors.notMaster("/dev/dri/card0").reason == .busy)
        let denied = DRMErrors.failed(SystemCallError(call: "open", errno: EACCES), device: "/dev/dri/card0")
        #expect(denied.reason == .permission)
        #expect(!DRMBackend.isWorthWaiting(denied))
        // Text alone decides nothing: an error that only borrows the hint is not waited for.
        let lookalike = DisplayError("drmModeSetCrtc on /dev/dri/card0: Invalid argument", hint: DRMErrors.notConnectedHint)
        #expect(lookalike.reason == .other)
        #expect(!DRMBackend.isWorthWaiting(lookalike))
        #expect(!DRMBackend.isWorthWaiting(DisplayError("something else")))
    }

    @Test("equality still compares message, hint and reason")
    func equatable() {
        #expect(DisplayError("a", hint: "b") == DisplayError("a", hint: "b"))
        #expect(DisplayError("a", hint: "b", reason: .noDevice) != DisplayError("a", hint: "b"))
        #expect(DRMErrors.noDevice("/dev/dri") == DRMErrors.noDevice("/dev/dri"))
    }
}
