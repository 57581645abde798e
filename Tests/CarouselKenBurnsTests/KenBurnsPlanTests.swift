// The pure plan of a Ken Burns move (issue 47): where a zoom ends, how far
// a pan goes, that faces stay in view, which pictures move, that the same
// picture always makes the same move, and the pace over a rest.

import CarouselCore
import CarouselImaging
import CarouselKenBurnsWords
import Testing
@testable import CarouselKenBurns

@Suite("Ken Burns plans") struct KenBurnsPlanTests {
    let box = PixelSize(width: 1280, height: 800)

    func settings(_ move: KenBurnsMoveChoice, zoom: ClosedRange<Double> = 1...1.3) -> KenBurnsSettings {
        var s = KenBurnsSettings()
        s.enabled = true
        s.move = move
        s.zoomMin = zoom.lowerBound
        s.zoomMax = zoom.upperBound
        return s
    }

    /// What of the box shows at `f`: x0, x1, y0, y1 (fractions).
    func window(_ f: Framing) -> (Double, Double, Double, Double) {
        let h = 0.5 / f.scale
        return (f.centerX - h, f.centerX + h, f.centerY - h, f.centerY + h)
    }

    /// A face in a picture of the box's shape (fit contain fills it): box fractions too.
    let leftFace = FaceRegion(x: 0.02, y: 0.2, width: 0.1, height: 0.16)

    @Test func aZoomInEndsOnTheFacesAndStartsWhole() throws {
        let facts = PictureFacts(size: box, faces: [leftFace])
        let move = try #require(KenBurnsPlan.move(for: PageKey("/a.jpg"), facts: facts, settings: settings(.zoomIn), box: box, fit: .contain))
        #expect(move.kind == .zoomIn && move.faces == 1)
        #expect(move.from.scale == 1 && move.to.scale == 1.3)
        let (x0, x1, y0, y1) = window(move.to)
        #expect(x0 <= leftFace.x && x1 >= leftFace.maxX && y0 <= leftFace.y && y1 >= leftFace.maxY)
        // As close to the face as the box lets it: the left edge of the box.
        #expect(abs(x0) < 1e-9)
        let out = try #require(KenBurnsPlan.move(for: PageKey("/a.jpg"), facts: facts, settings: settings(.zoomOut), box: box, fit: .contain))
        #expect(out.from == move.to && out.kind == .zoomOut)
    }

    @Test func aPanKeepsTheFacesInViewAllTheWay() throws {
        let face = FaceRegion(x: 0.4, y: 0.3, width: 0.12, height: 0.2)
        let facts = PictureFacts(size: box, faces: [face])
        for name in ["/a.jpg", "/b.jpg", "/c.jpg", "/d.jpg"] {
            let move = try #require(KenBurnsPlan.move(for: PageKey(name), facts: facts, settings: settings(.pan, zoom: 1...1.6),
                                                      box: box, fit: .contain))
            #expect(move.kind == .pan && move.from.scale == 1.6 && move.to.scale == 1.6)
            #expect(move.from.centerX != move.to.centerX, "a landscape picture pans across")
            for step in 0...20 {
                let (x0, x1, y0, y1) = window(move.framing(at: Double(step) / 20))
                #expect(x0 <= face.x + 1e-9 && x1 >= face.maxX - 1e-9 && y0 <= face.y + 1e-9 && y1 >= face.maxY - 1e-9,
                        "\(name) at \(step): the face left the view")
            }
        }
        // Without faces the pan runs from one edge of the box to the other.
        let bare = try #require(KenBurnsPlan.move(for: PageKey("/a.jpg"), facts: PictureFacts(size: box), settings: settings(.pan),
                                                  box: box, fit: .contain))
        #expect(abs(abs(bare.to.centerX - bare.from.centerX) - (1 - 1 / 1.3)) < 1e-9)
    }

    @Test func aPortraitOnALandscapeScreenPansDownItsLength() throws {
        let portrait = PixelSize(width: 600, height: 900)
        let move = try #require(KenBurnsPlan.move(for: PageKey("/p.jpg"), facts: PictureFacts(size: portrait),
                                                  settings: settings(.pan), box: box, fit: .cover))
        #expect(move.from.centerX == move.to.centerX && move.from.centerY != move.to.centerY)
    }

    @Test func neverOutsideTheBox() throws {
        for name in (0..<40).map({ "/picture-\($0).jpg" }) {
            for faces in [[], [leftFace], [FaceRegion(x: 0.9, y: 0.85, width: 0.1, height: 0.15)]] {
                guard let move = KenBurnsPlan.move(for: PageKey(name), facts: PictureFacts(size: box, faces: faces),
                                                   settings: settings(.random, zoom: 1.1...2), box: box, fit: .contain) else {
                    Issue.record("\(name) does not move")
                    continue
                }
                for step in 0...10 {
                    let (x0, x1, y0, y1) = window(move.framing(at: Double(step) / 10))
                    #expect(x0 >= -1e-9 && x1 <= 1 + 1e-9 && y0 >= -1e-9 && y1 <= 1 + 1e-9)
                }
            }
        }
    }

    @Test func randomIsOnePerPictureAndTheSameEveryTime() throws {
        var kinds: [KenBurnsMoveKind: Int] = [:]
        for name in (0..<60).map({ "/album/photo-\($0).jpg" }) {
            let a = KenBurnsPlan.move(for: PageKey(name), facts: PictureFacts(size: box), settings: settings(.random), box: box, fit: .contain)
            let b = KenBurnsPlan.move(for: PageKey(name), facts: PictureFacts(size: box), settings: settings(.random), box: box, fit: .contain)
            #expect(a == b)
            if let a { kinds[a.kind, default: 0] += 1 }
        }
        #expect(kinds.count == 3 && kinds.values.allSatisfy { $0 >= 10 }, "\(kinds)")
        // The seed is the path's own (FNV-1a 64, as Python computes it), not the process's hasher.
        #expect(KenBurnsPlan.seed(of: PageKey("/a.jpg")) == 0xaa86e47a247c0894)
    }

    @Test func whichPicturesMove() throws {
        var s = settings(.zoomIn)
        let portrait = PictureFacts(size: PixelSize(width: 600, height: 900))
        let sameShape = PictureFacts(size: PixelSize(width: 2560, height: 1600))
        let wider = PictureFacts(size: PixelSize(width: 3000, height: 1000))
        #expect(KenBurnsPlan.move(for: PageKey("/p.jpg"), facts: portrait, settings: s, box: box, fit: .contain) != nil)
        s.portraits = false
        #expect(KenBurnsPlan.move(for: PageKey("/p.jpg"), facts: portrait, settings: s, box: box, fit: .contain) == nil)
        s.screenShaped = false
        #expect(KenBurnsPlan.move(for: PageKey("/s.jpg"), facts: sameShape, settings: s, box: box, fit: .contain) == nil)
        #expect(KenBurnsPlan.move(for: PageKey("/w.jpg"), facts: wider, settings: s, box: box, fit: .contain) != nil)
        // A zoom from 1 to 1 is no move.
        #expect(KenBurnsPlan.move(for: PageKey("/w.jpg"), facts: wider, settings: settings(.zoomIn, zoom: 1...1), box: box, fit: .contain) == nil)
    }

    @Test func thePaceOverARest() {
        #expect(KenBurnsPlan.progress(at: 0, duration: 6) == 0)
        #expect(KenBurnsPlan.progress(at: 3, duration: 6) == 0.5)
        #expect(KenBurnsPlan.progress(at: 9, duration: 6) == 1)
        let tau = KenBurnsPlan.foreverTimeConstant
        #expect(abs(KenBurnsPlan.progress(at: tau, duration: nil) - (1 - 1 / 2.718281828459045)) < 1e-9)
        #expect(KenBurnsPlan.progress(at: 1e6, duration: nil) <= 1)
        // Equal ratios: half-way in time is the geometric middle of the scale.
        let move = KenBurnsMove(kind: .zoomIn, from: .whole, to: Framing(scale: 1.44, centerX: 0.5, centerY: 0.5), faces: 0)
        #expect(abs(move.framing(at: 0.5).scale - 1.2) < 1e-9)
    }

    @Test func aSlowBoardDrawsTheMoveLessOften() {
        // The fps cap where a frame is cheap; where one costs more than a
        // quarter of the period, four times its cost between frames.
        #expect(KenBurnsService.period(fps: 20, frameCost: 0) == 50_000)
        #expect(KenBurnsService.period(fps: 20, frameCost: 3_000) == 50_000)
        #expect(KenBurnsService.period(fps: 20, frameCost: 40_000) == 160_000)
        #expect(KenBurnsService.period(fps: 60, frameCost: 5_000) == 20_000)
    }

    @Test func theZoomViewShowsTheCentreInTheMiddle() {
        let f = Framing(scale: 1.3, centerX: 0.4, centerY: 0.6)
        let v = f.zoomView(item: 2, width: 1280, height: 800)
        // The box point (0.4·1280, 0.6·800) shows at (640, 400).
        #expect(abs(v.translation.x + 1.3 * 0.4 * 1280 - 640) < 1e-9 && abs(v.translation.y + 1.3 * 0.6 * 800 - 400) < 1e-9)
        #expect(v.item == 2 && v.scale == 1.3)
    }
}
