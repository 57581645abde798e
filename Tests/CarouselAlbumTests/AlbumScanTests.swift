import Foundation
import Testing
@testable import CarouselAlbum

@Suite("Album: listing a folder or an explicit list")
struct AlbumScanTests {
    /// A folder with one of everything the scan must take or leave.
    static func mixedFolder() throws -> (ScratchFolder, ScratchFolder) {
        let folder = try ScratchFolder()
        let elsewhere = try ScratchFolder()
        try folder.write("b10.jpg", bytes: 10, mtime: 1_000)
        try folder.write("b2.JPG", bytes: 20, mtime: 3_000)
        try folder.write("a.jpeg", bytes: 30, mtime: 2_000)
        try folder.write("c.png", bytes: 40, mtime: 500)
        try folder.write("d.webp", bytes: 50, mtime: 2_000)
        try folder.write("UPPER.PNG", bytes: 60, mtime: 4_000)
        // Left out by name.
        for name in [".hidden.jpg", "e.jpg~", "f.jpg.part", "g.tmp", ".h.jpg.swp", "#autosave.jpg#", "notes.txt",
                     "noext", "jpg", "photo.bmp", "photo.jpg.PART", "x.TMP"] {
            try folder.write(name, bytes: 5)
        }
        // Folders are never images, whatever their name.
        try folder.mkdir("sub")
        try folder.write("sub/inside.jpg", bytes: 5)
        try folder.mkdir("folder.jpg")
        // Links: to an image elsewhere (taken, with the target's size), to a
        // folder (left out), to nothing (reported).
        let target = try elsewhere.write("real.png", bytes: 70, mtime: 1_500)
        try folder.symlink("link.jpg", to: target)
        try folder.symlink("linkdir.jpg", to: elsewhere.path)
        try folder.symlink("dangling.jpg", to: elsewhere.url("missing.png"))
        return (folder, elsewhere)
    }

    @Test("only image files, in natural order, with their stat data")
    func mixedFolderByName() throws {
        let (folder, elsewhere) = try Self.mixedFolder()
        let listing = try Album.scanListing(folder: folder.path, order: .name)
        #expect(listing.entries.map(\.name) == ["a.jpeg", "b2.JPG", "b10.jpg", "c.png", "d.webp", "link.jpg", "UPPER.PNG"])
        #expect(listing.entries.map(\.path) == listing.entries.map { folder.url($0.name) })
        #expect(listing.skipped == [AlbumError(path: folder.url("dangling.jpg"), subject: .folderEntry, reason: .danglingSymlink)])
        #expect(listing.skipped.first?.description
            == "\(folder.url("dangling.jpg")): symbolic link to a file that does not exist (fix or remove the link)")

        let b2 = try #require(listing.entries.first { $0.name == "b2.JPG" })
        let status = folder.fileStatus("b2.JPG")
        #expect(b2.size == 20)
        #expect(b2.mtime == FileTime(seconds: 3_000, nanoseconds: 0))
        #expect(b2.inode == UInt64(status.st_ino))
        #expect(b2.device == UInt64(status.st_dev))

        // A link is shown as the file it points to.
        let link = try #require(listing.entries.first { $0.name == "link.jpg" })
        let targetStatus = elsewhere.fileStatus("real.png")
        #expect(link.size == 70)
        #expect(link.inode == UInt64(targetStatus.st_ino))
        #expect(link.mtime == FileTime(seconds: 1_500, nanoseconds: 0))

        #expect(try Album.scan(folder: folder.path, order: .name) == listing.entries)
        // A trailing slash does not double up in the paths.
        #expect(try Album.scan(folder: folder.path + "/", order: .name) == listing.entries)
    }

    @Test("mtime order: oldest first, equal times by name; nanoseconds count")
    func mtimeOrder() throws {
        let (folder, _elsewhere) = try Self.mixedFolder()
        _ = _elsewhere
        #expect(try Album.scan(folder: folder.path, order: .mtime).map(\.name)
            == ["c.png", "b10.jpg", "link.jpg", "a.jpeg", "d.webp", "b2.JPG", "UPPER.PNG"])
        try folder.setMTime("d.webp", seconds: 2_000, nanoseconds: 1)
        try folder.setMTime("a.jpeg", seconds: 2_000, nanoseconds: 2)
        let entries = try Album.scan(folder: folder.path, order: .mtime)
        #expect(entries.map(\.name) == ["c.png", "b10.jpg", "link.jpg", "d.webp", "a.jpeg", "b2.JPG", "UPPER.PNG"])
        #expect(entries.first { $0.name == "a.jpeg" }?.mtime == FileTime(seconds: 2_000, nanoseconds: 2))
    }

    @Test("random order: a permutation fixed by the seed, stable when files come and go")
    func randomOrder() throws {
        let folder = try ScratchFolder()
        let names = (1...60).map { "photo\($0).jpg" }
        for name in names { try folder.write(name) }
        let first = try Album.scan(folder: folder.path, order: .random(seed: 42)).map(\.name)
        let again = try Album.scan(folder: folder.path, order: .random(seed: 42)).map(\.name)
        let other = try Album.scan(folder: folder.path, order: .random(seed: 43)).map(\.name)
        #expect(first == again)
        #expect(Set(first) == Set(names))
        #expect(first.count == names.count)
        #expect(first != names)
        #expect(first != other)

        // Adding and removing files leaves the others in the same relative order.
        try folder.write("photo61.jpg")
        #expect(unlink(folder.url("photo7.jpg")) == 0)
        let changed = try Album.scan(folder: folder.path, order: .random(seed: 42)).map(\.name)
        #expect(changed.filter { $0 != "photo61.jpg" } == first.filter { $0 != "photo7.jpg" })
    }

    @Test("explicit list: given order kept, missing and non-files reported, the rest shown")
    func explicitList() throws {
        let folder = try ScratchFolder()
        let b = try folder.write("b.jpg", bytes: 3)
        let a = try folder.write("a.png", bytes: 4)
        let notImage = try folder.write("c.txt", bytes: 5)
        try folder.mkdir("dir")
        try folder.symlink("dangling.jpg", to: folder.url("gone.jpg"))
        let missing = folder.url("missing.jpg")
        let listing = Album.explicit(files: [b, missing, a, folder.url("dir"), notImage, b, folder.url("dangling.jpg")])
        #expect(listing.entries.map(\.path) == [b, a, notImage, b])
        #expect(listing.entries.map(\.name) == ["b.jpg", "a.png", "c.txt", "b.jpg"])
        #expect(listing.entries.map(\.size) == [3, 4, 5, 3])
        #expect(listing.skipped == [
            AlbumError(path: missing, subject: .listedFile, reason: .notFound),
            AlbumError(path: folder.url("dir"), subject: .listedFile, reason: .notARegularFile),
            AlbumError(path: folder.url("dangling.jpg"), subject: .listedFile, reason: .danglingSymlink),
        ])
        #expect(listing.skipped[0].description == "\(missing): no such file (fix the name or remove it from [images] files)")
        #expect(Album.explicit(files: []) == AlbumListing(entries: [], skipped: []))
    }

    @Test("a missing folder: its path, the reason and what to do")
    func missingFolder() throws {
        let parent = try ScratchFolder()
        let folder = parent.url("images")
        #expect(throws: AlbumError(path: folder, subject: .folder, reason: .notFound)) {
            try Album.scan(folder: folder, order: .name)
        }
        do {
            _ = try Album.scan(folder: folder, order: .name)
        } catch {
            #expect(error.description == "\(folder): image folder does not exist (create it or set [images] path)")
        }
        // A missing parent says the same.
        #expect(throws: AlbumError(path: folder + "/deeper", subject: .folder, reason: .notFound)) {
            try Album.scan(folder: folder + "/deeper", order: .name)
        }
    }

    @Test("a file where the folder should be")
    func notADirectory() throws {
        let parent = try ScratchFolder()
        let file = try parent.write("images")
        do {
            _ = try Album.scan(folder: file, order: .name)
            Issue.record("scanning a file succeeded")
        } catch {
            #expect(error == AlbumError(path: file, subject: .folder, reason: .notADirectory))
            #expect(error.description.hasPrefix("\(file): not a directory (set [images] path to a folder"))
        }
    }

    @Test("an unreadable folder (not run as root, who reads everything)", .enabled(if: !runningAsRoot))
    func unreadableFolder() throws {
        let folder = try ScratchFolder()
        try folder.write("a.jpg")
        #expect(chmod(folder.path, 0o000) == 0)
        #expect(throws: AlbumError(path: folder.path, subject: .folder, reason: .permissionDenied)) {
            try Album.scan(folder: folder.path, order: .name)
        }
        // Readable but not searchable: the names can be listed, not stat-ed.
        #expect(chmod(folder.path, 0o444) == 0)
        #expect(throws: AlbumError(path: folder.path, subject: .folder, reason: .permissionDenied)) {
            try Album.scan(folder: folder.path, order: .name)
        }
        #expect(AlbumError(path: folder.path, subject: .folder, reason: .permissionDenied).description.contains("r-x"))
    }

    @Test("Unicode names sort naturally; a name that is not UTF-8 is reported, not shown")
    func unicodeNames() throws {
        let folder = try ScratchFolder()
        for name in ["Été 10.jpg", "été 2.jpg", "ete 3.jpg", "写真١٢.png", "写真٣.png", "🌄.webp"] {
            try folder.write(name, bytes: 1)
        }
        // Linux names are bytes; 0xFF never occurs in UTF-8.
        let badName: [CChar] = Array("bad".utf8CString.dropLast()) + [CChar(bitPattern: 0xFF)] + Array(".jpg".utf8CString)
        let badPath = Array(folder.path.utf8CString.dropLast()) + [CChar(UInt8(ascii: "/"))] + badName
        let badFD = open(badPath, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        try #require(badFD >= 0)
        close(badFD)
        let listing = try Album.scanListing(folder: folder.path, order: .name)
        #expect(listing.entries.map(\.name) == ["ete 3.jpg", "été 2.jpg", "Été 10.jpg", "写真٣.png", "写真١٢.png", "🌄.webp"])
        #expect(listing.skipped.map(\.reason) == [.nameNotUTF8])
        #expect(listing.skipped.first?.description.hasSuffix("file name is not valid UTF-8 (rename the file)") == true)
    }

    @Test("an empty folder is an empty album, not an error")
    func emptyFolder() throws {
        let folder = try ScratchFolder()
        #expect(try Album.scan(folder: folder.path, order: .name).isEmpty)
    }

    @Test("10,000 files: all listed, in natural order")
    func tenThousandFiles() throws {
        let folder = try ScratchFolder()
        let count = 10_000
        // Created in an order unrelated to the expected one.
        for index in (1...count).reversed() {
            let fd = open(folder.url("photo\(index).jpg"), O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
            try #require(fd >= 0)
            close(fd)
        }
        try folder.write("readme.txt")
        let clock = ContinuousClock()
        let start = clock.now
        let entries = try Album.scan(folder: folder.path, order: .name)
        let elapsed = clock.now - start
        #expect(entries.count == count)
        #expect(entries.map(\.name) == (1...count).map { "photo\($0).jpg" })
        // A figure for the report; tests never assert on wall-clock time.
        print("scan of \(count) files took \(elapsed)")
    }

    @Test("isImageName is the rule scan applies")
    func imageNames() {
        for name in ["a.jpg", "A.JPG", "a.Jpeg", "a.png", "a.webp", "a.gif", "IMG_0001.HEIC", "a.heif", "a.hif", "a.avif",
                     "a.b.jpg", "é.jpg", "-.jpg", "a .jpg",
                     // Clips (issue 29).
                     "VID_0001.MP4", "a.m4v", "a.mov", "a.mkv", "a.webm"] {
            #expect(Album.isImageName(name), "\(name)")
        }
        for name in ["", ".", "..", ".jpg", ".a.jpg", "jpg", "a.jpg~", "a.jpg.part", "a.jpg.tmp", "a.jpg.swp",
                     "#a.jpg#", "a.bmp", "a.jpgx", "a.jpg ", "a.", "a.txt", "a.jpg.crdownload",
                     "a.mp4.part", ".a.mov", "a.avi"] {
            #expect(!Album.isImageName(name), "\(name)")
        }
    }
}
