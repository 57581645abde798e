// [images] recursive in the daemon: pictures in subfolders are shown, a
// subfolder made later is seen, and the position names them by relative path.

@testable import CarouselDaemon
@testable import CarouselAlbum
import CarouselCore
import CarouselServices
import Foundation
import Testing

@Suite("[images] recursive in the daemon (offscreen, manual clock)") struct RecursiveAlbumTests {
    func move(_ d: OffscreenDaemon, _ name: String, into subfolder: String) throws {
        let images = d.folder.appendingPathComponent("images")
        try FileManager.default.createDirectory(at: images.appendingPathComponent(subfolder),
                                                withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: images.appendingPathComponent(name),
                                         to: images.appendingPathComponent("\(subfolder)/\(name)"))
    }

    @Test func subfolderPicturesAreShownAndAFolderMadeLaterIsSeen() throws {
        let d = try OffscreenDaemon(ini: "[images]\nrecursive = true\n")
        #expect(d.daemon.album.count == 3)
        try move(d, "02-sunset.jpg", into: "trip")
        d.daemon.folderChanged()
        #expect(d.daemon.album.entries.map(\.name) == ["01-mountains.jpg", "04-panels.png", "trip/02-sunset.jpg"])
        // A folder made with a picture already in it (mkdir -p; cp): nothing
        // changes in the top folder but a new folder, which must be enough.
        let later = d.folder.appendingPathComponent("images/later/deeper")
        try FileManager.default.createDirectory(at: later, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: demoImages.appendingPathComponent("03-portrait.jpg"),
                                         to: later.appendingPathComponent("03-portrait.jpg"))
        d.daemon.folderChanged()
        #expect(d.daemon.album.entries.map(\.name) == ["01-mountains.jpg", "04-panels.png", "later/deeper/03-portrait.jpg",
                                                        "trip/02-sunset.jpg"])
        // And a picture added to it afterwards, through its own watch.
        try FileManager.default.copyItem(at: demoImages.appendingPathComponent("02-sunset.jpg"),
                                         to: later.appendingPathComponent("02-sunset.jpg"))
        d.daemon.folderChanged()
        #expect(d.daemon.album.count == 5)
    }

    @Test func aSubfolderTheKernelRefusesToWatchIsLoggedAndStillShown() throws {
        let d = try OffscreenDaemon(ini: "[images]\nrecursive = true\n")
        let watcher = try #require(d.daemon.service(FolderWatchService.self)?.watcher)
        watcher.addSubfolderWatch = { _, _, _ in (-1, ENOSPC) }
        try move(d, "02-sunset.jpg", into: "trip")
        d.daemon.folderChanged()
        #expect(d.daemon.album.entries.map(\.name) == ["01-mountains.jpg", "04-panels.png", "trip/02-sunset.jpg"])
        // The daemon took the failure (its one warning line).
        #expect(watcher.takeNewWatchFailure() == nil)
    }

    @Test func withoutRecursiveSubfoldersAreNotShown() throws {
        let d = try OffscreenDaemon()
        try move(d, "02-sunset.jpg", into: "trip")
        d.daemon.folderChanged()
        #expect(d.daemon.album.entries.map(\.name) == ["01-mountains.jpg", "04-panels.png"])
    }

    @Test func aReloadTurningRecursiveOnListsAndWatchesSubfolders() throws {
        let d = try OffscreenDaemon(images: ["01-mountains.jpg", "trip/02-sunset.jpg"])
        #expect(d.daemon.album.entries.map(\.name) == ["01-mountains.jpg"])
        let ini = d.folder.appendingPathComponent("c.ini")
        let text = try String(contentsOf: ini, encoding: .utf8)
        try Data(text.replacingOccurrences(of: "[autoplay]", with: "recursive = true\n[autoplay]").utf8).write(to: ini)
        _ = d.daemon.reload()
        #expect(d.daemon.album.entries.map(\.name) == ["01-mountains.jpg", "trip/02-sunset.jpg"])
        // The new watcher watches the subfolder.
        try FileManager.default.copyItem(at: demoImages.appendingPathComponent("04-panels.png"),
                                         to: d.folder.appendingPathComponent("images/trip/04-panels.png"))
        d.daemon.folderChanged()
        #expect(d.daemon.album.count == 3)
    }

    @Test func thePositionNamesASubfolderPictureByItsRelativePath() throws {
        let state = try PositionTests.StateDirectory()
        let first = try OffscreenDaemon(ini: "[images]\nrecursive = true\n", stateDirectory: state.path)
        try move(first, "02-sunset.jpg", into: "trip")
        first.daemon.folderChanged()
        first.advance(ms: 0)
        #expect(first.daemon.perform(.goto(index: 2, duration: nil)) == nil)
        for _ in 0..<100 { first.advance(ms: 20) }
        #expect(state.contents == "trip/02-sunset.jpg\n")
        // The same album after a restart, with a picture sorted before it
        // added meanwhile: it comes back on that picture.
        let again = try OffscreenDaemon(images: ["01-mountains.jpg", "04-panels.png", "trip/01-mountains.jpg",
                                                 "trip/02-sunset.jpg"],
                                        ini: "[images]\nrecursive = true\n", stateDirectory: state.path)
        #expect(again.daemon.model.currentItemIndex(at: Timestamp(microseconds: again.now)) == 3)
    }
}
