import Foundation
import Testing
import CarouselCore
import CarouselDisplay
import CarouselImaging
import CarouselRender
@testable import CarouselDaemon

/// The daemon's frame path (issue 11): slides move the scan-out window where
/// the display allows it, and a display that refuses windows gets whole
/// frames; the screen is right at every frame either way.
@Suite("The daemon's frame path: window slides and their fallback")
struct FramePathTests {
    /// Pixels of the screen that differ from `frame`.
    static func differences(_ display: OffscreenBackend, _ frame: Frame) -> Int {
        var n = 0
        for y in 0..<frame.height {
            for x in 0..<frame.width where display.pixel(x: x, y: y) != frame.row(y)[x] | 0xFF00_0000 { n += 1 }
        }
        return n
    }

    /// What the screen should show now: the daemon's scene written whole.
    static func expected(_ d: Daemon) -> Frame {
        let f = Frame(width: d.compositor.panel.width, height: d.compositor.panel.height, color: 0xFF12_3456)
        ScreenWriter(compositor: d.compositor).render(d.frames.writer.scene, into: f)
        return f
    }

    /// `next`, then the slide frame by frame: the screen, the window, what was written.
    static func slide(_ d: OffscreenDaemon, display: OffscreenBackend) -> (windows: Set<PixelPoint>, written: [Int], wrong: Int) {
        _ = d.daemon.answer(.next, grant: .controlSocket)
        var windows = Set<PixelPoint>(), written: [Int] = [], wrong = 0
        var last = d.daemon.frames.pacer.framesPresented
        for _ in 0..<120 {
            d.advance(ms: 10)
            guard d.daemon.frames.pacer.framesPresented != last else { continue }
            last = d.daemon.frames.pacer.framesPresented
            windows.insert(display.window)
            written.append(d.daemon.frames.writer.pixelsWritten)
            wrong += differences(display, expected(d.daemon))
        }
        return (windows, written, wrong)
    }

    @Test("a slide on a display with room moves the window: two buffers written once, then only the dots",
          arguments: [0, 90])
    func aSlideMovesTheWindow(rotation: Int) throws {
        let d = try OffscreenDaemon(ini: "[display]\nrotation = \(rotation)\n")
        d.advance(ms: 0)
        d.daemon.settleDecodes()
        d.advance(ms: 20)
        d.advance(ms: 20)
        #expect(d.daemon.frames.windowRoom == 2 * d.daemon.compositor.axisExtent)
        let result = Self.slide(d, display: d.backend)
        #expect(result.wrong == 0)
        #expect(result.windows.count > 10, "the window moved: \(result.windows.count) positions")
        #expect(result.written.count > 10)
        let full = 320 * 200
        #expect(result.written.filter { $0 >= full / 2 }.count <= 2, "\(result.written)")
        #expect(d.daemon.status()["index"] == .int(1))
        // At rest, the last frame is the picture written whole.
        #expect(Self.differences(d.backend, Self.expected(d.daemon)) == 0)
    }

    @Test("the first frame goes into the buffer on screen (the display's black), and the screen is right")
    func theFirstFrameGoesIntoTheShownBuffer() throws {
        let d = try OffscreenDaemon()
        #expect(d.backend.frontIndex == 1 && d.backend.presented == 0)
        d.advance(ms: 0)
        d.daemon.settleDecodes()
        var last = d.daemon.frames.pacer.framesPresented
        for _ in 0..<20 where last == 0 {
            d.advance(ms: 20)
            last = d.daemon.frames.pacer.framesPresented
        }
        #expect(d.backend.presented == 1)
        #expect(d.backend.frontIndex == 1, "the first frame was presented from the buffer that showed black")
        #expect(Self.differences(d.backend, Self.expected(d.daemon)) == 0)
        // The next frames take turns as before.
        _ = d.daemon.answer(.next, grant: .controlSocket)
        for _ in 0..<100 { d.advance(ms: 10) }
        #expect(d.daemon.status()["index"] == .int(1))
        #expect(Self.differences(d.backend, Self.expected(d.daemon)) == 0)
    }

    @Test("without dots, slides lay each picture out once, beside the one on screen: the screen is right at every frame")
    func slidesWithoutDotsWriteBeside() throws {
        let d = try OffscreenDaemon(images: ["01-mountains.jpg", "02-sunset.jpg", "03-portrait.jpg", "04-panels.png", "05-glow.webp"],
                                    ini: "[indicator]\nenabled = false\n")
        d.advance(ms: 0)
        d.daemon.settleDecodes()
        d.advance(ms: 20)
        d.advance(ms: 20)
        #expect(d.daemon.frames.windowRoom == 2 * d.daemon.compositor.axisExtent)
        var perSlide: [Int] = []
        for _ in 0..<5 {
            d.daemon.settleDecodes()
            let result = Self.slide(d, display: d.backend)
            #expect(result.wrong == 0)
            #expect(result.windows.count > 10, "the window moved: \(result.windows.count) positions")
            perSlide.append(result.written.reduce(0, +))
        }
        #expect(d.daemon.status()["index"] == .int(0), "five slides round the album of five")
        // The picture coming in, beside the one at rest (1 screen), or both
        // where the buffer ends (2); into both buffers it was 4.
        let full = 320 * 200
        #expect(perSlide.allSatisfy { $0 <= 2 * full }, "\(perSlide)")
        #expect(perSlide.reduce(0, +) <= 8 * full, "\(perSlide)")
    }

    @Test("a zoomed picture pushed past its edge drags the pages with whole frames, no window slide; unzoomed, the window moves again")
    func aZoomedHandoverWritesFramesInPlace() throws {
        let d = try OffscreenDaemon()
        d.advance(ms: 0)
        d.daemon.settleDecodes()
        d.advance(ms: 20)
        d.advance(ms: 20)
        #expect(d.daemon.frames.windowRoom == 2 * d.daemon.compositor.axisExtent)
        #expect(d.daemon.perform(.zoom(scale: 2)) == nil)
        for _ in 0..<100 { d.advance(ms: 10) }
        d.daemon.settleDecodes()
        d.advance(ms: 20)
        #expect(d.daemon.model.zoomScale(at: Timestamp(microseconds: d.now)) == 2)
        #expect(Self.differences(d.backend, Self.expected(d.daemon)) == 0)
        // One finger from the right: 80 px to the picture's edge, then the pages move.
        var x = 300.0
        d.daemon.feed(.down(id: 0, at: Point(x: x, y: 100)), at: d.now)
        var windows = Set<PixelPoint>(), wrong = 0, frames = 0
        var last = d.daemon.frames.pacer.framesPresented
        for _ in 0..<30 {
            d.advance(ms: 10)
            x -= 8
            d.daemon.feed(.move(id: 0, to: Point(x: x, y: 100)), at: d.now)
            d.advance(ms: 1)
            guard d.daemon.frames.pacer.framesPresented != last else { continue }
            last = d.daemon.frames.pacer.framesPresented
            frames += 1
            windows.insert(d.backend.window)
            wrong += Self.differences(d.backend, Self.expected(d.daemon))
        }
        #expect(d.daemon.model.isDragging, "the pan handed over to paging")
        #expect(d.daemon.frames.writer.scene.spans.contains { $0.zoom != nil })
        #expect(frames > 5)
        #expect(wrong == 0)
        #expect(windows == [PixelPoint(x: 0, y: 0)], "no window slide while zoomed: \(windows)")
        // Flicked on: the settle to the next page still shows the zoomed picture sliding out.
        for _ in 0..<3 {
            d.advance(ms: 10)
            x -= 30
            d.daemon.feed(.move(id: 0, to: Point(x: x, y: 100)), at: d.now)
        }
        d.daemon.feed(.up(id: 0), at: d.now)
        var settleFrames = 0
        for _ in 0..<150 {
            d.advance(ms: 10)
            guard d.daemon.frames.pacer.framesPresented != last else { continue }
            last = d.daemon.frames.pacer.framesPresented
            if d.daemon.frames.writer.scene.spans.contains(where: { $0.zoom != nil }) {
                settleFrames += 1
                windows.insert(d.backend.window)
                // Nothing laid out ahead: at most the panel (and the dots) a frame.
                #expect(d.daemon.frames.writer.pixelsWritten <= 320 * 200 * 12 / 10, "\(d.daemon.frames.writer.pixelsWritten) pixels")
                #expect(d.daemon.frames.writer.scene.low == 0 && d.daemon.frames.writer.scene.high == 320)
            }
            wrong += Self.differences(d.backend, Self.expected(d.daemon))
        }
        #expect(settleFrames > 5)
        #expect(wrong == 0)
        #expect(windows == [PixelPoint(x: 0, y: 0)], "no window slide while zoomed: \(windows)")
        #expect(d.daemon.status()["index"] == .int(1))
        #expect(d.daemon.model.zoomView(at: Timestamp(microseconds: d.now)) == nil)
        #expect(Self.differences(d.backend, Self.expected(d.daemon)) == 0)
        // Nothing zoomed: the next slide moves the window again.
        let result = Self.slide(d, display: d.backend)
        #expect(result.wrong == 0)
        #expect(result.windows.count > 10)
    }

    @Test("zero_copy = false, set while running: panel-sized buffers and whole frames; true again: the window moves")
    func zeroCopyOff() throws {
        let d = try OffscreenDaemon()
        d.advance(ms: 0)
        d.daemon.settleDecodes()
        d.advance(ms: 20)
        d.advance(ms: 20)
        #expect(d.daemon.frames.windowRoom > 0)
        guard case .ok = d.daemon.set("display.zero_copy", "false") else {
            Issue.record("set display.zero_copy false was refused")
            return
        }
        d.advance(ms: 20)  // taken before the next frame is drawn
        #expect(d.daemon.frames.windowRoom == 0)
        #expect(d.backend.acquire()?.extent == PixelSize(width: 320, height: 200))
        let off = Self.slide(d, display: d.backend)
        #expect(off.wrong == 0 && off.windows == [.zero])
        guard case .ok = d.daemon.set("display.zero_copy", "true") else {
            Issue.record("set display.zero_copy true was refused")
            return
        }
        let on = Self.slide(d, display: d.backend)
        #expect(on.wrong == 0 && on.windows.count > 10)
    }

    /// An offscreen display whose driver grants room but refuses to show
    /// any window but the buffer's start (as a kernel refusing an offset).
    final class RefusingDisplay: DisplayBackend {
        let inner: OffscreenBackend
        var refusals = 0
        init(_ inner: OffscreenBackend) { self.inner = inner }
        var panelSize: PixelSize { inner.panelSize }
        var panelRotation: PanelOrientation { inner.panelRotation }
        var summary: String { "refusing " + inner.summary }
        var connectorName: String { inner.connectorName }
        var modeName: String { inner.modeName }
        var framePeriodMicroseconds: Int64 { inner.framePeriodMicroseconds }
        var fileDescriptor: Int32? { nil }
        var physicalSize: PhysicalSize? { nil }
        var pixelFormat: PixelFormat { .xrgb8888 }
        var presentsAsynchronously: Bool { false }
        func acquire() -> ScanoutBuffer? { inner.acquire() }
        var isPoweredOn: Bool { inner.isPoweredOn }
        func setPower(on: Bool) throws(DisplayError) { try inner.setPower(on: on) }
        func reserveWindowRoom(_ room: Int, along axis: ScanoutAxis) -> Int { inner.reserveWindowRoom(room, along: axis) }
        func present(_ buffer: ScanoutBuffer, window: PixelPoint) throws(DisplayError) {
            guard window == .zero else {
                refusals += 1
                throw DisplayError("test display refuses the window at \(window)", reason: .windowRefused)
            }
            try inner.present(buffer, window: window)
        }
        func dispatch() throws(DisplayError) -> Bool { false }
        func reprobe() throws(DisplayError) -> Bool { false }
        func changeMode(to request: DisplayModeRequest?) throws(DisplayError) -> Bool { false }
        func restore() {}
    }

    @Test("a display that refuses a window: with one screen of room asked again, then whole frames, and the screen stays right")
    func aRefusedWindowFallsBackToWholeFrames() throws {
        let display = OffscreenBackend(size: PixelSize(width: 320, height: 200))
        let refusing = RefusingDisplay(display)
        let d = try OffscreenDaemon(backend: refusing)
        d.advance(ms: 0)
        d.daemon.settleDecodes()
        d.advance(ms: 20)
        d.advance(ms: 20)
        let result = Self.slide(d, display: display)
        // Two screens of room refused, then one (a DRM display that held
        // only the shorter buffers would show it), then none.
        #expect(refusing.refusals == 2)
        #expect(d.daemon.frames.windowRoom == 0)
        #expect(result.wrong == 0)
        #expect(result.windows == [.zero])
        #expect(result.written.count > 10)
        #expect(d.daemon.status()["index"] == .int(1))
        #expect(Self.differences(display, Self.expected(d.daemon)) == 0)
    }

}
