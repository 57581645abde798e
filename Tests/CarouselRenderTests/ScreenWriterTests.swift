import Testing
import CarouselCore
import CarouselDisplay
import CarouselImaging
@testable import CarouselRender

/// The one-pass writer (issue 11): every rotation written in panel
/// orientation from pre-turned items equals the upright frame turned; and
/// frames written into the same buffers again (only what changed, the
/// scan-out window moved over laid-out content) always show exactly what a
/// frame written whole shows.
@Suite("ScreenWriter: one pass, any rotation, only what changed")
struct ScreenWriterTests {
    /// A small deterministic generator (the tests must repeat).
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state >> 11
        }
        mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }
        mutating func double(_ range: ClosedRange<Double>) -> Double {
            range.lowerBound + Double(next() % 1_000_000) / 1_000_000 * (range.upperBound - range.lowerBound)
        }
        mutating func bool() -> Bool { next() & 1 == 1 }
    }

    /// A carousel set up at random: layout, rotation, dots and pictures.
    struct Setup {
        var settings = CarouselSettings()
        var style = RenderStyle()
        var rotation = Rotation.none
        var panel = PixelSize(width: 64, height: 40)
        var count = 5

        static func random(_ r: inout Random) -> Setup {
            var s = Setup()
            s.settings.wrap = r.bool()
            s.settings.vertical = r.int(0...3) == 0
            s.settings.alignment = r.bool() ? .center : .edge
            s.settings.itemSize = r.bool() ? .fraction(1.0) : .fraction(r.double(0.4...1.0))
            s.settings.spacing = r.bool() ? 0 : Double(r.int(0...9))
            s.rotation = Rotation.allCases[r.int(0...3)]
            s.panel = PixelSize(width: r.int(24...70), height: r.int(16...50))
            s.count = r.int(0...6)
            s.style.background = PixelColor(red: UInt8(r.int(0...255)), green: 40, blue: 90)
            s.style.indicator.position = [.bottom, .top, .left, .right][r.int(0...3)]
            s.style.indicator.size = Double(r.int(2...7))
            s.style.indicator.spacing = Double(r.int(0...5))
            s.style.indicator.margin = Double(r.int(1...6))
            s.style.indicator.enabled = r.int(0...4) > 0
            return s
        }

        var logicalSize: PixelSize {
            let l = rotation.logicalSize(panelWidth: panel.width, panelHeight: panel.height)
            return PixelSize(width: l.width, height: l.height)
        }

        func compositor(rotation: Rotation) -> Compositor {
            let l = logicalSize
            let geometry = Geometry(viewport: Viewport(width: Double(l.width), height: Double(l.height)), settings: settings)
            return Compositor(geometry: geometry, style: style, rotation: rotation)
        }

        /// Item `i`'s upright picture: distinct in every pixel and item.
        func pictures(_ compositor: Compositor) -> [DecodedImage] {
            let size = compositor.itemPixelSize
            return (0..<max(count, 1)).map { i in
                try! DecodedImage(width: size.width, height: size.height, format: .xrgb8888) { raw, stride in
                    for y in 0..<size.height {
                        let row = (raw.baseAddress! + y * stride).assumingMemoryBound(to: UInt32.self)
                        for x in 0..<size.width { row[x] = 0xFF00_0000 | UInt32(i + 1) << 20 | UInt32(y) << 10 | UInt32(x) }
                    }
                }
            }
        }
    }

    static func frame(_ compositor: Compositor, _ scene: CarouselRender.Scene) -> Frame {
        let f = Frame(width: compositor.panel.width, height: compositor.panel.height, color: 0xDEAD_BEEF)
        ScreenWriter(compositor: compositor).render(scene, into: f)
        return f
    }

    static func differences(_ a: Frame, _ b: UnsafeRawPointer, stride: Int) -> Int {
        var n = 0
        for y in 0..<a.height {
            let row = (b + y * stride).assumingMemoryBound(to: UInt32.self)
            for x in 0..<a.width where a.row(y)[x] | 0xFF00_0000 != row[x] | 0xFF00_0000 { n += 1 }
        }
        return n
    }

    @Test("every rotation written from turned items equals the upright frame turned (200 random layouts)")
    func rotationsEqualTheUprightFrameTurned() throws {
        var r = Random(state: 11)
        for round in 0..<200 {
            let setup = Setup.random(&r)
            let upright = setup.compositor(rotation: .none)
            let turned = setup.compositor(rotation: setup.rotation)
            let pictures = setup.pictures(upright)
            let panelPictures = try pictures.map { try $0.turned(setup.rotation) }
            let missing = r.int(-1...setup.count)  // one item not decoded yet, or none
            let offset = r.double(-1.5...Double(setup.count) + 0.5)
            let pages = max(setup.count, 1)
            let page = r.int(0...pages - 1)
            var logicalScene = CarouselRender.Scene(), panelScene = CarouselRender.Scene()
            upright.layOut(&logicalScene, offset: offset, count: setup.count, wrap: setup.settings.wrap, page: page,
                           pageCount: setup.count) { $0 == missing ? nil : pictures[$0] }
            turned.layOut(&panelScene, offset: offset, count: setup.count, wrap: setup.settings.wrap, page: page,
                          pageCount: setup.count) { $0 == missing ? nil : panelPictures[$0] }
            let logical = Self.frame(upright, logicalScene)
            let expected = Frame(width: setup.panel.width, height: setup.panel.height)
            Scanout.write(logical, rotation: setup.rotation, to: UnsafeMutableRawPointer(expected.pixels),
                          stride: expected.stride, panelWidth: setup.panel.width, panelHeight: setup.panel.height)
            let actual = Self.frame(turned, panelScene)
            let wrong = Self.differences(expected, UnsafeRawPointer(actual.pixels), stride: actual.stride)
            #expect(wrong == 0, "round \(round): rotation \(setup.rotation.rawValue), \(setup.panel), vertical \(setup.settings.vertical), offset \(offset): \(wrong) pixels differ")
            if wrong > 0 { return }
        }
    }

    @Test("a screenshot turned upright is the upright frame", arguments: Rotation.allCases)
    func uprightUndoesTheTurn(rotation: Rotation) {
        let upright = Frame(width: 7, height: 4)
        for y in 0..<4 { for x in 0..<7 { upright.row(y)[x] = 0xFF00_0000 | UInt32(y * 16 + x) } }
        let panelSize = rotation == .clockwise90 || rotation == .clockwise270 ? (4, 7) : (7, 4)
        let panel = Frame(width: panelSize.0, height: panelSize.1)
        Scanout.write(upright, rotation: rotation, to: UnsafeMutableRawPointer(panel.pixels), stride: panel.stride,
                      panelWidth: panel.width, panelHeight: panel.height)
        let back = panel.upright(from: rotation)
        #expect(back.width == 7 && back.height == 4)
        #expect(Self.differences(upright, UnsafeRawPointer(back.pixels), stride: back.stride) == 0)
    }

    /// Frames into an offscreen display (two buffers, with or without room):
    /// what it shows must equal the same scene written whole.
    final class Session {
        let setup: Setup
        let compositor: Compositor
        let writer: ScreenWriter
        let display: OffscreenBackend
        let room: Int
        var pictures: [DecodedImage]
        var decoded: Set<Int>
        /// Items in the album (the folder may fill up).
        var count: Int
        var frames = 0
        /// Frames written beside the window on screen.
        var besideFrames = 0

        /// Frames try the buffer on screen first (`drawBeside`), as the daemon does.
        let beside: Bool

        /// `screens`: the room asked for, in panel lengths along the axis.
        init(_ setup: Setup, room wanted: Bool, screens: Int = 1, beside: Bool = false, decoded: Set<Int>? = nil) throws {
            self.setup = setup
            self.beside = beside
            compositor = setup.compositor(rotation: setup.rotation)
            writer = ScreenWriter(compositor: compositor)
            display = OffscreenBackend(size: setup.panel)
            room = wanted ? display.reserveWindowRoom(screens * compositor.axisExtent, along: writer.axis) : 0
            let upright = setup.compositor(rotation: .none)
            pictures = try setup.pictures(upright).map { try $0.turned(setup.rotation) }
            count = setup.count
            self.decoded = decoded ?? Set(0..<setup.count)
        }

        /// Draws the frame at `offset` (laid out ahead by `travel` while
        /// moving) and returns how many shown pixels differ from the scene
        /// written whole.
        @discardableResult
        func frame(_ offset: Double, page: Int, moving: Bool, travel: Int = 1, rest: Double? = nil) throws -> Int {
            // Laid out one screen ahead at most, as the daemon does whatever
            // the room, and (`rest`) only as far as the motion comes to rest.
            var aheadPixels = min(room, compositor.axisExtent)
            if let rest { aheadPixels = min(aheadPixels, Int((abs(rest - offset) * compositor.geometry.pitch - 0.001).rounded(.up))) }
            let ahead = moving && room > 0 ? travel * aheadPixels : 0
            compositor.layOut(&writer.scene, offset: offset, count: count, wrap: setup.settings.wrap, page: page,
                              pageCount: count, ahead: ahead) { self.decoded.contains($0) ? self.pictures[$0] : nil }
            if beside, room > 0, let shown = display.acquireShown(),
               let window = writer.drawBeside(into: shown.buffer, shown: shown.window) {
                try display.present(shown.buffer, window: window)
                besideFrames += 1
            } else {
                let buffer = try #require(display.acquire())
                let window = writer.draw(into: buffer)
                try display.present(buffer, window: window)
            }
            frames += 1
            let whole = ScreenWriterTests.frame(compositor, writer.scene)
            var wrong = 0
            for y in 0..<whole.height {
                for x in 0..<whole.width where display.pixel(x: x, y: y) != whole.row(y)[x] | 0xFF00_0000 { wrong += 1 }
            }
            return wrong
        }
    }

    @Test("random frames, slides and decodes into the same two buffers always show the whole frame (300 runs)",
          arguments: [false, true])
    func incrementalFramesShowTheWholeFrame(room: Bool) throws {
        var r = Random(state: room ? 7 : 3)
        for run in 0..<300 {
            var setup = Setup.random(&r)
            setup.count = r.int(1...6)
            let session = try Session(setup, room: room, decoded: Set((0..<setup.count).filter { _ in r.int(0...3) > 0 }))
            guard try Self.wander(session, &r, run: run, steps: 12) else { return }
        }
    }

    /// `steps` random frames into `session`: slide steps either way, a
    /// picture arriving, rests; false once a frame showed wrong pixels (the
    /// issue recorded). `beside`: slides more often, mostly forward, and
    /// half of them heading for the next page (as a settle).
    static func wander(_ session: Session, _ r: inout Random, run: Int, steps: Int, beside: Bool = false) throws -> Bool {
        let count = session.setup.count
        var offset = Double(r.int(0...count - 1))
        for step in 0..<steps {
            let pick = r.int(0...5)
            if pick < (beside ? 3 : 2) {  // a slide step
                let travel = beside ? (r.int(0...3) > 0 ? 1 : -1) : (r.bool() ? 1 : -1)
                offset += Double(travel) * r.double(0.01...0.45)
                let rest: Double? = beside && r.bool() ? (travel > 0 ? offset.rounded(.up) : offset.rounded(.down)) : nil
                let wrong = try session.frame(offset, page: r.int(0...count - 1), moving: true, travel: travel, rest: rest)
                #expect(wrong == 0, "run \(run) step \(step): slide to \(offset): \(wrong) pixels wrong")
                if wrong > 0 { return false }
            } else {
                if pick == (beside ? 3 : 2) { session.decoded.insert(r.int(0...count - 1)) }  // a picture arrives
                // At rest (rounded to a page, or where it is).
                if r.bool() { offset = offset.rounded() }
                let wrong = try session.frame(offset, page: r.int(0...count - 1), moving: false)
                #expect(wrong == 0, "run \(run) step \(step): rest at \(offset): \(wrong) pixels wrong")
                if wrong > 0 { return false }
            }
        }
        return true
    }

    @Test("random frames written beside the window on screen where they can show the whole frame (300 runs each)",
          arguments: [1, 2])
    func besideFramesShowTheWholeFrame(screens: Int) throws {
        var r = Random(state: UInt64(20 + screens))
        var beside = 0
        for run in 0..<300 {
            var setup = Setup.random(&r)
            setup.count = r.int(1...6)
            // Mostly without dots: with them, nothing is written beside.
            if r.int(0...3) > 0 { setup.style.indicator.enabled = false }
            let session = try Session(setup, room: true, screens: screens, beside: true,
                                      decoded: Set((0..<setup.count).filter { _ in r.int(0...3) > 0 }))
            guard try Self.wander(session, &r, run: run, steps: 16, beside: true) else { return }
            beside += session.besideFrames
        }
        #expect(beside > 1000, "frames written beside the window on screen: \(beside)")
    }

    @Test("without dots, slides write each picture coming in once, beside the one on screen (room of two screens)",
          arguments: Rotation.allCases)
    func besideSlidesWriteEachPictureOnce(rotation: Rotation) throws {
        var setup = Self.fullScreen(rotation: rotation)
        setup.style.indicator.enabled = false
        let session = try Session(setup, room: true, screens: 2, beside: true)
        let axis = session.compositor.axisExtent
        #expect(session.room == 2 * axis)
        for _ in 0..<2 { try session.frame(0, page: 0, moving: false) }
        let full = 320 * 200
        var perSlide: [Int] = []
        var windows = Set<PixelPoint>()
        for slide in 0..<4 {
            var written = 0
            for step in 1...20 {
                let offset = Double(slide) + Double(step) / 20
                #expect(try session.frame(offset, page: slide + (step < 10 ? 0 : 1), moving: step < 20, rest: Double(slide + 1)) == 0)
                written += session.writer.pixelsWritten
                windows.insert(session.display.window)
            }
            perSlide.append(written)
        }
        // Beside the picture at rest, in the buffer on screen: the one
        // coming in (1 screen), or both where the buffer ends (2), never
        // the same pictures into the other buffer as well (4).
        #expect(perSlide.allSatisfy { $0 <= 2 * full }, "\(perSlide)")
        #expect(perSlide.reduce(0, +) <= 6 * full, "\(perSlide)")
        #expect(session.besideFrames >= 4 * 19, "\(session.besideFrames) frames beside")
        #expect(windows.count > 30)
    }

    @Test("with dots, a slide writes into the other buffer as before: nothing beside")
    func dotsKeepTwoBuffers() throws {
        let session = try Session(Self.fullScreen(), room: true, screens: 2, beside: true)
        for _ in 0..<2 { try session.frame(0, page: 0, moving: false) }
        for step in 1...20 {
            let offset = Double(step) / 20
            #expect(try session.frame(offset, page: offset < 0.5 ? 0 : 1, moving: step < 20) == 0)
        }
        #expect(session.besideFrames == 0)
    }

    /// A full-screen carousel at 1:1 scale on a 320x200 panel, dots at the bottom.
    static func fullScreen(rotation: Rotation = .none, count: Int = 5) -> Setup {
        var s = Setup()
        s.settings.wrap = true
        s.rotation = rotation
        s.panel = rotation == .clockwise90 || rotation == .clockwise270
            ? PixelSize(width: 200, height: 320) : PixelSize(width: 320, height: 200)
        s.count = count
        return s
    }

    @Test("at rest: the same frame again writes nothing; a dot change writes the dots' rectangle only")
    func restWritesOnlyWhatChanged() throws {
        let session = try Session(Self.fullScreen(), room: false)
        let full = 320 * 200
        try session.frame(0, page: 0, moving: false)
        #expect(session.writer.pixelsWritten >= full)
        try session.frame(0, page: 0, moving: false)  // the second buffer
        #expect(session.writer.pixelsWritten >= full)
        #expect(try session.frame(0, page: 0, moving: false) == 0)
        #expect(session.writer.pixelsWritten == 0)
        #expect(try session.frame(0, page: 1, moving: false) == 0)
        // Five 10 px dots 12 px apart: a 118 x 12 rectangle, restored and drawn.
        #expect(session.writer.pixelsWritten > 0)
        #expect(session.writer.pixelsWritten <= 2 * 120 * 14)
    }

    @Test("at rest in a peeking carousel: a decoded neighbour repaints its own stretch, not the screen")
    func aDecodedNeighbourRepaintsItsStretch() throws {
        var setup = Self.fullScreen()
        setup.settings.itemSize = .fraction(0.6)
        setup.settings.spacing = 8
        setup.style.indicator.enabled = false
        let session = try Session(setup, room: false, decoded: [0, 1])
        for _ in 0..<2 { try session.frame(0, page: 0, moving: false) }
        // Item 4 (wrap) peeks in on the left: 320 * 0.2 - 8 = 56 px of it.
        session.decoded.insert(4)
        #expect(try session.frame(0, page: 0, moving: false) == 0)
        #expect(session.writer.pixelsWritten == 56 * 200)
    }

    @Test("a slide with room writes each buffer's strip once, then only the dots; the window moves",
          arguments: Rotation.allCases)
    func aSlideWithRoomMovesTheWindow(rotation: Rotation) throws {
        let session = try Session(Self.fullScreen(rotation: rotation), room: true)
        #expect(session.room == session.compositor.axisExtent)
        for _ in 0..<2 { try session.frame(0, page: 0, moving: false) }
        var written: [Int] = []
        for step in 1...20 {
            let offset = Double(step) / 20
            #expect(try session.frame(offset, page: offset < 0.5 ? 0 : 1, moving: step < 20) == 0)
            written.append(session.writer.pixelsWritten)
        }
        let full = 320 * 200
        // The first frame into each buffer lays the next picture out beside the current one.
        #expect(written[0] >= full && written[1] >= full)
        // From then on: the dots, restored and drawn (120 x 14 at most, twice).
        #expect(written[2...].allSatisfy { $0 <= 2 * 120 * 14 }, "\(written)")
        let window = session.display.window
        #expect(window != .zero, "the last frame shows a window away from the buffer's start")
    }

    @Test("without room a slide writes whole frames (the fallback)")
    func aSlideWithoutRoomWritesFrames() throws {
        let session = try Session(Self.fullScreen(), room: false)
        for _ in 0..<2 { try session.frame(0, page: 0, moving: false) }
        for step in 1...10 {
            #expect(try session.frame(Double(step) / 20, page: 0, moving: true) == 0)
            #expect(session.writer.pixelsWritten >= 320 * 200)
        }
        #expect(session.display.window == .zero)
    }

    @Test("an empty folder draws its picture once, then nothing; pictures arriving replace it")
    func emptyThenPictures() throws {
        let session = try Session(Self.fullScreen(rotation: .clockwise90, count: 3), room: true)
        session.count = 0
        for _ in 0..<2 { #expect(try session.frame(0, page: 0, moving: false) == 0) }
        #expect(session.writer.pixelsWritten == 200 * 320)
        #expect(try session.frame(0, page: 0, moving: false) == 0)
        #expect(session.writer.pixelsWritten == 0)
        session.count = 3
        for _ in 0..<2 { #expect(try session.frame(0, page: 0, moving: false) == 0) }
        for step in 1...5 { #expect(try session.frame(Double(step) / 10, page: 0, moving: true) == 0) }
    }
}
