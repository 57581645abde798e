// `carouseld simulate`'s `frame` step: the frame at an instant of a scripted
// gesture is exactly what `carouseld render` draws at the offset `probe`
// reports for that instant, and matches the ImageMagick reference.

import Foundation
import Testing

@Suite("simulate frame = render at the probed offset", .enabled(if: Tools.imageMagickAvailable, Comment(rawValue: imageMagickMissing)))
struct SimulateFrameTests {
    struct Probed {
        var t: Double
        var offset: Double
        var page: Int
    }

    /// The probe lines of simulate's output.
    static func probes(_ stdout: String) throws -> [Probed] {
        try stdout.split(separator: "\n").compactMap { line -> Probed? in
            guard let obj = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let p = obj["probe"] as? [String: Any] else { return nil }
            guard let t = (obj["t"] as? NSNumber)?.doubleValue, let o = (p["offset"] as? NSNumber)?.doubleValue,
                  let page = (p["page"] as? NSNumber)?.intValue
            else { throw ToolError(message: "probe line without t/offset/page: \(line)") }
            return Probed(t: t, offset: o, page: page)
        }
    }

    /// A finger path from x0 to x1 along y = 100, one move every 16 ms.
    static func drag(from x0: Int, to x1: Int, at t0: Int, ms: Int) -> String {
        var s = "at \(t0) down \(x0) 100\n"
        let n = ms / 16
        for k in 1...n {
            s += "at \(t0 + k * ms / n) move \(x0 + (x1 - x0) * k / n) 100\n"
        }
        return s
    }

    struct Gesture: Sendable, CustomTestStringConvertible {
        var name: String
        var script: String
        var frames: [Int]  // ms
        var rotation = 0
        var testDescription: String { name }
    }

    static let gestures: [Gesture] = [
        // Half a page to the left and held: offset about 0.5 while dragging.
        Gesture(name: "drag half a page forward and hold", script: drag(from: 260, to: 90, at: 0, ms: 320), frames: [200, 400]),
        // Backwards across the wrap seam: the unwrapped offset is negative,
        // probe reports it wrapped; both must show the last item then the first.
        Gesture(name: "drag half a page backward across the seam", script: drag(from: 60, to: 230, at: 0, ms: 320), frames: [400]),
        // Released: frames during the settle animation.
        Gesture(name: "release and settle", script: drag(from: 260, to: 90, at: 0, ms: 320) + "at 330 up\n", frames: [350, 420, 900]),
        Gesture(name: "drag on a panel turned 90° (layout 200x320)", script: drag(from: 185, to: 80, at: 0, ms: 320), frames: [400], rotation: 90),
    ]

    @Test("frames of a scripted drag", arguments: gestures)
    func frames(_ g: Gesture) throws {
        let binary = try Tools.requireCarouseld()
        let scratch = try Scratch("simulate")
        var s = Scene()
        s.rotation = g.rotation
        let pictures = try s.pictures.enumerated().map { try $1.make(in: scratch, name: "item\($0)") }
        let ini = try scratch.write("c.ini", s.ini(files: pictures.map(\.path)))
        // The script's size is the layout (logical) size; the PNG is what the panel shows.
        var script = "size \(s.logicalWidth)x\(s.logicalHeight)\n" + g.script
        for t in g.frames {
            script += "at \(t) probe\nat \(t) frame \(scratch.file("sim-\(t).png"))\n"
        }
        script += "until \(g.frames.max()!)\n"
        let scriptPath = try scratch.write("gesture.sim", timelineSorted(script))
        let run = try Tools.run(binary, ["simulate", scriptPath, "--config", ini])
        #expect(run.status == 0, "simulate exited \(run.status): \(run.stderr)")
        let probes = try Self.probes(run.text)
        #expect(probes.count == g.frames.count, "\(run.text)")

        for (t, probe) in zip(g.frames, probes) {
            let label = "\(g.name), t = \(t) ms, offset \(probe.offset)"
            let simulated = try RGBImage(file: scratch.file("sim-\(t).png"))
            let (rendered, _) = try render(s, iniPath: ini, offset: probe.offset, out: scratch.file("render-\(t).png"))
            // Same painter, same offset (modulo the wrap): identical pixels.
            #expect(simulated.width == rendered.width && simulated.height == rendered.height, "\(label)")
            if simulated.width == rendered.width, simulated.height == rendered.height {
                let differing = simulated.differingPixels(from: rendered)
                if differing != 0 {
                    scratch.keep()
                    Issue.record("\(label): simulate's frame and render's differ in \(differing) pixels (kept in \(scratch.path))")
                }
            }
            let ref = try reference(s, pictures: pictures, offset: probe.offset, png: scratch.file("ref-\(t).png"))
            expectMatch(simulated, ref, label, scratch: scratch)
        }
        if g.name.hasPrefix("drag half") {
            // It really is about half a page, and the seam case really crossed it.
            let o = probes.last!.offset
            #expect(abs(o - (g.name.contains("backward") ? 2.5 : 0.5)) < 0.1, "offset \(o)")
        }
    }

    @Test("a double-tapped frame is render --zoom of the zoom the tap made")
    func zoomedFrame() throws {
        let binary = try Tools.requireCarouseld()
        let scratch = try Scratch("simzoom")
        let picture = scratch.file("plasma.png")
        try Tools.magick(["-size", "640x400", "-seed", "5", "plasma:", "-blur", "0x1", picture])
        let ini = try scratch.write("c.ini", "[images]\nfiles = \(picture)\n[autoplay]\nenabled = false\n")
        let simulated = scratch.file("sim.png")
        let script = try scratch.write("zoom.sim", """
            size 320x200
            at 100 down 80 60
            at 140 up
            at 240 down 80 60
            at 280 up
            at 1500 probe
            at 1500 frame \(simulated)
            until 1500
            """)
        let run = try Tools.run(binary, ["simulate", script, "--config", ini])
        #expect(run.status == 0, "simulate exited \(run.status): \(run.stderr)")
        #expect(run.text.contains(#""zoom":2.5"#), "\(run.text)")
        // 2.5x about (80, 60): the frame's translation is p - 2.5 p.
        let rendered = scratch.file("render.png")
        let r = try Tools.run(binary, ["render", "--config", ini, "--size", "320x200", "--offset", "0",
                                       "--zoom=2.5,-120,-90", "--out", rendered])
        #expect(r.status == 0, "render exited \(r.status): \(r.stderr)")
        let a = try RGBImage(file: simulated), b = try RGBImage(file: rendered)
        #expect(a.differingPixels(from: b) == 0)
        let plain = scratch.file("plain.png")
        _ = try Tools.run(binary, ["render", "--config", ini, "--size", "320x200", "--offset", "0", "--out", plain])
        #expect(try RGBImage(file: plain).differingPixels(from: a) > 320 * 200 / 2, "the frame is zoomed")
    }

    /// `at` lines in time order (a probe and a frame may be written after later moves).
    func timelineSorted(_ script: String) -> String {
        var head: [String] = [], steps: [(Double, Int, String)] = [], tail: [String] = []
        for (n, line) in script.split(separator: "\n").map(String.init).enumerated() {
            let words = line.split(separator: " ")
            if words.first == "at", let t = Double(words[1]) {
                steps.append((t, n, line))
            } else if words.first == "until" {
                tail.append(line)
            } else {
                head.append(line)
            }
        }
        steps.sort { ($0.0, $0.1) < ($1.0, $1.1) }
        return (head + steps.map(\.2) + tail).joined(separator: "\n") + "\n"
    }
}
