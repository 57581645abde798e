import Foundation
import Testing
@testable import CarouselAlbum

@Suite("FolderWatcher: inotify on the image folder")
struct FolderWatcherTests {
    @Test("nothing happened: drain reports nothing")
    func quiet() throws {
        // In a parent of its own: the parent is watched for the folder's name,
        // and other tests create and delete entries in the temporary directory.
        let parent = try ScratchFolder()
        try parent.mkdir("images")
        let watcher = try FolderWatcher(folder: parent.url("images"))
        #expect(watcher.fileDescriptor >= 0)
        #expect(!becomesReadable(watcher, timeout: 50))
        #expect(try watcher.drain().isEmpty)
        #expect(try watcher.drain() == FolderWatcher.Change())
    }

    @Test("hidden, temporary and non-image files and subfolders are not relevant")
    func irrelevant() throws {
        let folder = try ScratchFolder()
        let watcher = try FolderWatcher(folder: folder.path)
        try folder.write(".hidden.jpg", bytes: 3)
        try folder.write("a.jpg~", bytes: 3)
        try folder.write("notes.txt", bytes: 3)
        try folder.mkdir("sub.jpg")
        try folder.write("sub.jpg/inside.jpg", bytes: 3)
        #expect(rename(folder.url(".hidden.jpg"), folder.url("other.tmp")) == 0)
        #expect(unlink(folder.url("notes.txt")) == 0)
        // The events are queued; draining them finds nothing to act on.
        #expect(becomesReadable(watcher, timeout: 5_000))
        #expect(try watcher.drain().isEmpty)
    }

    @Test("a file appears when it is closed after writing, not when it is created")
    func createdAndClosed() throws {
        let folder = try ScratchFolder()
        let watcher = try FolderWatcher(folder: folder.path)
        let fd = open(folder.url("new.jpg"), O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        try #require(fd >= 0)
        let half = [UInt8](repeating: 1, count: 512)
        #expect(half.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == 512)
        // IN_CREATE is queued by now (inotify queues events inside the system
        // call); still being written, so not yet relevant.
        #expect(becomesReadable(watcher, timeout: 5_000))
        #expect(try watcher.drain().appeared.isEmpty)
        close(fd)
        let change = try collect(watcher) { !$0.appeared.isEmpty }
        #expect(change.appeared == ["new.jpg"])
        #expect(change.removed.isEmpty)
        #expect(change.needsRescan)
        #expect(!change.folderVanished)
    }

    @Test("a file renamed into the folder appears; its temporary name does not")
    func renameIn() throws {
        let folder = try ScratchFolder()
        let outside = try ScratchFolder()
        let watcher = try FolderWatcher(folder: folder.path)
        try folder.write("photo.jpg.part", bytes: 10)
        #expect(rename(folder.url("photo.jpg.part"), folder.url("photo.jpg")) == 0)
        var change = try collect(watcher) { !$0.appeared.isEmpty }
        #expect(change.appeared == ["photo.jpg"])
        #expect(change.removed.isEmpty)

        try outside.write("from-elsewhere.png", bytes: 10)
        #expect(rename(outside.url("from-elsewhere.png"), folder.url("from-elsewhere.png")) == 0)
        change = try collect(watcher) { !$0.appeared.isEmpty }
        #expect(change.appeared == ["from-elsewhere.png"])
    }

    @Test("links appear at once: they have no write phase")
    func links() throws {
        let folder = try ScratchFolder()
        let outside = try ScratchFolder()
        let target = try outside.write("t.png", bytes: 10)
        let watcher = try FolderWatcher(folder: folder.path)
        try folder.symlink("soft.png", to: target)
        #expect(link(target, folder.url("hard.png")) == 0)
        let change = try collect(watcher) { $0.appeared.count == 2 }
        #expect(change.appeared == ["soft.png", "hard.png"])
    }

    @Test("deleting, moving out and touching a file")
    func deleteMoveTouch() throws {
        let folder = try ScratchFolder()
        let outside = try ScratchFolder()
        try folder.write("a.jpg", bytes: 3)
        try folder.write("b.jpg", bytes: 3)
        try folder.write("c.jpg", bytes: 3)
        let watcher = try FolderWatcher(folder: folder.path)
        #expect(unlink(folder.url("a.jpg")) == 0)
        var change = try collect(watcher) { !$0.removed.isEmpty }
        #expect(change.removed == ["a.jpg"])
        #expect(change.appeared.isEmpty)

        #expect(rename(folder.url("b.jpg"), outside.url("b.jpg")) == 0)
        change = try collect(watcher) { !$0.removed.isEmpty }
        #expect(change.removed == ["b.jpg"])

        try folder.setMTime("c.jpg", seconds: 5)
        change = try collect(watcher) { !$0.modified.isEmpty }
        #expect(change.modified == ["c.jpg"])
        #expect(change.needsRescan)
    }

    @Test("the folder itself deleted or moved away")
    func folderVanished() throws {
        let parent = try ScratchFolder()
        try parent.mkdir("images")
        try parent.write("images/a.jpg")
        let watcher = try FolderWatcher(folder: parent.url("images"))
        #expect(unlink(parent.url("images/a.jpg")) == 0)
        #expect(rmdir(parent.url("images")) == 0)
        let change = try collect(watcher) { $0.folderVanished }
        #expect(change.folderVanished)
        #expect(change.removed == ["a.jpg"])
        #expect(change.needsRescan)

        try parent.mkdir("moved")
        let moving = try FolderWatcher(folder: parent.url("moved"))
        #expect(rename(parent.url("moved"), parent.url("moved-away")) == 0)
        #expect(try collect(moving) { $0.folderVanished }.folderVanished)
    }

    @Test("the folder deleted and created again: the watch follows it to the new folder")
    func deletedAndRecreated() throws {
        let parent = try ScratchFolder()
        try parent.mkdir("images")
        try parent.write("images/a.jpg")
        let watcher = try FolderWatcher(folder: parent.url("images"))
        let descriptor = watcher.fileDescriptor
        #expect(unlink(parent.url("images/a.jpg")) == 0)
        #expect(rmdir(parent.url("images")) == 0)
        var change = try collect(watcher, timeout: .seconds(3)) { $0.folderVanished }
        #expect(change.folderVanished)
        #expect(!change.folderReplaced)

        try parent.mkdir("images")
        change = try collect(watcher, timeout: .seconds(3)) { $0.folderReplaced }
        #expect(change.folderReplaced, "a folder of that name is back: rescan")
        #expect(change.needsRescan && !change.isEmpty)
        #expect(!change.folderVanished)

        try parent.write("images/new.jpg", bytes: 3)
        change = try collect(watcher, timeout: .seconds(3)) { !$0.appeared.isEmpty }
        #expect(change.appeared == ["new.jpg"], "files in the new folder are seen")
        #expect(watcher.fileDescriptor == descriptor, "the daemon's epoll set keeps the same descriptor")

        // Both within one drain: the path shows a folder again, so nothing has vanished.
        #expect(unlink(parent.url("images/new.jpg")) == 0)
        #expect(rmdir(parent.url("images")) == 0)
        try parent.mkdir("images")
        change = try collect(watcher, timeout: .seconds(3)) { $0.folderReplaced }
        #expect(change.folderReplaced)
        #expect(!change.folderVanished)
        try parent.write("images/again.jpg", bytes: 3)
        #expect(try collect(watcher, timeout: .seconds(3)) { !$0.appeared.isEmpty }.appeared == ["again.jpg"])
    }

    @Test("a new folder moved in place of the old one (mv new.tmp images): later files in it are seen, the old one's are not")
    func replacedByRename() throws {
        let parent = try ScratchFolder()
        try parent.mkdir("images")
        try parent.write("images/a.jpg")
        try parent.mkdir("images.tmp")
        try parent.write("images.tmp/b.jpg")
        let watcher = try FolderWatcher(folder: parent.url("images"))
        #expect(rename(parent.url("images"), parent.url("images.old")) == 0)
        #expect(rename(parent.url("images.tmp"), parent.url("images")) == 0)
        var change = try collect(watcher, timeout: .seconds(3)) { $0.folderReplaced }
        #expect(change.folderReplaced)
        #expect(change.needsRescan)
        #expect(!change.folderVanished)

        // The old folder, wherever it went, is not the album any more.
        try parent.write("images.old/old.jpg", bytes: 3)
        try parent.write("images/c.jpg", bytes: 3)
        change = try collect(watcher, timeout: .seconds(3)) { !$0.appeared.isEmpty }
        #expect(change.appeared == ["c.jpg"])

        // rename(2) over an empty folder (mv -T): the old inode is deleted in the same call.
        let descriptor = watcher.fileDescriptor
        try parent.mkdir("empty")
        let emptyWatcher = try FolderWatcher(folder: parent.url("empty"))
        try parent.mkdir("fresh")
        #expect(rename(parent.url("fresh"), parent.url("empty")) == 0)
        change = try collect(emptyWatcher, timeout: .seconds(3)) { $0.folderReplaced }
        #expect(change.folderReplaced)
        #expect(!change.folderVanished)
        try parent.write("empty/d.png", bytes: 3)
        #expect(try collect(emptyWatcher, timeout: .seconds(3)) { !$0.appeared.isEmpty }.appeared == ["d.png"])
        #expect(watcher.fileDescriptor == descriptor)
    }

    @Test("other entries coming and going in the parent are no change")
    func parentNoise() throws {
        let parent = try ScratchFolder()
        try parent.mkdir("images")
        let watcher = try FolderWatcher(folder: parent.url("images"))
        try parent.mkdir("images2")
        try parent.mkdir("image")
        try parent.write("images.jpg", bytes: 3)
        #expect(rename(parent.url("images2"), parent.url("other")) == 0)
        #expect(rmdir(parent.url("other")) == 0)
        #expect(unlink(parent.url("images.jpg")) == 0)
        _ = becomesReadable(watcher, timeout: 200)
        let change = try watcher.drain()
        #expect(change.isEmpty)
        #expect(change == FolderWatcher.Change())
        try parent.write("images/x.jpg", bytes: 3)
        #expect(try collect(watcher, timeout: .seconds(3)) { !$0.appeared.isEmpty }.appeared == ["x.jpg"])
    }

    @Test("the parent and name of the folder")
    func split() {
        #expect(FolderWatcher.split("/srv/pictures").parent == "/srv")
        #expect(FolderWatcher.split("/srv/pictures/").name == Array("pictures".utf8))
        #expect(FolderWatcher.split("/pictures").parent == "/")
        #expect(FolderWatcher.split("pictures").parent == ".")
    }

    @Test("a queue overflow asks for a full rescan")
    func overflow() throws {
        let limit = (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))
            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        // A machine with a huge queue limit would take too long to flood.
        guard let limit, limit <= 100_000 else { return }
        let folder = try ScratchFolder()
        let watcher = try FolderWatcher(folder: folder.path)
        // One IN_ATTRIB per chmod, alternating between two files: the kernel
        // merges an event only with an identical one right before it.
        let paths = [try folder.write("a.jpg"), try folder.write("b.jpg")]
        for round in 0...(limit + 10) {
            try #require(chmod(paths[round % 2], round % 4 < 2 ? 0o644 : 0o600) == 0)
        }
        let change = try collect(watcher) { $0.overflowed }
        #expect(change.overflowed)
        #expect(change.needsRescan)
    }

    @Test("errors: a missing folder, a file")
    func errors() throws {
        let parent = try ScratchFolder()
        #expect(throws: AlbumError(path: parent.url("none"), subject: .folder, reason: .notFound)) {
            try FolderWatcher(folder: parent.url("none"))
        }
        let file = try parent.write("file.jpg")
        #expect(throws: AlbumError(path: file, subject: .folder, reason: .notADirectory)) {
            try FolderWatcher(folder: file)
        }
    }

    @Test("close is idempotent and drain after close reports nothing")
    func closeOnce() throws {
        let folder = try ScratchFolder()
        let watcher = try FolderWatcher(folder: folder.path)
        try folder.write("a.jpg")
        watcher.close()
        #expect(watcher.fileDescriptor == -1)
        watcher.close()
        #expect(try watcher.drain().isEmpty)
    }

    @Test("the descriptor is non-blocking and close-on-exec")
    func descriptorFlags() throws {
        let folder = try ScratchFolder()
        let watcher = try FolderWatcher(folder: folder.path)
        #expect(fcntl(watcher.fileDescriptor, F_GETFL) & O_NONBLOCK != 0)
        #expect(fcntl(watcher.fileDescriptor, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test("the scan after a change sees the new file; reconcile keeps the current one")
    func rescanAndReconcile() throws {
        let folder = try ScratchFolder()
        for name in ["img1.jpg", "img3.jpg", "img10.jpg"] { try folder.write(name, bytes: 3) }
        let watcher = try FolderWatcher(folder: folder.path)
        let before = try Album.scan(folder: folder.path, order: .name)
        try folder.write("img2.jpg", bytes: 3)
        // Replace img3 by rename, as sync tools do: same path, another inode.
        try folder.write(".img3.jpg.tmp", bytes: 4)
        #expect(rename(folder.url(".img3.jpg.tmp"), folder.url("img3.jpg")) == 0)
        let change = try collect(watcher) { $0.appeared.count == 2 }
        #expect(change.appeared == ["img2.jpg", "img3.jpg"])
        let after = try Album.scan(folder: folder.path, order: .name)
        let diff = AlbumDiff(old: before, new: after, currentIndex: 1)
        #expect(after.map(\.name) == ["img1.jpg", "img2.jpg", "img3.jpg", "img10.jpg"])
        #expect(diff.currentIndex == 2)
        #expect(diff.replaced == [folder.url("img3.jpg")])
        #expect(diff.added == [folder.url("img2.jpg")])
    }
}
