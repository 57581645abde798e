import Foundation
import Testing
@testable import CarouselAlbum

@Suite("[images] recursive: pictures in subfolders, listed and watched")
struct RecursiveScanTests {
    @Test("subfolder pictures are listed by relative path in natural order, folder by folder")
    func listedInOrder() throws {
        let folder = try ScratchFolder()
        try folder.write("b.jpg", bytes: 1)
        try folder.write("a10.jpg", bytes: 1)
        try folder.write("a2/z.jpg", bytes: 1)
        try folder.write("a2/deeper/c.png", bytes: 1)
        try folder.write("a10/x.jpg", bytes: 1)
        try folder.write("a b.jpg", bytes: 1)
        try folder.write(".thumbnails/t.jpg", bytes: 1)
        let entries = try Album.scan(folder: folder.path, order: .name, recursive: true)
        #expect(entries.map(\.name) == ["a b.jpg", "a2/deeper/c.png", "a2/z.jpg", "a10/x.jpg", "a10.jpg", "b.jpg"])
        #expect(entries.map(\.path) == entries.map { folder.url($0.name) })
    }

    @Test("recursive = false ignores subfolders, as before")
    func notRecursive() throws {
        let folder = try ScratchFolder()
        try folder.write("top.jpg", bytes: 1)
        try folder.write("sub/inner.jpg", bytes: 1)
        #expect(try Album.scan(folder: folder.path, order: .name).map(\.name) == ["top.jpg"])
        #expect(try Album.scan(folder: folder.path, order: .name, recursive: false).map(\.name) == ["top.jpg"])
    }

    @Test("symbolic links to folders are followed; a loop or a second link to a folder adds nothing")
    func symlinkLoop() throws {
        let folder = try ScratchFolder()
        let outside = try ScratchFolder()
        try outside.write("usb.jpg", bytes: 1)
        try folder.write("a/one.jpg", bytes: 1)
        try folder.symlink("a/up", to: "..")
        try folder.symlink("a/self", to: ".")
        try folder.symlink("b", to: "a")
        try folder.symlink("stick", to: outside.path)
        let listing = try Album.scanListing(folder: folder.path, order: .name, recursive: true)
        #expect(listing.entries.map(\.name) == ["a/one.jpg", "stick/usb.jpg"])
        #expect(listing.skipped.isEmpty)
        #expect(try Album.subfolders(of: folder.path) == ["a", "stick"])
    }

    @Test("folders nested past the bound are left out with one line")
    func depthBound() throws {
        let folder = try ScratchFolder()
        var path = ""
        for level in 1...(Album.maxDepth + 3) {
            path += "d\(level)/"
            try folder.write(path + "p\(level).jpg", bytes: 1)
        }
        let listing = try Album.scanListing(folder: folder.path, order: .name, recursive: true)
        #expect(listing.entries.count == Album.maxDepth)
        let files = Set(listing.entries.map { $0.name.split(separator: "/").last.map(String.init) ?? "" })
        #expect(files == Set((1...Album.maxDepth).map { "p\($0).jpg" }))
        #expect(listing.skipped.count == 1)
        #expect(listing.skipped.first?.reason == .tooDeep(limit: Album.maxDepth))
        #expect(listing.skipped.first?.description.contains("\(Album.maxDepth) levels") == true)
    }

    @Test("more subfolders than the bound: the first ones in order are entered, one line for the rest")
    func folderCountBound() throws {
        let folder = try ScratchFolder()
        for i in 1...(Album.maxSubfolders + 5) { try folder.write("f\(i)/p.jpg") }
        let listing = try Album.scanListing(folder: folder.path, order: .name, recursive: true)
        #expect(listing.entries.count == Album.maxSubfolders)
        #expect(listing.entries.last?.name == "f\(Album.maxSubfolders)/p.jpg")
        #expect(listing.skipped.map(\.reason) == [.tooManyFolders(limit: Album.maxSubfolders)])
        #expect(listing.skipped.first?.path == folder.url("f\(Album.maxSubfolders + 1)"))
        #expect(try Album.subfolders(of: folder.path).count == Album.maxSubfolders)
    }

    @Test("a subfolder that cannot be read is one line; the others are shown")
    func unreadableSubfolder() throws {
        guard !runningAsRoot else { return }
        let folder = try ScratchFolder()
        try folder.write("ok/a.jpg", bytes: 1)
        try folder.write("locked/b.jpg", bytes: 1)
        #expect(chmod(folder.url("locked"), 0) == 0)
        defer { chmod(folder.url("locked"), 0o755) }
        let listing = try Album.scanListing(folder: folder.path, order: .name, recursive: true)
        #expect(listing.entries.map(\.name) == ["ok/a.jpg"])
        #expect(listing.skipped.map(\.path) == [folder.url("locked")])
    }
}

@Suite("FolderWatcher with recursive: subfolders watched too")
struct RecursiveWatcherTests {
    @Test("a subfolder created later with pictures is seen")
    func newSubfolder() throws {
        let folder = try ScratchFolder()
        let watcher = try FolderWatcher(folder: folder.path, recursive: true)
        try folder.mkdir("2024")
        var change = try collect(watcher) { $0.subfoldersChanged }
        #expect(change.subfoldersChanged)
        #expect(watcher.watchedFolders == ["2024"])
        try folder.write("2024/new.jpg", bytes: 3)
        change = try collect(watcher) { !$0.appeared.isEmpty }
        #expect(change.appeared == ["2024/new.jpg"])
        // Made with its pictures in one go (mkdir -p; cp): the rescan after the change sees them.
        try folder.write("2025/deep/x.jpg", bytes: 3)
        change = try collect(watcher) { _ in watcher.watchedFolders.contains("2025/deep") }
        #expect(change.needsRescan)
        #expect(try Album.scan(folder: folder.path, order: .name, recursive: true).map(\.name)
            == ["2024/new.jpg", "2025/deep/x.jpg"])
        try folder.write("2025/deep/y.jpg", bytes: 3)
        change = try collect(watcher) { !$0.appeared.isEmpty }
        #expect(change.appeared == ["2025/deep/y.jpg"])
    }

    @Test("a subfolder moved away and another moved in its place: the new one is watched, the old one not")
    func swappedByMove() throws {
        let folder = try ScratchFolder()
        let outside = try ScratchFolder()
        try folder.write("trip/old.jpg", bytes: 3)
        try outside.write("incoming/new.jpg", bytes: 3)
        let watcher = try FolderWatcher(folder: folder.path, recursive: true)
        #expect(rename(folder.url("trip"), outside.url("trip-old")) == 0)
        #expect(rename(outside.url("incoming"), folder.url("trip")) == 0)
        var change = try collect(watcher) { $0.subfoldersChanged }
        #expect(change.needsRescan)
        #expect(try Album.scan(folder: folder.path, order: .name, recursive: true).map(\.name) == ["trip/new.jpg"])
        try outside.write("trip-old/ghost.jpg", bytes: 3)
        try folder.write("trip/later.jpg", bytes: 3)
        change = try collect(watcher) { !$0.appeared.isEmpty }
        #expect(change.appeared == ["trip/later.jpg"])
    }

    @Test("a subfolder deleted and created again is watched again")
    func recreated() throws {
        let folder = try ScratchFolder()
        try folder.write("sub/a.jpg", bytes: 3)
        let watcher = try FolderWatcher(folder: folder.path, recursive: true)
        #expect(watcher.watchedFolders == ["sub"])
        try FileManager.default.removeItem(atPath: folder.url("sub"))
        var change = try collect(watcher) { $0.subfoldersChanged }
        #expect(change.removed == ["sub/a.jpg"] || change.subfoldersChanged)
        try folder.mkdir("sub")
        change = try collect(watcher) { _ in watcher.watchedFolders == ["sub"] }
        #expect(change.subfoldersChanged)
        try folder.write("sub/b.jpg", bytes: 3)
        change = try collect(watcher) { !$0.appeared.isEmpty }
        #expect(change.appeared == ["sub/b.jpg"])
    }

    @Test("the images folder itself swapped by mv: the old tree is no longer watched, the new one is")
    func topFolderSwapped() throws {
        let parent = try ScratchFolder()
        try parent.write("images/old/a.jpg", bytes: 3)
        try parent.write("next/new/b.jpg", bytes: 3)
        let watcher = try FolderWatcher(folder: parent.url("images"), recursive: true)
        #expect(watcher.watchedFolders == ["old"])
        #expect(rename(parent.url("images"), parent.url("images-old")) == 0)
        var change = try collect(watcher) { $0.folderVanished }
        #expect(change.folderVanished)
        #expect(watcher.watchedFolders.isEmpty)
        try parent.write("images-old/old/ghost.jpg", bytes: 3)
        #expect(rename(parent.url("next"), parent.url("images")) == 0)
        change = try collect(watcher) { $0.folderReplaced }
        #expect(watcher.watchedFolders == ["new"])
        try parent.write("images/new/c.jpg", bytes: 3)
        change = try collect(watcher) { !$0.appeared.isEmpty }
        #expect(change.appeared == ["new/c.jpg"])
    }

    @Test("a subfolder the kernel refuses to watch is said once, and again only after a recovery")
    func refused() throws {
        let folder = try ScratchFolder()
        let watcher = try FolderWatcher(folder: folder.path, recursive: true)
        #expect(watcher.takeNewWatchFailure() == nil)
        watcher.addSubfolderWatch = { _, _, _ in (-1, ENOSPC) }
        try folder.mkdir("full")
        _ = try collect(watcher) { $0.subfoldersChanged }
        let failure = try #require(watcher.takeNewWatchFailure())
        #expect(failure.path == folder.url("full"))
        #expect(failure.description.contains("fs.inotify.max_user_watches"))
        #expect(watcher.takeNewWatchFailure() == nil)
        #expect(watcher.watchedFolders.isEmpty)
        // Still refused at the next change: not said again.
        try folder.mkdir("more")
        _ = try collect(watcher) { $0.subfoldersChanged }
        #expect(watcher.takeNewWatchFailure() == nil)
        // Room again: all watched. Refused anew: said again.
        watcher.addSubfolderWatch = { fd, path, mask in (inotify_add_watch(fd, path, mask), 0) }
        try folder.mkdir("third")
        _ = try collect(watcher) { $0.subfoldersChanged }
        #expect(watcher.watchedFolders == ["full", "more", "third"])
        #expect(watcher.takeNewWatchFailure() == nil)
        watcher.addSubfolderWatch = { _, _, _ in (-1, ENOSPC) }
        try folder.mkdir("fourth")
        _ = try collect(watcher) { $0.subfoldersChanged }
        #expect(watcher.takeNewWatchFailure() != nil)
    }

    @Test("a symbolic link loop is watched once per folder and does not hang")
    func symlinkLoop() throws {
        let folder = try ScratchFolder()
        try folder.write("a/one.jpg", bytes: 3)
        try folder.symlink("a/up", to: "..")
        let watcher = try FolderWatcher(folder: folder.path, recursive: true)
        #expect(watcher.watchedFolders == ["a"])
        try folder.symlink("a/again", to: "../a")
        try folder.symlink("elsewhere", to: folder.url("a"))
        _ = try collect(watcher, timeout: .milliseconds(300)) { _ in false }
        #expect(watcher.watchedFolders == ["a"])
        try folder.write("a/two.jpg", bytes: 3)
        let change = try collect(watcher) { !$0.appeared.isEmpty }
        #expect(change.appeared == ["a/two.jpg"])
    }

    @Test("a symbolic link to a folder made later is watched through the link")
    func linkedFolder() throws {
        let folder = try ScratchFolder()
        let stick = try ScratchFolder()
        let watcher = try FolderWatcher(folder: folder.path, recursive: true)
        try folder.symlink("stick", to: stick.path)
        var change = try collect(watcher) { $0.subfoldersChanged }
        #expect(change.subfoldersChanged)
        #expect(watcher.watchedFolders == ["stick"])
        try stick.write("holiday.jpg", bytes: 3)
        change = try collect(watcher) { !$0.appeared.isEmpty }
        #expect(change.appeared == ["stick/holiday.jpg"])
        #expect(unlink(folder.url("stick")) == 0)
        change = try collect(watcher) { $0.subfoldersChanged }
        #expect(watcher.watchedFolders.isEmpty)
    }

    @Test("recursive = false: nothing in subfolders is reported")
    func notRecursive() throws {
        let folder = try ScratchFolder()
        let watcher = try FolderWatcher(folder: folder.path)
        try folder.mkdir("sub")
        try folder.write("sub/a.jpg", bytes: 3)
        #expect(becomesReadable(watcher, timeout: 5_000))
        #expect(try watcher.drain().isEmpty)
        #expect(watcher.watchedFolders.isEmpty)
    }
}
