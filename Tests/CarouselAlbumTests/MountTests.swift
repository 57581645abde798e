import Foundation
import Testing
@testable import CarouselAlbum

/// Whether a file system can be mounted here (root, and not a container
/// that forbids it): the mount tests need one.
private func canMount() -> Bool {
    guard geteuid() == 0 else { return false }
    let probe = FileManager.default.temporaryDirectory.appendingPathComponent("carouseld-mount-probe-\(UUID().uuidString)").path
    guard mkdir(probe, 0o755) == 0 else { return false }
    defer { rmdir(probe) }
    guard mount("carouseld-test", probe, "tmpfs", 0, "size=64k") == 0 else { return false }
    umount2(probe, 0)
    return true
}

/// Whether the mount-table descriptor is marked (POLLPRI) within `milliseconds`.
private func mountsMarked(_ watcher: FolderWatcher, timeout milliseconds: Int32) -> Bool {
    var request = pollfd(fd: watcher.mountsDescriptor, events: Int16(POLLPRI), revents: 0)
    return poll(&request, 1, milliseconds) > 0 && request.revents & Int16(POLLPRI) != 0
}

@Suite("FolderWatcher: file systems mounted on the folder and unmounted from it", .enabled(if: canMount()))
struct FolderWatcherMountTests {
    @Test("a file system mounted on the folder is another folder; unmounted, the first one is back")
    func mountedAndUnmounted() throws {
        let parent = try ScratchFolder()
        try parent.mkdir("images")
        let images = parent.url("images")
        let watcher = try FolderWatcher(folder: images)
        #expect(watcher.mountsDescriptor >= 0)
        #expect(watcher.mountsChanged().isEmpty)

        // Mounting makes no inotify event: only the mount table tells.
        try #require(mount("carouseld-test", images, "tmpfs", 0, "size=64k") == 0)
        defer { umount2(images, Int32(MNT_DETACH)) }
        #expect(mountsMarked(watcher, timeout: 5_000))
        let mounted = watcher.mountsChanged()
        #expect(mounted.folderReplaced)
        #expect(mounted.needsRescan)
        // And the new file system's files are followed.
        _ = try parent.write("images/new.jpg", bytes: 3)
        #expect(becomesReadable(watcher, timeout: 5_000))
        #expect(try watcher.drain().appeared == ["new.jpg"])

        // Unmounted (lazily, as `umount -l`): the folder underneath again.
        #expect(umount2(images, Int32(MNT_DETACH)) == 0)
        #expect(mountsMarked(watcher, timeout: 5_000))
        var gone = watcher.mountsChanged()
        if becomesReadable(watcher, timeout: 200) { gone.merge(try watcher.drain()) }
        #expect(gone.folderReplaced)
        #expect(!gone.folderVanished)
        _ = try parent.write("images/underneath.jpg", bytes: 3)
        #expect(becomesReadable(watcher, timeout: 5_000))
        #expect(try watcher.drain().appeared == ["underneath.jpg"])
        // A mount elsewhere changes nothing for this folder.
        let other = parent.url("other")
        try parent.mkdir("other")
        try #require(mount("carouseld-test", other, "tmpfs", 0, "size=64k") == 0)
        defer { umount2(other, Int32(MNT_DETACH)) }
        #expect(mountsMarked(watcher, timeout: 5_000))
        #expect(watcher.mountsChanged().isEmpty)
    }
}
