// `[images] pair_portraits` on a running daemon (offscreen display, manual
// clock): the page of two portraits on screen, what status, goto and events
// say of it, a tap on each half, a reload turning it off, the position file.

import CarouselControl
import CarouselCore
import CarouselImaging
@testable import CarouselDaemon
import CarouselPlatform
import Foundation
import Testing

@Suite("Portrait pairs on the daemon") struct PortraitPairDaemonTests {
    /// The folder: a landscape, two portraits (red, then blue), a landscape.
    static func daemon(ini: String = "", stateDirectory: String? = nil) throws -> OffscreenDaemon {
        let d = try OffscreenDaemon(images: ["01-mountains.jpg", "04-panels.png"],
                                    ini: "[images]\npair_portraits = true\n" + ini, stateDirectory: stateDirectory,
                                    folderExtras: { images in
            for (name, color) in [("02-left.png", "red"), ("03-right.png", "blue")] {
                try run("/usr/bin/convert", ["-size", "60x100", "xc:\(color)", images.appendingPathComponent(name).path])
            }
        })
        d.showFirstPicture()
        return d
    }

    static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    static func names(_ value: JSONValue?) -> [String] {
        guard case let .array(items)? = value else { return [] }
        return items.compactMap { $0.stringValue.map { URL(fileURLWithPath: $0).lastPathComponent } }
    }

    @Test func twoPortraitsShareAPageThatStatusAndGotoName() throws {
        let d = try Self.daemon()
        let status = d.daemon.status()
        #expect(status["count"] == .int(3))
        #expect(status["pictures"] == .int(4))
        #expect(Self.names(status["images"]) == ["01-mountains.jpg"])
        // `list` names pictures, whatever shares a page.
        guard case .ok(let list) = d.answer("list") else { Issue.record("list refused"); return }
        #expect(list["count"] == .int(4))
        #expect(Self.names(list["images"]) == ["01-mountains.jpg", "02-left.png", "03-right.png", "04-panels.png"])
        guard case .ok = d.answer("goto 1") else { Issue.record("goto 1 refused"); return }
        for _ in 0..<60 { d.advance(ms: 20) }
        #expect(d.index == .int(1))
        #expect(Self.names(d.daemon.status()["images"]) == ["02-left.png", "03-right.png"])
        d.daemon.settleDecodes()
        for _ in 0..<3 { d.advance(ms: 20) }
        // The screen: the red portrait in the left half, the blue one in the right.
        #expect(d.backend.pixel(x: 80, y: 100) & 0xFFFFFF == 0xFF0000)
        #expect(d.backend.pixel(x: 240, y: 100) & 0xFFFFFF == 0x0000FF)
        #expect(d.daemon.statusLine.hasSuffix("02-left.png and \(d.folder.path)/images/03-right.png"))
    }

    @Test func aTapSelectsThePictureUnderTheFinger() throws {
        let d = try Self.daemon()
        _ = d.answer("goto 1")
        for _ in 0..<60 { d.advance(ms: 20) }
        var selected: [[String: JSONValue]] = []
        d.daemon.onEvent = { event in
            if case .didSelectItem = event.kind { selected.append(d.daemon.eventFields(event)) }
        }
        for x in [40.0, 290.0] {
            d.daemon.carryOut(.touch(.down(id: 3, at: .init(x: x, y: 100)), time: d.now))
            d.advance(ms: 50)
            d.daemon.carryOut(.touch(.up(id: 3), time: d.now))
            d.advance(ms: 400)
        }
        #expect(selected.count == 2)
        #expect(selected.map { $0["index"] } == [.int(1), .int(1)])
        #expect(selected.map { Self.names(.array([$0["image"] ?? .null])) } == [["02-left.png"], ["03-right.png"]])
        #expect(selected.allSatisfy { Self.names($0["images"]) == ["02-left.png", "03-right.png"] })
    }

    @Test func reloadTurningPairsOffKeepsThePictureOnScreen() throws {
        let d = try Self.daemon()
        _ = d.answer("goto 1")
        for _ in 0..<60 { d.advance(ms: 20) }
        guard case .ok = d.answer("set images.pair_portraits false") else { Issue.record("set refused"); return }
        d.advance(ms: 20)
        #expect(d.daemon.status()["count"] == .int(4))
        #expect(Self.names(d.daemon.status()["images"]) == ["02-left.png"])
        guard case .ok = d.answer("set images.pair_portraits true") else { Issue.record("set refused"); return }
        d.advance(ms: 20)
        #expect(d.daemon.status()["count"] == .int(3))
        #expect(Self.names(d.daemon.status()["images"]) == ["02-left.png", "03-right.png"])
    }

    @Test func thePositionFileNamesThePagesFirstPictureAndARestartComesBackToThePair() throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("carouseld-pairs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: state) }
        do {
            let d = try Self.daemon(stateDirectory: state.path)
            _ = d.answer("goto 2")
            for _ in 0..<60 { d.advance(ms: 20) }
            _ = d.answer("goto 1")
            for _ in 0..<60 { d.advance(ms: 20) }
        }
        let kept = try String(contentsOf: state.appendingPathComponent("position"), encoding: .utf8)
        #expect(kept == "02-left.png\n")
        let again = try Self.daemon(stateDirectory: state.path)
        #expect(again.index == .int(1))
        #expect(Self.names(again.daemon.status()["images"]) == ["02-left.png", "03-right.png"])
    }

    @Test func aPortraitPanelPairsNothing() throws {
        let d = try OffscreenDaemon(images: ["03-portrait.jpg", "01-mountains.jpg"], panel: PixelSize(width: 200, height: 320),
                                    ini: "[images]\npair_portraits = true\n", folderExtras: { images in
            try Self.run("/usr/bin/convert", ["-size", "60x100", "xc:red", images.appendingPathComponent("02-p.png").path])
        })
        #expect(d.daemon.status()["count"] == .int(3))
    }
}
