// The comparison itself has teeth: the tolerance that passes correct frames
// fails frames that are wrong in the ways a renderer goes wrong. Only
// references are compared here (no renderer), so this holds whatever the
// code under test does.

import Foundation
import Testing

@Suite("The reference comparison rejects wrong frames", .enabled(if: Tools.imageMagickAvailable, Comment(rawValue: imageMagickMissing)))
struct ComparisonTests {
    @Test("shifted, swapped, mirrored or missing items fall below the PSNR threshold")
    func teeth() throws {
        let scratch = try Scratch("teeth")
        let s = Scene()
        let pictures = try s.pictures.enumerated().map { try $1.make(in: scratch, name: "p\($0)") }
        let good = try reference(s, pictures: pictures, offset: 0.5, png: scratch.file("good.png"))
        #expect(good.image.psnr(against: good.image) == .infinity)

        // 3 pixels of shift (offset 0.5 → 0.5 + 3/320).
        let shifted = try reference(s, pictures: pictures, offset: 0.5 + 3.0 / 320, png: scratch.file("shift.png"))
        // 1 pixel of shift: too little for the PSNR, which is why there are edge probes.
        let nudged = try reference(s, pictures: pictures, offset: 0.5 + 1.0 / 320, png: scratch.file("nudge.png"))
        let nudgeCaught = good.probes.filter { nudged.image.pixel($0.x, $0.y).distance(to: $0.expected) > $0.tolerance }
        #expect(nudgeCaught.count >= 2, "a one-pixel shift is not noticed by the probes")
        // Items 1 and 2 swapped.
        let swapped = try reference(s, pictures: [pictures[0], pictures[2], pictures[1]], offset: 0.5,
                                    png: scratch.file("swap.png"))
        // The first item mirrored (an EXIF or rotation mistake).
        var mirrored = pictures[0]
        mirrored.path = scratch.file("mirror.png")
        try Tools.magick([pictures[0].path, "-flop", mirrored.path])
        let flopped = try reference(s, pictures: [mirrored, pictures[1], pictures[2]], offset: 0.5,
                                    png: scratch.file("flop.png"))
        // The dots one page off.
        let dotsOff = try reference(s, pictures: pictures, offset: 1.0, png: scratch.file("page.png"))
        // A picture not decoded in time: background where item 1 should be.
        var blank = pictures[1]
        blank.path = scratch.file("blank.png")
        try Tools.magick(["-size", "160x100", "xc:black", blank.path])
        let missing = try reference(s, pictures: [pictures[0], blank, pictures[2]], offset: 0.5,
                                    png: scratch.file("missing.png"))

        for (name, wrong) in [("shifted 3 px", shifted), ("swapped", swapped), ("mirrored", flopped),
                              ("missing item", missing)] {
            let psnr = good.image.psnr(against: wrong.image)
            #expect(psnr < minimumPSNR, "\(name): PSNR \(psnr) dB would pass")
            if ProcessInfo.processInfo.environment["CAROUSEL_RENDER_REPORT"] != nil {
                print("PSNR \(String(format: "%.2f", psnr)) dB: a reference \(name)")
            }
            let caught = good.probes.filter { wrong.image.pixel($0.x, $0.y).distance(to: $0.expected) > $0.tolerance }
            #expect(!caught.isEmpty, "\(name): no probe notices")
        }
        // A dot one page off is a few dozen pixels: PSNR barely moves, the dot probes notice.
        let caught = good.probes.filter { dotsOff.image.pixel($0.x, $0.y).distance(to: $0.expected) > $0.tolerance }
        #expect(caught.contains { $0.what.contains("dot") }, "the dot probes notice the current page")
    }

    @Test("a pair of portraits drawn wrong falls below the threshold")
    func pairTeeth() throws {
        let scratch = try Scratch("pair-teeth")
        var s = Scene()
        s.pairPortraits = true
        s.itemSize = 0.8
        s.spacing = 20
        s.pictures = PairPictures.folder
        let pictures = try s.pictures.enumerated().map { try $1.make(in: scratch, name: "p\($0)") }
        let good = try reference(s, pictures: pictures, offset: 1, png: scratch.file("good.png"))
        // The halves swapped.
        let swapped = try reference(s, pictures: [pictures[0], pictures[2], pictures[1], pictures[3]], offset: 1,
                                    png: scratch.file("swap.png"))
        // Not paired: the first portrait alone on the page.
        var alone = s
        alone.pairPortraits = false
        let unpaired = try reference(alone, pictures: pictures, offset: 1, png: scratch.file("alone.png"))
        // The left half mirrored.
        var mirrored = pictures[1]
        mirrored.path = scratch.file("mirror.png")
        try Tools.magick([pictures[1].path, "-flop", mirrored.path])
        let flopped = try reference(s, pictures: [pictures[0], mirrored, pictures[2], pictures[3]], offset: 1,
                                    png: scratch.file("flop.png"))
        for (name, wrong) in [("halves swapped", swapped), ("not paired", unpaired), ("a half mirrored", flopped)] {
            let psnr = good.image.psnr(against: wrong.image)
            #expect(psnr < minimumPSNR, "\(name): PSNR \(psnr) dB would pass")
            let caught = good.probes.filter { wrong.image.pixel($0.x, $0.y).distance(to: $0.expected) > $0.tolerance }
            #expect(!caught.isEmpty, "\(name): no probe notices")
        }
        // Probes sit in the gap itself: a picture drawn over it is noticed.
        #expect(good.probes.filter { $0.what.contains("gap between the pair") }.count >= 2,
                "no probe in the gap between the halves")
    }

    @Test("the reference agrees with its own probes")
    func selfConsistent() throws {
        let scratch = try Scratch("self")
        var s = Scene()
        s.itemSize = 0.8
        s.spacing = 20
        s.rotation = 270
        let pictures = try s.pictures.enumerated().map { try $1.make(in: scratch, name: "p\($0)") }
        for offset in [0.0, 0.5, 2.75] {
            let ref = try reference(s, pictures: pictures, offset: offset, png: scratch.file("r.png"))
            let wrong = ref.probes.filter { ref.image.pixel($0.x, $0.y).distance(to: $0.expected) > $0.tolerance }
            #expect(wrong.isEmpty, "offset \(offset): \(wrong.count) probes disagree, e.g. \(wrong.first.map(\.what) ?? "")")
        }
        // Pairs too: halves of a cover fit end on picture pixels next to the gap.
        var pairs = s
        pairs.rotation = 90
        pairs.panelWidth = 200
        pairs.panelHeight = 320
        pairs.spacing = 13
        pairs.fit = "cover"
        pairs.pairPortraits = true
        pairs.pictures = PairPictures.folder
        let pairPictures = try pairs.pictures.enumerated().map { try $1.make(in: scratch, name: "q\($0)") }
        for offset in [0.0, 0.5, 1.0] {
            let ref = try reference(pairs, pictures: pairPictures, offset: offset, png: scratch.file("q.png"))
            let wrong = ref.probes.filter { ref.image.pixel($0.x, $0.y).distance(to: $0.expected) > $0.tolerance }
            #expect(wrong.isEmpty, "pairs at offset \(offset): \(wrong.count) probes disagree, e.g. \(wrong.first.map(\.what) ?? "")")
        }
    }
}
