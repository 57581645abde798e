// [ken_burns] on the offscreen daemon with a manual clock (issue 47): the
// picture at rest moves (screens at two instants of one rest differ), the
// loop wakes at the fps cap and sleeps once the move is done, a finger
// freezes it, and the next rest starts a new move.

import CarouselControl
import CarouselCore
import CarouselDaemon
import CarouselPlatform
import Foundation
import Testing

@Suite("Ken Burns on the offscreen daemon") struct KenBurnsDaemonTests {
    /// A daemon with Ken Burns on, the first picture shown and its move started
    /// (the picture's facts are read off the loop).
    func moving(_ extra: String = "", autoplay: String = "") throws -> OffscreenDaemon {
        let d = try OffscreenDaemon(ini: "[ken_burns]\nenabled = true\n" + extra + autoplay)
        d.showFirstPicture()
        for _ in 0..<500 where kenBurns(d) == nil {
            usleep(5_000)
            d.daemon.collectCompleted()
            d.advance(ms: 0)
        }
        return d
    }

    func kenBurns(_ d: OffscreenDaemon) -> [String: JSONValue]? {
        guard case .object(let fields)? = d.daemon.status()["ken_burns"] else { return nil }
        return fields
    }

    func scale(_ d: OffscreenDaemon) -> Double? {
        guard case .double(let s)? = kenBurns(d)?["scale"] else { return nil }
        return s
    }

    @Test func thePictureAtRestMoves() throws {
        let d = try moving("move = zoom_in\n")
        let status = try #require(kenBurns(d))
        #expect(status["move"] == .string("zoom_in"))
        let before = d.screenDigest
        let s0 = try #require(scale(d))
        for _ in 0..<40 { d.advance(ms: 50) }
        #expect(d.screenDigest != before, "two instants of one rest show the same screen")
        let s1 = try #require(scale(d))
        #expect(s0 < 1.01 && s1 > s0, "the zoom goes in: \(s0) then \(s1)")
    }

    @Test func theLoopWakesAtTheFrameRateCapAndSleepsWhenTheMoveIsDone() throws {
        let d = try moving("move = zoom_in\nfps = 10\n")
        // For ever (autoplay off): a wake-up every 100 ms while it moves.
        // (The sharper decode for the move lands first, and its frame.)
        d.daemon.settleDecodes()
        d.advance(ms: 20)
        var wakes: [Int64] = []
        let end = d.now + 2_000_000
        while let due = d.daemon.nextWake(now: d.now), due <= end {
            wakes.append(due)
            d.advance(ms: (due - d.now + 999) / 1000)
        }
        #expect(wakes.count == 20, "\(wakes.count) wake-ups in 2 s at fps 10")
        #expect(zip(wakes.dropFirst(), wakes).allSatisfy { $0 - $1 == 100_000 }, "\(zip(wakes.dropFirst(), wakes).map { $0 - $1 })")
        // Slowing to a stop: the loop sleeps once what is left of the move is under half a pixel.
        var more = 0
        while let due = d.daemon.nextWake(now: d.now), more < 2_000 {
            d.advance(ms: (due - d.now + 999) / 1000)
            more += 1
        }
        #expect(d.daemon.nextWake(now: d.now) == nil)
        #expect(more > 100 && more < 2_000, "\(more) more frames before it stopped")
        let s = try #require(scale(d))
        #expect(s == 1.3, "it stopped at \(s), not at zoom_max")
    }

    @Test func aLateLoopSkipsFramesAndSaysSo() throws {
        let d = try moving("move = zoom_in\nfps = 20\n")
        d.daemon.settleDecodes()
        d.advance(ms: 50)
        let before = try #require(kenBurns(d))
        guard case .int(let dropped0)? = before["dropped"], case .int(let frames0)? = before["frames"] else {
            Issue.record("no counts in \(before)")
            return
        }
        // The loop comes back 400 ms late (a busy pass on a slow board):
        // one frame for now, seven counted as dropped, none queued.
        d.advance(ms: 400)
        let after = try #require(kenBurns(d))
        #expect(after["dropped"] == .int(dropped0 + 7), "\(after)")
        #expect(after["frames"] == .int(frames0 + 1))
        let next = try #require(d.daemon.nextWake(now: d.now))
        #expect(next - d.now == 50_000, "the next frame one period on, not at once")
    }

    @Test func withAutoplayTheMoveSpansTheRest() throws {
        let d = try moving("move = zoom_in\n", autoplay: "[autoplay]\ninterval = 4\n")
        // Autoplay on: the move goes on over what the rest has left.
        #expect(d.answer("resume") != .error("unparsed: resume"))
        d.advance(ms: 0)
        // The rest lasts until autoplay's next advance.
        let status = d.daemon.status()
        guard case .object(let autoplay)? = status["autoplay"], case .int(let next)? = autoplay["next_ms"],
              case .int(let uptime)? = status["uptime_ms"] else {
            Issue.record("no autoplay schedule in \(status)")
            return
        }
        let rest = Double(next - uptime) / 1000
        #expect(rest > 1 && rest <= 4, "\(rest) s of rest")
        // Half-way through the rest, half-way by ratio (1.3 ** 0.5).
        d.advance(ms: Int64(rest * 500))
        let half = try #require(scale(d))
        #expect(abs(half - 1.140) < 0.01, "\(half)")
        // At its end, at zoom_max, as autoplay moves on.
        d.advance(ms: Int64(rest * 500) - 1)
        #expect(try #require(scale(d)) > 1.29)
        #expect(d.daemon.status()["index"] == .int(0))
    }

    @Test func aFingerFreezesItAndTheNextRestStartsANewMove() throws {
        let d = try moving("move = zoom_in\n")
        for _ in 0..<10 { d.advance(ms: 50) }
        // A finger down, still: the framing stays.
        d.daemon.carryOut(.touch(.down(id: 0, at: .init(x: 160, y: 100)), time: d.now))
        // (The sharper decode for the move, asked for by a frame, may land
        // meanwhile: let it, and the frame that shows it, one frame interval on.)
        for _ in 0..<2 {
            d.daemon.settleDecodes()
            d.advance(ms: 20)
        }
        let held = d.screenDigest
        #expect(kenBurns(d) == nil, "no move while a finger is on the screen")
        for _ in 0..<10 { d.advance(ms: 50) }
        #expect(d.screenDigest == held, "the framing moved under a finger")
        #expect(d.daemon.nextWake(now: d.now) == nil || kenBurns(d) == nil)
        // Lifted: a new move from where it stood.
        d.daemon.carryOut(.touch(.up(id: 0), time: d.now))
        for _ in 0..<20 { d.advance(ms: 50) }
        #expect(kenBurns(d) != nil)
        #expect(d.screenDigest != held)
    }

    @Test func aDragMovesTheFrozenFramingAsItWas() throws {
        let d = try moving("move = zoom_in\n")
        for _ in 0..<2 {
            d.daemon.settleDecodes()
            d.advance(ms: 20)
        }
        for _ in 0..<10 { d.advance(ms: 50) }
        let size = d.backend.panelSize
        func screen() -> [UInt32] {
            var pixels: [UInt32] = []
            for y in 0..<size.height { for x in 0..<size.width { pixels.append(d.backend.pixel(x: x, y: y)) } }
            return pixels
        }
        d.daemon.carryOut(.touch(.down(id: 0, at: .init(x: 200, y: 100)), time: d.now))
        d.advance(ms: 20)
        let still = screen()
        // Dragged 60 pixels left: the frozen framing moves as a picture (drawn
        // once at its framing), what was at x + shift now at x.
        var t = d.now
        for k in 1...6 {
            t += 16_000
            d.daemon.carryOut(.touch(.move(id: 0, to: .init(x: 200 - Double(k) * 10, y: 100)), time: t))
        }
        d.advance(ms: 100)
        let dragged = screen()
        // (The content follows the finger from where the drag began, past the
        // touch slop: the shift is found, then every pixel held to it.)
        func mismatches(_ shift: Int) -> (off: Int, compared: Int) {
            var off = 0, compared = 0
            for y in stride(from: 0, to: size.height, by: 3) {
                for x in stride(from: 0, to: size.width - 80, by: 3) {
                    let a = still[y * size.width + x + shift], b = dragged[y * size.width + x]
                    compared += 1
                    var close = true
                    for channel in [UInt32(0), 8, 16] where abs(Int((a >> channel) & 0xFF) - Int((b >> channel) & 0xFF)) > 6 {
                        close = false
                    }
                    if !close { off += 1 }
                }
            }
            return (off, compared)
        }
        let best = (1...80).min { mismatches($0).off < mismatches($1).off }!
        let (off, compared) = mismatches(best)
        #expect(best >= 20 && best <= 60, "moved \(best) pixels for a 60-pixel drag")
        #expect(off * 100 < compared, "\(off) of \(compared) pixels differ from the frozen framing moved \(best) pixels")
        d.daemon.carryOut(.touch(.up(id: 0), time: d.now))
    }

    @Test func aSwipeCarriesItAndThePageThatComesInStartsItsOwnMove() throws {
        let d = try moving("move = zoom_in\n")
        for _ in 0..<20 { d.advance(ms: 50) }
        d.swipe()
        for _ in 0..<60 { d.advance(ms: 20) }
        #expect(d.daemon.status()["index"] == .int(1))
        for _ in 0..<500 where kenBurns(d) == nil {
            usleep(5_000)
            d.daemon.collectCompleted()
            d.advance(ms: 0)
        }
        let s0 = try #require(scale(d))
        for _ in 0..<20 { d.advance(ms: 50) }
        #expect(try #require(scale(d)) > s0)
    }

    @Test func oneOrTwoPicturesMoveAndSwipeToo() throws {
        for images in [["01-mountains.jpg"], ["01-mountains.jpg", "02-sunset.jpg"]] {
            let d = try OffscreenDaemon(images: images, ini: "[ken_burns]\nenabled = true\nmove = zoom_in\n")
            d.showFirstPicture()
            for _ in 0..<500 where kenBurns(d) == nil {
                usleep(5_000)
                d.daemon.collectCompleted()
                d.advance(ms: 0)
            }
            let before = d.screenDigest
            for _ in 0..<20 { d.advance(ms: 50) }
            #expect(d.screenDigest != before, "\(images.count) pictures: the picture at rest does not move")
            d.swipe()
            for _ in 0..<60 { d.advance(ms: 20) }
            #expect(d.daemon.status()["index"] == .int(images.count == 1 ? 0 : 1))
            for _ in 0..<20 { d.advance(ms: 50) }
            #expect(kenBurns(d) != nil, "\(images.count) pictures: no move after the swipe")
        }
    }

    @Test func offItSleepsAtRest() throws {
        let d = try OffscreenDaemon(ini: "[ken_burns]\nenabled = false\n")
        d.showFirstPicture()
        #expect(d.daemon.nextWake(now: d.now) == nil)
        #expect(d.daemon.status()["ken_burns"] == .null)
    }
}
