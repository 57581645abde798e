// A folder mixing good pictures with the broken-file corpus, through
// `carouseld render`: exit 0, only good pictures on screen, one
// `<4>skipping FILE: REASON` line per broken file of the folder.

import Foundation
import Testing

@Suite("Broken files through carouseld render", .enabled(if: Tools.imageMagickAvailable, Comment(rawValue: imageMagickMissing)))
struct BrokenFileRenderTests {
    /// The folder, in natural (= here alphabetical) order, and which files are broken.
    struct Album {
        var names: [String]
        var broken: Set<String>
        var pictures: [String: Picture]
        var folder: String
        func path(_ name: String) -> String { folder + "/" + name }
    }

    static func makeAlbum(in scratch: Scratch) throws -> Album {
        let folder = scratch.file("images")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var pictures: [String: Picture] = [:]
        for (name, palette) in [("01-good", 0), ("07-good", 1), ("08-good", 2), ("11-good", 3)] {
            pictures[name + ".png"] = try PictureSpec.quadrants(width: 160, height: 100, palette: palette)
                .make(in: scratch, name: "images/" + name)
        }
        let jpeg = [UInt8](try Data(contentsOf: URL(fileURLWithPath: ImagingFixtures.path("quadrants.jpg"))))
        let png = [UInt8](try Data(contentsOf: URL(fileURLWithPath: pictures["07-good.png"]!.path)))
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        let noise = (0..<4096).map { _ -> UInt8 in
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: seed >> 33)
        }
        let broken: [(String, [UInt8])] = [
            ("02-truncated.jpg", Array(jpeg.prefix(jpeg.count / 2))),
            ("03-garbage.jpg", [0xFF, 0xD8, 0xFF] + noise),
            ("04-empty.jpg", []),
            ("05-text.jpg", [UInt8](try Data(contentsOf: URL(fileURLWithPath: ImagingFixtures.path("text.jpg"))))),
            // A valid PNG header claiming far more pixels than max_pixels.
            ("06-bomb.png", [UInt8](try Data(contentsOf: URL(fileURLWithPath: ImagingFixtures.path("bomb.png"))))),
            ("09-truncated.png", Array(png.prefix(png.count / 2))),
            ("10-noise.png", noise),
        ]
        for (name, bytes) in broken { try scratch.write("images/" + name, bytes: bytes) }
        let names = (Array(pictures.keys) + broken.map(\.0)).sorted()
        return Album(names: names, broken: Set(broken.map(\.0)), pictures: pictures, folder: folder)
    }

    /// Which broken files `render` must name, and what is left to show.
    /// Every file is tried before the offset is counted: every broken file is
    /// named once, whether the frame would have met it or not, and item `i`
    /// is the `i`-th good picture. (The frame used to meet broken files one
    /// by one, so an offset counted broken files not decoded yet: with three
    /// good pictures among broken ones, offsets 0 and 1 both showed the first
    /// picture, and broken files off screen were never named.)
    static func expected(_ album: Album, _ s: Scene, offset: Double) -> (met: [String], remaining: [String]) {
        (album.names.filter { album.broken.contains($0) }, album.names.filter { !album.broken.contains($0) })
    }

    @Test("render at several offsets: exit 0, good pictures only, one skip line per broken file",
          arguments: [(1.0, [0, 0.5, 1, 3.5, 5.5, 10.5]), (0.6, [0, 2, 4.25])])
    func mixedFolder(itemSize: Double, offsets: [Double]) throws {
        let scratch = try Scratch("broken")
        let album = try Self.makeAlbum(in: scratch)
        var s = Scene()
        s.itemSize = itemSize
        s.spacing = itemSize < 1 ? 10 : 0
        // The dot count depends on how many files were found broken so far;
        // this test is about the pictures and the log.
        s.indicator.enabled = false
        let ini = try scratch.write("c.ini", s.ini(folder: album.folder))
        for offset in offsets {
            let label = "item_size \(itemSize), offset \(offset)"
            let (image, run) = try render(s, iniPath: ini, offset: offset, out: scratch.file("f-\(offset).png"))
            let (met, remaining) = Self.expected(album, s, offset: offset)

            // The log: exactly one `<4>skipping PATH: REASON` per broken file met.
            let lines = run.stderr.split(separator: "\n").map(String.init)
            let skips = lines.filter { $0.hasPrefix("<4>skipping ") }
            var named: [String] = []
            for line in skips {
                let rest = line.dropFirst("<4>skipping ".count)
                guard let name = album.names.first(where: { rest.hasPrefix(album.path($0) + ": ") }) else {
                    Issue.record("\(label): skip line names no file of the folder: \(line)")
                    continue
                }
                #expect(rest.count > album.path(name).count + 2, "\(label): no reason given: \(line)")
                named.append(name)
            }
            #expect(named.sorted() == met.sorted(), "\(label): skip lines for \(named.sorted()), expected \(met.sorted())\n\(run.stderr)")
            #expect(Set(named).count == named.count, "\(label): a file was reported twice\n\(run.stderr)")
            #expect(!lines.contains { $0.hasPrefix("<3>") }, "\(label): an error line\n\(run.stderr)")

            // The picture: what the remaining (good on screen) list shows.
            let pictures = remaining.map { album.pictures[$0] ?? Picture(path: album.path($0), width: 1, height: 1,
                                                                         quadrants: [], tolerance: 0, autoOrient: false) }
            let ref = try reference(s, pictures: pictures, offset: offset, png: scratch.file("ref-\(offset).png"))
            expectMatch(image, ref, label, scratch: scratch)
        }
    }

    @Test("a folder of broken files only: exit 0, a background frame, every file met is named")
    func onlyBroken() throws {
        let scratch = try Scratch("allbroken")
        let album = try Self.makeAlbum(in: scratch)
        for name in album.pictures.keys { try FileManager.default.removeItem(atPath: album.path(name)) }
        var s = Scene()
        s.indicator.enabled = false
        let ini = try scratch.write("c.ini", s.ini(folder: album.folder))
        let (image, run) = try render(s, iniPath: ini, offset: 0.5, out: scratch.file("f.png"))
        let skips = run.stderr.split(separator: "\n").filter { $0.hasPrefix("<4>skipping ") }
        #expect(skips.count == album.broken.count, "\(run.stderr)")
        // Nothing is left to show: the empty-folder picture (background and an icon).
        #expect(image.count(of: s.background) > 320 * 200 * 85 / 100)
    }
}
