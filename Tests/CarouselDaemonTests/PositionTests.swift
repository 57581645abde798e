// The picture on screen survives a restart and a power cut: kept by name in
// the state directory, written once per change, restored at start.

import CarouselDaemon
import CarouselCore
import Foundation
import Testing

@Suite("The position across restarts (offscreen, manual clock)") struct PositionTests {
    /// A state directory of its own, removed with the test.
    final class StateDirectory {
        let path: String
        init() throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("carouseld-state-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        var file: String { path + "/position" }
        var contents: String? { try? String(contentsOfFile: file, encoding: .utf8) }
        /// The file's inode: every write renames a new file into place.
        var inode: UInt64? {
            (try? FileManager.default.attributesOfItem(atPath: file))?[.systemFileNumber] as? UInt64
        }
        func write(_ text: String) throws { try Data(text.utf8).write(to: URL(fileURLWithPath: file)) }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    func index(_ d: OffscreenDaemon) -> Int { d.daemon.model.currentItemIndex(at: Timestamp(microseconds: d.now)) }

    /// Goes to `item` with the autoplay transition and lets it come to rest.
    func go(_ d: OffscreenDaemon, to item: Int) {
        #expect(d.daemon.perform(.goto(index: item, duration: nil)) == nil)
        for _ in 0..<100 { d.advance(ms: 20) }
        #expect(!d.daemon.model.isMoving)
    }

    @Test func aRestartComesBackOnTheSamePicture() throws {
        let state = try StateDirectory()
        do {
            let d = try OffscreenDaemon(stateDirectory: state.path)
            d.advance(ms: 0)
            go(d, to: 2)
            #expect(state.contents == "04-panels.png\n")
        }
        let again = try OffscreenDaemon(stateDirectory: state.path)
        #expect(index(again) == 2)
        again.advance(ms: 0)
        #expect(index(again) == 2)
        #expect(again.daemon.statusLine.hasSuffix("04-panels.png"))
    }

    @Test func byNameNotIndex() throws {
        let state = try StateDirectory()
        // Item 2 of the three pictures of the last run.
        try state.write("04-panels.png\n")
        // A picture sorted before it was added while the daemon was down.
        let d = try OffscreenDaemon(images: ["01-mountains.jpg", "02-sunset.jpg", "03-portrait.jpg", "04-panels.png"],
                                    stateDirectory: state.path)
        #expect(index(d) == 3)
    }

    @Test func writtenOncePerChangeOfThePictureNotPerFrame() throws {
        let state = try StateDirectory()
        let d = try OffscreenDaemon(stateDirectory: state.path)
        d.advance(ms: 0)
        // The start picture is written once, at rest.
        #expect(state.contents == "01-mountains.jpg\n")
        let first = try #require(state.inode)
        for _ in 0..<50 { d.advance(ms: 20) }
        d.daemon.settleDecodes()
        for _ in 0..<50 { d.advance(ms: 20) }
        #expect(state.inode == first)
        go(d, to: 1)
        let second = try #require(state.inode)
        #expect(second != first)
        #expect(state.contents == "02-sunset.jpg\n")
        // The same picture again: nothing to write.
        go(d, to: 1)
        for _ in 0..<50 { d.advance(ms: 20) }
        #expect(state.inode == second)
    }

    @Test func aSlideAcrossSeveralPicturesWritesOnlyWhereItRests() throws {
        let state = try StateDirectory()
        let d = try OffscreenDaemon(images: ["01-mountains.jpg", "02-sunset.jpg", "03-portrait.jpg", "04-panels.png"],
                                    stateDirectory: state.path)
        d.advance(ms: 0)
        let first = try #require(state.inode)
        #expect(d.daemon.perform(.goto(index: 3, duration: 1)) == nil)
        // Half way the slide passes other pictures: nothing is written yet.
        for _ in 0..<25 { d.advance(ms: 20) }
        #expect(d.daemon.model.isMoving)
        #expect(state.inode == first)
        for _ in 0..<50 { d.advance(ms: 20) }
        #expect(state.contents == "04-panels.png\n")
    }

    @Test func resumeFalseStartsAtStartIndex() throws {
        let state = try StateDirectory()
        try state.write("04-panels.png\n")
        let d = try OffscreenDaemon(ini: "[images]\nresume = false\n[carousel]\nstart_index = 1\n", stateDirectory: state.path)
        #expect(index(d) == 1)
        go(d, to: 0)
        // Nor is the position written.
        #expect(state.contents == "04-panels.png\n")
    }

    @Test func aPictureThatIsGoneStartsAtStartIndex() throws {
        let state = try StateDirectory()
        try state.write("09-removed.jpg\n")
        let d = try OffscreenDaemon(ini: "[carousel]\nstart_index = 1\n", stateDirectory: state.path)
        #expect(index(d) == 1)
    }

    @Test(arguments: ["", "\n", "04-panels.png", "04-panels.png\nmore\n", "04-pan\u{0}els.png\n", "\u{FF}\n"])
    func aCorruptFileStartsAtStartIndex(text: String) throws {
        let state = try StateDirectory()
        var bytes = Data(text.utf8)
        if text == "\u{FF}\n" { bytes = Data([0xFF, 0xFE, 0x0A]) }
        try bytes.write(to: URL(fileURLWithPath: state.file))
        let d = try OffscreenDaemon(ini: "[carousel]\nstart_index = 1\n", stateDirectory: state.path)
        #expect(index(d) == 1)
        // And the file is written anew once the carousel rests.
        d.advance(ms: 0)
        #expect(state.contents == "02-sunset.jpg\n")
    }

    @Test func anUnreadableFileStartsAtStartIndex() throws {
        let state = try StateDirectory()
        // A directory where the file should be: open works, read fails (EISDIR).
        try FileManager.default.createDirectory(atPath: state.file, withIntermediateDirectories: false)
        let d = try OffscreenDaemon(ini: "[carousel]\nstart_index = 2\n", stateDirectory: state.path)
        #expect(index(d) == 2)
        go(d, to: 0)  // writing fails too (rename over a directory): logged, no crash
        #expect(index(d) == 0)
    }

    @Test func aMissingStateDirectoryIsNotFatal() throws {
        let d = try OffscreenDaemon(ini: "[carousel]\nstart_index = 1\n", stateDirectory: "/nonexistent/carouseld-state")
        #expect(index(d) == 1)
        go(d, to: 2)
        #expect(index(d) == 2)
    }

    /// Run by hand (scripts/run.sh, the demo), not by the unit whose
    /// StateDirectory= makes it: the folder is made, its parent existing.
    @Test func aStateDirectoryNotMadeYetIsMade() throws {
        let parent = try StateDirectory()
        let state = parent.path + "/carouseld"
        let d = try OffscreenDaemon(ini: "[carousel]\nstart_index = 1\n", stateDirectory: state)
        go(d, to: 2)
        let kept = try String(contentsOfFile: state + "/position", encoding: .utf8)
        #expect(kept.hasSuffix("\n") && !kept.dropLast().isEmpty, "\(kept)")
        let again = try OffscreenDaemon(ini: "[carousel]\nstart_index = 1\n", stateDirectory: state)
        #expect(index(again) == 2)
    }

    @Test func theStateDirectoryComesFromSystemd() {
        #expect(Daemon.Options.stateDirectory(environment: nil) == "/var/lib/carouseld")
        #expect(Daemon.Options.stateDirectory(environment: "") == "/var/lib/carouseld")
        #expect(Daemon.Options.stateDirectory(environment: "/var/lib/carouseld") == "/var/lib/carouseld")
        #expect(Daemon.Options.stateDirectory(environment: "/var/lib/a:/var/lib/b") == "/var/lib/a")
    }
}
