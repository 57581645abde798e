import Testing
import CarouselDisplay
@testable import CarouselDRM

/// drm-test's options as typed, read by the DRM room: the messages are the
/// ones the command has always printed (the VM scripts and people read them).
@Suite("drm-test's options")
struct FlipTestOptionTests {
    /// drm-test's defaults, but for the values given.
    private func test(mode: String? = nil, api: String = "auto", frames: Int = 120, switchMode: String? = nil,
                      windowAxis: String = "horizontal", windows: String = "0,0", measureMoves: Int = 0,
                      windowSwitchMode: String? = nil) throws(DRMFlipTest.OptionError) -> DRMFlipTest {
        try DRMFlipTest(device: nil, connector: nil, mode: mode, api: api, frames: frames, holdMilliseconds: 0,
                        afterRestoreMilliseconds: 0, switchMode: switchMode, reprobe: false, restoreInFlight: false,
                        windowRoom: nil, windowAxis: windowAxis, windows: windows, step: false, uncheckedWindows: false,
                        measureMoves: measureMoves, windowSwitchMode: windowSwitchMode, waitSeconds: 0)
    }

    /// The message the options are refused with; nil if they are not.
    private func message(_ make: () throws -> DRMFlipTest) -> String? {
        do {
            _ = try make()
            return nil
        } catch let error as DRMFlipTest.OptionError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test("good values are read into the test")
    func readsValues() throws {
        let t = try test(mode: "1280x800", api: "legacy", switchMode: "1024x768@60", windowAxis: "vertical",
                         windows: "0,0;1,0;333,-2", windowSwitchMode: "800x600")
        #expect(t.mode == DisplayModeRequest(width: 1280, height: 800))
        #expect(t.switchMode == DisplayModeRequest(width: 1024, height: 768, refresh: 60))
        #expect(t.windowSwitchMode == DisplayModeRequest(width: 800, height: 600))
        #expect(t.api == .legacy)
        #expect(t.windowAxis == .vertical)
        #expect(t.windows == [PixelPoint(x: 0, y: 0), PixelPoint(x: 1, y: 0), PixelPoint(x: 333, y: -2)])
    }

    @Test("each bad value is named with what it takes")
    func messages() {
        let mode = "expected WIDTHxHEIGHT or WIDTHxHEIGHT@HZ"
        #expect(message { try test(mode: "0x600") } == "--mode: \(mode), not '0x600'")
        #expect(message { try test(switchMode: "big") } == "--switch-mode: \(mode), not 'big'")
        #expect(message { try test(windowSwitchMode: "1x1@0") }
                == "--window-switch-mode: \(mode), not '1x1@0'")
        #expect(message { try test(api: "fast") }
                == "--api: expected auto, atomic or legacy, not 'fast'")
        #expect(message { try test(frames: 0) } == "--frames: at least 1")
        #expect(message { try test(windowAxis: "diagonal") }
                == "--window-axis: expected horizontal or vertical, not 'diagonal'")
        #expect(message { try test(windows: "1;2") } == "--windows: expected X,Y;X,Y..., not '1;2'")
        #expect(message { try test(windows: "") } == "--windows: expected X,Y;X,Y..., not ''")
        #expect(message { try test(measureMoves: -1) } == "--measure-moves: at least 0")
    }

    @Test("the first bad value in the command's order is the one named")
    func order() {
        #expect(message { try test(mode: "x", switchMode: "y") }?.hasPrefix("--switch-mode") == true)
        #expect(message { try test(api: "x", frames: 0) }?.hasPrefix("--api") == true)
        #expect(message { try test(measureMoves: -1, windowSwitchMode: "x") }?
                    .hasPrefix("--measure-moves") == true)
    }
}
