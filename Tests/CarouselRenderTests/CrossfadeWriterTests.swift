import Testing
import CarouselCore
import CarouselDisplay
import CarouselImaging
@testable import CarouselRender

/// Crossfade frames through the one-pass writer: each shows the two frames
/// blended (worked out here per pixel from frames written whole), at window
/// 0; and the frames after one, written only where something changed or
/// slid over laid-out content, still show exactly the whole frame: nothing
/// of the blend (or of dots drawn elsewhere in a longer buffer) is left.
@Suite("ScreenWriter: crossfade frames and what follows them")
struct CrossfadeWriterTests {
    typealias Random = ScreenWriterTests.Random

    /// `b` over `a` at `f`, per channel.
    static func lerp(_ a: UInt32, _ b: UInt32, _ f: Double) -> UInt32 {
        var out: UInt32 = 0xFF00_0000
        for shift in [16, 8, 0] as [UInt32] {
            let ca = Double((a >> shift) & 0xFF), cb = Double((b >> shift) & 0xFF)
            out |= UInt32((ca + (cb - ca) * f).rounded()) << shift
        }
        return out
    }

    static func distance(_ a: UInt32, _ b: UInt32) -> Int {
        [16, 8, 0].map { (s: UInt32) in abs(Int((a >> s) & 0xFF) - Int((b >> s) & 0xFF)) }.max()!
    }

    @Test("random slides, crossfades and rests into the same buffers, some pictures missing, some with a clock (200 runs)",
          arguments: [false, true])
    func crossfadesBlendAndLeaveNothingBehind(room: Bool) throws {
        var r = Random(state: room ? 23 : 29)
        for run in 0..<200 {
            var setup = ScreenWriterTests.Setup.random(&r)
            setup.count = r.int(2...6)
            // Some pictures not decoded yet (background in their place), and
            // in some runs a clock: both stay right under the blend.
            let session = try ScreenWriterTests.Session(setup, room: room,
                                                        decoded: Set((0..<setup.count).filter { _ in r.int(0...3) > 0 }))
            let compositor = session.compositor, writer = session.writer
            let image = { (i: Int) -> DecodedImage? in session.decoded.contains(i) ? session.pictures[i] : nil }
            if r.bool() {
                let size = PixelSize(width: r.int(1...setup.panel.width), height: r.int(1...max(1, setup.panel.height / 2)))
                writer.scene.stamp = SceneStamp(image: testStamp(size, seed: run), x: r.int(-2...setup.panel.width - size.width),
                                                y: r.int(0...setup.panel.height - size.height))
            }
            if let clock = writer.scene.stamp, run % 2 == 0 {
                // Pushed text too: a second stamp, the clock's mirrored (no random number drawn).
                writer.scene.textStamp = SceneStamp(image: testStamp(clock.image.size, seed: run + 1000),
                                                    x: setup.panel.width - clock.x - clock.image.width,
                                                    y: setup.panel.height - clock.y - clock.image.height)
            }
            var offset = Double(r.int(0...setup.count - 1))
            for step in 0..<10 {
                if r.int(0...5) == 0 { session.decoded.insert(r.int(0...setup.count - 1)) }
                if r.int(0...2) == 0 {
                    // A crossfade frame from here to another page.
                    let to = Double(r.int(-1...setup.count))
                    let f = r.double(0.0...1.0)
                    let page = r.int(0...setup.count - 1)
                    compositor.layOut(&writer.scene, offset: offset, count: setup.count, wrap: setup.settings.wrap,
                                      page: page, pageCount: setup.count, image: image)
                    compositor.layOut(&writer.incoming, offset: to, count: setup.count, wrap: setup.settings.wrap,
                                      page: page, pageCount: setup.count, image: image)
                    writer.fade = f
                    let buffer = try #require(session.display.acquire())
                    let window = writer.draw(into: buffer)
                    #expect(window == PixelPoint(x: 0, y: 0), "run \(run) step \(step): the window moved during a crossfade")
                    try session.display.present(buffer, window: window)
                    writer.fade = nil
                    // The clock stays put over both pictures.
                    writer.incoming.stamp = writer.scene.stamp
                    writer.incoming.textStamp = writer.scene.textStamp
                    let a = ScreenWriterTests.frame(compositor, writer.scene)
                    let b = ScreenWriterTests.frame(compositor, writer.incoming)
                    var wrong = 0
                    for y in 0..<a.height {
                        for x in 0..<a.width {
                            let want = Self.lerp(a.row(y)[x], b.row(y)[x], f)
                            if Self.distance(session.display.pixel(x: x, y: y), want) > 2 { wrong += 1 }
                        }
                    }
                    #expect(wrong == 0, "run \(run) step \(step): crossfade \(offset) to \(to) at \(f): \(wrong) pixels wrong")
                    if wrong > 0 { return }
                    offset = f < 0.5 ? offset : to
                } else {
                    let moving = r.bool()
                    let travel = r.bool() ? 1 : -1
                    if moving { offset += Double(travel) * r.double(0.01...0.45) }
                    let wrong = try session.frame(offset, page: r.int(0...setup.count - 1), moving: moving, travel: travel)
                    #expect(wrong == 0, "run \(run) step \(step): frame at \(offset) after a crossfade: \(wrong) pixels wrong")
                    if wrong > 0 { return }
                }
            }
        }
    }
}
