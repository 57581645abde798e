import Testing
import CarouselCore

/// Pinch, pan and double-tap zoom on the manual clock (issue 13, after
/// UIScrollView; SPEC.md section 7 for the double tap).
@Suite struct ZoomTests {
    /// 1000x600, five items, zoom on with its defaults (max 4, double tap).
    static func rig(wrap: Bool = true, autoplay: AutoplaySettings = Rig.noAutoplay,
                    zoom: ZoomSettings = ZoomSettings()) -> Rig {
        var s = CarouselSettings()
        s.wrap = wrap
        return Rig(settings: s, autoplay: autoplay, zoom: zoom)
    }

    /// Two fingers down at `a` and `b` (finger 0 first).
    static func pinchDown(_ rig: inout Rig, _ a: (Double, Double), _ b: (Double, Double)) {
        rig.down(a.0, a.1, id: 0)
        rig.at(rig.now.milliseconds + 10)
        rig.down(b.0, b.1, id: 1)
    }

    /// Moves both fingers in one frame.
    static func pinchMove(_ rig: inout Rig, _ a: (Double, Double), _ b: (Double, Double)) {
        rig.at(rig.now.milliseconds + 16)
        rig.move(a.0, a.1, id: 0)
        rig.move(b.0, b.1, id: 1)
    }

    static func lift(_ rig: inout Rig) {
        rig.at(rig.now.milliseconds + 16)
        rig.up(id: 1)
        rig.up(id: 0)
    }

    /// Runs frames until neither the carousel nor the zoom moves.
    static func rest(_ rig: inout Rig) {
        var guardFrames = 2000
        while rig.model.isMoving || rig.model.isZoomMoving, guardFrames > 0 {
            rig.run(for: 16)
            guardFrames -= 1
        }
    }

    static func close(_ a: Double, _ b: Double, _ tolerance: Double = 1e-6) -> Bool { abs(a - b) <= tolerance }

    @Test func pinchFollowsTheFingersOneToOneAboutTheirMidpoint() {
        var rig = Self.rig()
        Self.pinchDown(&rig, (400, 300), (600, 300))
        Self.pinchMove(&rig, (300, 300), (700, 300))
        // Distance 200 → 400: twice the scale; the picture's point (500, 300)
        // under the midpoint stays under it.
        var view = rig.model.zoomView(at: rig.now)!
        #expect(view.item == 0)
        #expect(Self.close(view.scale, 2))
        #expect(Self.close(view.translation.x, 500 - 2 * 500))
        #expect(Self.close(view.translation.y, 300 - 2 * 300))
        // The midpoint moves 50 px right and 20 down: the picture pans with it.
        Self.pinchMove(&rig, (350, 320), (750, 320))
        view = rig.model.zoomView(at: rig.now)!
        #expect(Self.close(view.scale, 2))
        #expect(Self.close(view.translation.x, 550 - 2 * 500))
        #expect(Self.close(view.translation.y, 320 - 2 * 300))
        // Fingers apart to 600 px: 3x, still about the picture's point (500, 300).
        Self.pinchMove(&rig, (250, 320), (850, 320))
        view = rig.model.zoomView(at: rig.now)!
        #expect(Self.close(view.scale, 3))
        #expect(Self.close(view.translation.x, 550 - 3 * 500))
        // The carousel itself never moved.
        #expect(rig.offset == 0)
        #expect(!rig.names.contains("willBeginDragging"))
        // Each finger's move is reported (two a frame here); the last says 3.
        #expect(rig.events(named: "didZoom").last?.kind == .didZoom(scale: 3))
    }

    @Test func pinchPastTheMaximumRubberBandsAndSpringsBack() {
        var rig = Self.rig()
        Self.pinchDown(&rig, (450, 300), (550, 300))
        Self.pinchMove(&rig, (100, 300), (900, 300))   // 8x the distance
        let shown = rig.model.zoomScale(at: rig.now)
        #expect(shown > 4)
        #expect(shown < 4 * ZoomPhysics.rubberLimit)
        #expect(shown < 8)
        Self.lift(&rig)
        #expect(rig.model.isZoomMoving)
        Self.rest(&rig)
        #expect(rig.model.zoomScale(at: rig.now) == 4)
        let ends = rig.events.filter { if case .didEndZooming = $0.kind { true } else { false } }
        #expect(ends.map(\.kind) == [.didEndZooming(scale: 4)])
        // At rest the picture covers its frame.
        let view = rig.model.zoomView(at: rig.now)!
        #expect(view.translation.x <= 0 && view.translation.x >= 1000 - 4 * 1000)
        #expect(view.translation.y <= 0 && view.translation.y >= 600 - 4 * 600)
    }

    @Test func pinchBelowOneRubberBandsAndTheZoomEndsAtOne() {
        var rig = Self.rig(autoplay: { var a = AutoplaySettings(); a.resumeDelay = 2; return a }())
        Self.pinchDown(&rig, (200, 300), (800, 300))
        Self.pinchMove(&rig, (450, 300), (550, 300))    // a sixth of the distance
        let shown = rig.model.zoomScale(at: rig.now)
        #expect(shown < 1)
        #expect(shown > 1 / ZoomPhysics.rubberLimit)
        #expect(rig.model.autoplayStatus.pausedBy.contains(.zoom))
        Self.lift(&rig)
        Self.rest(&rig)
        #expect(rig.model.zoomView(at: rig.now) == nil)
        let end = rig.events.last!
        #expect(end.kind == .didEndZooming(scale: 1))
        // Autoplay resumes resume_delay after the picture is back at 1.
        #expect(rig.model.autoplayStatus.pausedBy.isEmpty)
        #expect(rig.model.autoplayStatus.next == end.time.adding(seconds: 2))
    }

    /// Zoomed 2x about the centre by the `zoom` request, at rest.
    static func zoomedRig(wrap: Bool = true) -> Rig {
        var rig = Self.rig(wrap: wrap)
        #expect(rig.command(.zoom(scale: 2)) == nil)
        Self.rest(&rig)
        let view = rig.model.zoomView(at: rig.now)!
        #expect(view.scale == 2)
        #expect(Self.close(view.translation.x, -500) && Self.close(view.translation.y, -300))
        return rig
    }

    @Test func oneFingerPansAZoomedPictureAndItsEdgesBounce() {
        var rig = Self.zoomedRig()
        rig.events.removeAll()
        rig.down(500, 300)
        // Past the slop, then 1:1 from there, both ways (no directional lock).
        for (i, p) in [(520.0, 310.0), (600, 350), (700, 400)].enumerated() {
            rig.at(rig.now.milliseconds + 16 * Double(i + 1))
            rig.move(p.0, p.1)
        }
        var t = rig.model.zoomView(at: rig.now)!.translation
        #expect(Self.close(t.x, -500 + 180) && Self.close(t.y, -300 + 90))
        // Down past the top edge (y = 0): rubber band, slower than the finger.
        rig.at(rig.now.milliseconds + 16); rig.move(700, 800)
        t = rig.model.zoomView(at: rig.now)!.translation
        #expect(t.y > 0)
        #expect(t.y < 800 - 310 - 300)
        #expect(rig.offset == 0)
        #expect(!rig.names.contains("willBeginDragging"))
        rig.at(rig.now.milliseconds + 200)   // still: no velocity
        rig.up()
        Self.rest(&rig)
        t = rig.model.zoomView(at: rig.now)!.translation
        #expect(Self.close(t.y, 0))            // bounced back to the edge
        #expect(Self.close(t.x, -320))
        #expect(rig.offset == 0)
        #expect(!rig.names.contains("didSelectItem"))
    }

    @Test func aFlickPansOnAndDeceleratesWithinTheEdges() {
        var rig = Self.zoomedRig()
        rig.down(500, 300)
        for i in 1...8 {
            rig.at(rig.now.milliseconds + 8)
            rig.move(500, 300 - 12 * Double(i))   // upwards at 1500 px/s
        }
        rig.up()
        #expect(rig.model.isZoomMoving)
        let lifted = rig.model.zoomView(at: rig.now)!.translation.y
        Self.rest(&rig)
        let t = rig.model.zoomView(at: rig.now)!.translation
        #expect(t.y < lifted - 50)                 // it went on after the lift
        #expect(t.y >= 600 - 2 * 600 - 1e-6)       // and rests inside the frame
        #expect(rig.offset == 0)
    }

    @Test func aPanPushingPastTheEdgeHandsOverToPaging() {
        var rig = Self.zoomedRig(wrap: false)

        rig.events.removeAll()
        // Leftward: the picture's right edge (translation −1000) is 500 px away.
        rig.down(900, 300)
        var x = 900.0
        for _ in 1...30 {
            rig.at(rig.now.milliseconds + 10)
            x -= 25
            rig.move(x, 300)
        }
        // 750 px: the first move (25 px) leaves the slop and anchors the
        // pan, 500 pan the picture to its edge, the last 225 move the carousel.
        let t = rig.model.zoomView(at: rig.now)!.translation
        #expect(Self.close(t.x, -1000))
        #expect(Self.close(rig.model.offset(at: rig.now), 0.225, 1e-9))
        #expect(rig.names.contains("willBeginDragging"))
        // Back a little: the carousel gives it back first.
        rig.at(rig.now.milliseconds + 10); rig.move(x + 100, 300)
        #expect(Self.close(rig.model.offset(at: rig.now), 0.125, 1e-9))
        #expect(Self.close(rig.model.zoomView(at: rig.now)!.translation.x, -1000))
        // And on again, flicking: the next page comes and the zoom ends there.
        for _ in 1...6 {
            rig.at(rig.now.milliseconds + 8)
            x -= 20
            rig.move(x, 300)
        }
        rig.up()
        Self.rest(&rig)
        #expect(rig.offset == 1)
        #expect(rig.model.zoomView(at: rig.now) == nil)
        #expect(rig.milestones.contains("didEndDragging"))
        #expect(rig.events.last { $0.kind.name == "didEndZooming" }?.kind == .didEndZooming(scale: 1))
        #expect(rig.snapshot.index == 1)
    }

    @Test func aHandoverThatSettlesBackKeepsTheZoom() {
        var rig = Self.zoomedRig(wrap: false)
        rig.down(900, 300)
        var x = 900.0
        for _ in 1...22 {
            rig.at(rig.now.milliseconds + 20)
            x -= 25
            rig.move(x, 300)
        }
        #expect(rig.model.offset(at: rig.now) > 0)
        rig.at(rig.now.milliseconds + 200)   // still, then lift: not a fling
        rig.up()
        Self.rest(&rig)
        #expect(rig.offset == 0)
        let view = rig.model.zoomView(at: rig.now)!
        #expect(view.scale == 2 && Self.close(view.translation.x, -1000))
        #expect(rig.model.autoplayStatus.pausedBy.contains(.zoom))
    }

    @Test func aPictureAtScaleOneDragsThePages() {
        var rig = Self.rig()
        rig.swipe(from: 800, to: 300, ms: 200)
        Self.rest(&rig)
        #expect(rig.offset == 1)
        #expect(rig.model.zoomView(at: rig.now) == nil)
    }

    @Test func doubleTapZoomsAboutTheTappedPointAndBack() {
        var rig = Self.rig()
        rig.down(200, 150); rig.at(50); rig.up()
        rig.at(150); rig.down(210, 160); rig.at(200); rig.up()
        Self.rest(&rig)
        var view = rig.model.zoomView(at: rig.now)!
        #expect(view.scale == 2.5)
        // The picture's point under the second tap stays under it.
        #expect(Self.close(view.translation.x, 210 - 2.5 * 210))
        #expect(Self.close(view.translation.y, 160 - 2.5 * 160))
        #expect(!rig.names.contains("didSelectItem"))
        #expect(rig.events.last { $0.kind.name == "didEndZooming" }?.kind == .didEndZooming(scale: 2.5))
        // Again: back to 1.
        rig.at(rig.now.milliseconds + 500); rig.down(600, 300)
        rig.at(rig.now.milliseconds + 40); rig.up()
        rig.at(rig.now.milliseconds + 100); rig.down(590, 310)
        rig.at(rig.now.milliseconds + 40); rig.up()
        Self.rest(&rig)
        view = rig.model.zoomView(at: rig.now) ?? ZoomView(item: 0, scale: 1, translation: Point(x: 0, y: 0))
        #expect(rig.model.zoomView(at: rig.now) == nil)
        #expect(rig.events.last { $0.kind.name == "didEndZooming" }?.kind == .didEndZooming(scale: 1))
    }

    @Test func doubleTapOnAPannedPictureStaysInsideTheFrame() {
        var rig = Self.zoomedRig()
        // Panned to the bottom-right corner of the picture.
        rig.down(500, 300)
        for i in 1...10 {
            rig.at(rig.now.milliseconds + 16)
            rig.move(500 - 60 * Double(i), 300 - 40 * Double(i))
        }
        rig.at(rig.now.milliseconds + 300); rig.up()
        Self.rest(&rig)
        #expect(rig.model.zoomView(at: rig.now)!.translation == Point(x: -1000, y: -600))
        // Out about a point and in again about a corner: the picture covers the frame throughout.
        rig.at(rig.now.milliseconds + 400); rig.down(990, 590); rig.at(rig.now.milliseconds + 40); rig.up()
        rig.at(rig.now.milliseconds + 100); rig.down(990, 590); rig.at(rig.now.milliseconds + 40); rig.up()
        Self.rest(&rig)
        #expect(rig.model.zoomView(at: rig.now) == nil)
        rig.at(rig.now.milliseconds + 400); rig.down(990, 590); rig.at(rig.now.milliseconds + 40); rig.up()
        rig.at(rig.now.milliseconds + 100); rig.down(990, 590); rig.at(rig.now.milliseconds + 40); rig.up()
        Self.rest(&rig)
        let view = rig.model.zoomView(at: rig.now)!
        #expect(Self.close(view.translation.x, 990 - 2.5 * 990))
        #expect(Self.close(view.translation.y, 590 - 2.5 * 590))
    }

    @Test func singleTapWaitsForTheDoubleTapWindow() {
        var rig = Self.rig()
        rig.down(300, 300); rig.at(60); rig.up()
        #expect(!rig.names.contains("didSelectItem"))
        rig.at(359)
        #expect(!rig.names.contains("didSelectItem"))
        rig.at(360)
        #expect(rig.events.last?.kind == .didSelectItem(index: 0))
        #expect(rig.events.last?.time == .milliseconds(360))
        #expect(rig.model.zoomView(at: rig.now) == nil)
    }

    @Test func withoutDoubleTapATapSelectsAtTheLift() {
        var z = ZoomSettings()
        z.doubleTap = false
        var rig = Self.rig(zoom: z)
        rig.down(300, 300); rig.at(60); rig.up()
        #expect(rig.events.last?.kind == .didSelectItem(index: 0))
        rig.at(100); rig.down(300, 300); rig.at(140); rig.up()
        #expect(rig.events(named: "didSelectItem").count == 2)
        Self.rest(&rig)
        #expect(rig.model.zoomView(at: rig.now) == nil)
    }

    @Test func withMaxScaleOneNothingZoomsAndATapSelectsAtTheLift() {
        var z = ZoomSettings()
        z.maxScale = 1
        var rig = Self.rig(zoom: z)
        rig.down(300, 300); rig.at(60); rig.up()
        #expect(rig.events.last?.kind == .didSelectItem(index: 0))
        Self.pinchDown(&rig, (400, 300), (600, 300))
        Self.pinchMove(&rig, (300, 300), (700, 300))
        #expect(rig.model.zoomView(at: rig.now) == nil)
    }

    @Test func tapsTooFarApartOrTooLateAreTwoSelects() {
        var rig = Self.rig()
        rig.down(100, 300); rig.at(40); rig.up()
        rig.at(100); rig.down(300, 300)          // 200 px away: the first stands alone
        #expect(rig.events(named: "didSelectItem").count == 1)
        rig.at(140); rig.up()
        rig.at(500)                              // the window closes: the second too
        #expect(rig.events(named: "didSelectItem").count == 2)
        rig.at(900); rig.down(300, 300); rig.at(940); rig.up()
        rig.at(1300); rig.down(300, 300); rig.at(1340); rig.up()   // 360 ms after: too late
        rig.at(2000)
        #expect(rig.events(named: "didSelectItem").count == 4)
        // Down again 20 ms after the lift: a bounce, not a second tap (40 ms at least).
        rig.at(2100); rig.down(300, 300); rig.at(2140); rig.up()
        rig.at(2160); rig.down(300, 300)
        #expect(rig.events(named: "didSelectItem").count == 5)
        rig.at(2200); rig.up()
        rig.at(3000)
        #expect(rig.events(named: "didSelectItem").count == 6)
        #expect(rig.model.zoomView(at: rig.now) == nil)
    }

    @Test func autoplayPausesWhileZoomedAndResumesAfterScaleOne() {
        var a = AutoplaySettings()
        a.interval = 3
        a.resumeDelay = 1.5
        var rig = Self.rig(autoplay: a)
        rig.at(500)
        Self.pinchDown(&rig, (400, 300), (600, 300))
        Self.pinchMove(&rig, (300, 300), (700, 300))
        Self.lift(&rig)
        Self.rest(&rig)
        #expect(rig.model.zoomScale(at: rig.now) == 2)
        #expect(rig.model.autoplayStatus.pausedBy == [.zoom])
        #expect(rig.model.autoplayStatus.next == nil)
        rig.at(20_000)                           // long past the interval: nothing moved
        #expect(rig.offset == 0)
        #expect(rig.command(.zoom(scale: 1)) == nil)
        Self.rest(&rig)
        let back = rig.events.last { $0.kind == .didEndZooming(scale: 1) }!.time
        #expect(rig.model.autoplayStatus.next == back.adding(seconds: 1.5))
        rig.at(back.milliseconds + 1_500 + 600)
        #expect(rig.offset == 1)
    }

    @Test func zoomRequests() {
        var rig = Self.rig()
        #expect(rig.command(.zoom(scale: 3)) == nil)
        Self.rest(&rig)
        #expect(rig.model.zoomScale(at: rig.now) == 3)
        #expect(rig.events.last?.kind == .didEndZooming(scale: 3))
        #expect(rig.command(.zoom(scale: 10)) == nil)   // clamped to max_scale
        Self.rest(&rig)
        #expect(rig.model.zoomScale(at: rig.now) == 4)
        rig.down(500, 300)
        #expect(rig.command(.zoom(scale: 1)) == .touchInProgress)
        rig.at(rig.now.milliseconds + 50); rig.up()
        #expect(rig.command(.zoom(scale: 1)) == nil)
        Self.rest(&rig)
        #expect(rig.model.zoomView(at: rig.now) == nil)
        var off = Self.rig(zoom: .disabled)
        #expect(off.command(.zoom(scale: 2)) == .zoomDisabled)
    }

    @Test func nextLeavesTheZoomedPicture() {
        var rig = Self.zoomedRig()
        rig.events.removeAll()
        #expect(rig.command(.next) == nil)
        #expect(rig.model.zoomView(at: rig.now) == nil)
        #expect(rig.events.map(\.kind).prefix(2) == [.didZoom(scale: 1), .didEndZooming(scale: 1)])
        Self.rest(&rig)
        #expect(rig.offset == 1)
    }

    @Test func idleReturnShowsTheStartPictureWhole() {
        var s = CarouselSettings()
        s.idleReturn = 5
        var rig = Rig(settings: s, zoom: ZoomSettings())
        Self.pinchDown(&rig, (400, 300), (600, 300))
        Self.pinchMove(&rig, (300, 300), (700, 300))
        Self.lift(&rig)
        Self.rest(&rig)
        #expect(rig.model.zoomScale(at: rig.now) == 2)
        rig.at(rig.now.milliseconds + 5_000)
        Self.rest(&rig)
        #expect(rig.model.zoomView(at: rig.now) == nil)
        #expect(rig.offset == 0)
    }

    @Test func theFingerLeftAfterAPinchPansOn() {
        var rig = Self.rig()
        Self.pinchDown(&rig, (400, 300), (600, 300))
        Self.pinchMove(&rig, (300, 300), (700, 300))   // 2x about (500, 300): t = (-500, -300)
        rig.at(rig.now.milliseconds + 16); rig.up(id: 1)
        #expect(rig.events.last?.kind != .didEndZooming(scale: 2), "the zoom goes on under the finger left")
        for i in 1...5 {
            rig.at(rig.now.milliseconds + 16)
            rig.move(300 + 20 * Double(i), 300 + 10 * Double(i), id: 0)
        }
        // 1:1 from where the pinch ended.
        let t = rig.model.zoomView(at: rig.now)!.translation
        #expect(Self.close(t.x, -500 + 100) && Self.close(t.y, -300 + 50))
        #expect(rig.offset == 0)
        rig.at(rig.now.milliseconds + 200); rig.up(id: 0)
        Self.rest(&rig)
        #expect(rig.model.zoomScale(at: rig.now) == 2)
        #expect(!rig.names.contains("didSelectItem"))
        #expect(rig.events.filter { $0.kind.name == "didEndZooming" }.map(\.kind) == [.didEndZooming(scale: 2)])
    }

    @Test func withZoomOffASecondFingerIsIgnored() {
        var rig = Self.rig(zoom: .disabled)
        Self.pinchDown(&rig, (400, 300), (600, 300))
        Self.pinchMove(&rig, (300, 300), (700, 300))
        #expect(rig.model.zoomView(at: rig.now) == nil)
        #expect(rig.events(named: "didZoom").isEmpty)
    }

    @Test func aPinchCannotStartWhileThePagesAreDragged() {
        var rig = Self.rig()
        rig.down(800, 300)
        rig.at(16); rig.move(700, 300)
        rig.at(32); rig.move(600, 300)
        #expect(rig.model.isDragging)
        rig.at(40); rig.down(200, 300, id: 1)
        rig.at(56); rig.move(100, 300, id: 1)
        #expect(rig.model.zoomView(at: rig.now) == nil)
        rig.at(70); rig.move(500, 300)
        // The drag began at 700 (past the slop): 200 px of it.
        #expect(Self.close(rig.model.offset(at: rig.now), 0.2, 1e-9))
    }

    @Test func aFingerCatchesAZoomSpringingBack() {
        var rig = Self.rig()
        Self.pinchDown(&rig, (450, 300), (550, 300))
        Self.pinchMove(&rig, (100, 300), (900, 300))
        Self.lift(&rig)
        rig.run(for: 48)
        let caught = rig.model.zoomScale(at: rig.now)
        #expect(caught > 4)
        rig.down(500, 300)
        rig.run(for: 100)
        #expect(rig.model.zoomScale(at: rig.now) == caught)   // held where it was caught
        rig.up()
        Self.rest(&rig)
        #expect(rig.model.zoomScale(at: rig.now) == 4)
        #expect(!rig.names.contains("didSelectItem"))
    }
}
