// Values at the edge of what is accepted render; values past it are refused
// with a message, never a trap (a trap is exit status 132 / SIGILL).

import Foundation
import Testing

@Suite("Accepted values are safe at run time") struct LimitTests {
    static func folder() throws -> String {
        let dir = NSTemporaryDirectory() + "carousel-limits-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir + "/images", withIntermediateDirectories: true)
        let demo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/demo/images/01-mountains.jpg")
        try FileManager.default.copyItem(atPath: demo.path, toPath: dir + "/images/01.jpg")
        return dir
    }

    @Test("the largest item_size renders; one past it is refused with FILE:LINE", arguments: [("16384", true), ("16385", false), ("100000", false)])
    func itemSize(value: String, accepted: Bool) throws {
        let carouseld = try Tools.requireCarouseld()
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let ini = dir + "/c.ini"
        try "[images]\npath = \(dir)/images\n[carousel]\nitem_size = \(value)\n".write(toFile: ini, atomically: true, encoding: .utf8)
        let run = try Tools.run(carouseld, ["render", "--config", ini, "--size", "320x200", "--out", dir + "/f.png"])
        if accepted {
            #expect(run.status == 0, "\(run.stderr)")
            #expect(FileManager.default.fileExists(atPath: dir + "/f.png"))
        } else {
            #expect(run.status == 2, "\(run.stderr)")
            #expect(run.stderr.contains("c.ini:4: item_size = '\(value)': out of range: allowed 0.05 to 16384"), "\(run.stderr)")
        }
    }

    @Test("an offset past the page arithmetic is refused, not a trap", arguments: ["1e19", "-1e19", "1000000001"])
    func hugeOffset(offset: String) throws {
        let carouseld = try Tools.requireCarouseld()
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let ini = dir + "/c.ini"
        try "[images]\npath = \(dir)/images\n".write(toFile: ini, atomically: true, encoding: .utf8)
        let run = try Tools.run(carouseld, ["render", "--config", ini, "--size", "320x200", "--offset", offset, "--out", dir + "/f.png"])
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stderr.contains("--offset must be a number from -1000000000 to 1000000000"), "\(run.stderr)")
        let edge = try Tools.run(carouseld, ["render", "--config", ini, "--size", "320x200", "--offset", "1e9", "--out", dir + "/f.png"])
        #expect(edge.status == 0, "\(edge.stderr)")
    }

    @Test("--size takes sides up to the screen limit and refuses the rest with a message",
          arguments: [("16384x1", true), ("1x16384", true), ("16385x10", false), ("0x0", false), ("100000x100000", false)])
    func panelSize(size: String, accepted: Bool) throws {
        let carouseld = try Tools.requireCarouseld()
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let ini = dir + "/c.ini"
        try "[images]\npath = \(dir)/images\n".write(toFile: ini, atomically: true, encoding: .utf8)
        let run = try Tools.run(carouseld, ["render", "--config", ini, "--size", size, "--out", dir + "/f.png"])
        if accepted {
            #expect(run.status == 0, "\(run.stderr)")
            #expect(FileManager.default.fileExists(atPath: dir + "/f.png"))
        } else {
            #expect(run.status == 64, "\(run.stderr)")
            #expect(run.stderr.contains("--size must be WIDTHxHEIGHT, each side 1 to 16384"), "\(run.stderr)")
        }
    }
}
