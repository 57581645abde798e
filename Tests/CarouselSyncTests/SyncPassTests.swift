// The rules of a sync pass on a real folder, with a source that serves
// bytes from memory (the real sources, Immich's API and rclone, are
// exercised against servers in Tests/Servers/sync_e2e.py): whole files only,
// only the sync's own files replaced or removed, the caps, a pass stopped
// midway, a manifest that cannot be read.

@testable import CarouselSync
import CarouselConfig
import CarouselImaging
import Foundation
import Testing

/// A source whose items and bytes the test sets; it can fail after some fetches.
final class MemorySource: SyncSourceClient {
    var items: [RemoteItem] = []
    var bytes: [String: [UInt8]] = [:]
    var failAfter: Int? = nil
    var failure = SyncError(.offline, "test: the server went away")
    var fetched: [String] = []
    var summary: String { "memory" }

    func add(_ key: String, _ name: String, version: String = "1", size: Int = 1000) {
        items.append(RemoteItem(key: key, name: name, version: version, bytes: size))
        bytes[key] = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ key.count) }
    }

    func list() throws(SyncError) -> [RemoteItem] { items }

    func fetch(_ item: RemoteItem, into fd: Int32, maxBytes: Int) throws(SyncError) -> Int {
        if let failAfter, fetched.count >= failAfter {
            // Half a file written, then the failure: the pass must not keep it.
            let half = Array(bytes[item.key]!.prefix(bytes[item.key]!.count / 2))
            _ = half.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            throw failure
        }
        fetched.append(item.key)
        let data = bytes[item.key]!
        _ = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        return data.count
    }
}

final class SyncSandbox {
    let root: String
    var folder: String { root + "/album" }
    var state: String { root + "/state" }
    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("sync-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: root + "/state", withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: root) }

    func pass(_ source: MemorySource, maxFiles: Int = 0, maxMB: Int = 0) throws -> SyncOutcome {
        var pass = SyncPass(source: source, folder: SyncFolder(path: folder), manifestPath: state + "/manifest.json")
        pass.maxFiles = maxFiles
        pass.maxBytes = maxMB * 1_048_576
        return try pass.run()
    }

    func files(hidden: Bool = false) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { hidden || !$0.hasPrefix(".") }.sorted()
    }
    func bytes(_ name: String) -> [UInt8]? { FileManager.default.contents(atPath: folder + "/" + name).map { [UInt8]($0) } }
    func write(_ name: String, _ text: String) { FileManager.default.createFile(atPath: folder + "/" + name, contents: Data(text.utf8)) }
}

@Suite("Sync pass") struct SyncPassTests {
    @Test func aFirstPassFetchesEverythingWholeAndListsItInTheManifest() throws {
        let box = try SyncSandbox()
        let source = MemorySource()
        source.add("a", "a.jpg")
        source.add("b", "b.jpg", size: 3000)
        let outcome = try box.pass(source)
        #expect(outcome.downloaded == 2 && outcome.bytesDownloaded == 4000)
        #expect(box.files() == ["a.jpg", "b.jpg"])
        #expect(box.bytes("b.jpg") == source.bytes["b"])
        let manifest = try SyncManifest.load(box.state + "/manifest.json", folder: box.folder)
        #expect(Set(manifest.entries.values.map(\.name)) == ["a.jpg", "b.jpg"])
        // Nothing changed: nothing fetched again.
        source.fetched = []
        let again = try box.pass(source)
        #expect(again.downloaded == 0 && again.kept == 2 && source.fetched.isEmpty)
    }

    @Test func aUsersOwnPicturesAreNeverTouched() throws {
        let box = try SyncSandbox()
        let source = MemorySource()
        source.add("a", "a.jpg")
        source.add("b", "b.jpg")
        _ = try box.pass(source)
        box.write("mine.jpg", "my own picture")
        // The source now offers a file of the user's name: it is not fetched over theirs.
        box.write("clash.jpg", "also mine")
        source.add("c", "clash.jpg")
        // And "a" left the selection.
        source.items.removeAll { $0.key == "a" }
        let outcome = try box.pass(source)
        #expect(outcome.removed == 1)
        #expect(outcome.skippedForeign == ["clash.jpg"])
        #expect(box.files() == ["b.jpg", "clash.jpg", "mine.jpg"])
        #expect(box.bytes("mine.jpg") == Array("my own picture".utf8))
        #expect(box.bytes("clash.jpg") == Array("also mine".utf8))
        // Everything leaves the selection: only the sync's own file goes.
        source.items = []
        _ = try box.pass(source)
        #expect(box.files() == ["clash.jpg", "mine.jpg"])
    }

    @Test func aChangedItemIsFetchedAgainAndARenamedOneLeavesNoOldFile() throws {
        let box = try SyncSandbox()
        let source = MemorySource()
        source.add("a", "a.jpg", size: 100)
        _ = try box.pass(source)
        source.items = []
        source.add("a", "a-renamed.jpg", version: "2", size: 200)
        let outcome = try box.pass(source)
        #expect(outcome.downloaded == 1)
        #expect(box.files() == ["a-renamed.jpg"])
        #expect(box.bytes("a-renamed.jpg")?.count == 200)
    }

    @Test func theCapsKeepWhatComesFirstInTheSelection() throws {
        let box = try SyncSandbox()
        let source = MemorySource()
        for i in 0..<5 { source.add("k\(i)", "p\(i).jpg", size: 400_000) }
        var outcome = try box.pass(source, maxFiles: 3)
        #expect(box.files() == ["p0.jpg", "p1.jpg", "p2.jpg"])
        #expect(outcome.capped == 2)
        // 1 MB holds two of 400 KB: the third goes, the first two stay.
        outcome = try box.pass(source, maxMB: 1)
        #expect(box.files() == ["p0.jpg", "p1.jpg"])
        #expect(outcome.removed == 1 && outcome.capped == 3)
    }

    @Test func aPassStoppedMidwayLeavesWholeFilesAndAManifestOfThemAll() throws {
        let box = try SyncSandbox()
        let source = MemorySource()
        for i in 0..<4 { source.add("k\(i)", "p\(i).jpg") }
        source.failAfter = 2
        let outcome = try box.pass(source)
        #expect(outcome.stoppedBy?.kind == .offline)
        #expect(outcome.downloaded == 2)
        // No half file, not even under its temporary name.
        #expect(box.files() == ["p0.jpg", "p1.jpg"])
        let manifest = try SyncManifest.load(box.state + "/manifest.json", folder: box.folder)
        #expect(Set(manifest.entries.keys) == ["k0", "k1"])
        // The server is back: the rest comes, nothing is fetched twice.
        source.failAfter = nil
        source.fetched = []
        _ = try box.pass(source)
        #expect(source.fetched == ["k2", "k3"])
        #expect(box.files() == ["p0.jpg", "p1.jpg", "p2.jpg", "p3.jpg"])
    }

    @Test func aStopRequestedEndsThePassAfterTheFileItIsOn() throws {
        let box = try SyncSandbox()
        let source = MemorySource()
        for i in 0..<4 { source.add("k\(i)", "p\(i).jpg") }
        var pass = SyncPass(source: source, folder: SyncFolder(path: box.folder), manifestPath: box.state + "/manifest.json")
        pass.shouldStop = { source.fetched.count >= 2 }
        let outcome = try pass.run()
        #expect(outcome.downloaded == 2 && box.files() == ["p0.jpg", "p1.jpg"])
        #expect(Set(try SyncManifest.load(box.state + "/manifest.json", folder: box.folder).entries.keys) == ["k0", "k1"])
    }

    @Test func aFullDiskStopsDownloadingAndDeletesNothing() throws {
        let box = try SyncSandbox()
        let source = MemorySource()
        for i in 0..<3 { source.add("k\(i)", "p\(i).jpg") }
        _ = try box.pass(source)
        source.add("k3", "p3.jpg")
        source.failAfter = 0
        source.failure = SyncError(.diskFull, "test: the disk is full")
        let outcome = try box.pass(source)
        #expect(outcome.stoppedBy?.kind == .diskFull)
        #expect(box.files() == ["p0.jpg", "p1.jpg", "p2.jpg"])
    }

    @Test func aKilledPassesTemporaryFileIsRemovedAndNeverShown() throws {
        let box = try SyncSandbox()
        let source = MemorySource()
        source.add("a", "a.jpg")
        _ = try box.pass(source)
        box.write(SyncFolder.partName("b.jpg"), "half")
        _ = try box.pass(source)
        #expect(box.files() == ["a.jpg"])
    }

    @Test func aManifestThatCannotBeReadStopsThePassBeforeAnythingIsDeleted() throws {
        let box = try SyncSandbox()
        let source = MemorySource()
        source.add("a", "a.jpg")
        _ = try box.pass(source)
        let hostile = #"{"manifest":1,"folder":"\#(box.folder)","files":[{"key":"a","name":"../x","version":"1","bytes":1}]}"#
        FileManager.default.createFile(atPath: box.state + "/manifest.json", contents: Data(hostile.utf8))
        source.items = []
        #expect(throws: SyncError.self) { try box.pass(source) }
        #expect(box.files() == ["a.jpg"])
    }

    @Test func aManifestOfAnotherFolderOwnsNothingInThisOne() throws {
        let box = try SyncSandbox()
        let source = MemorySource()
        source.add("a", "a.jpg")
        _ = try box.pass(source)
        // The frame's folder changes to one where the user has an a.jpg of their own.
        let other = box.root + "/other"
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: other + "/a.jpg", contents: Data("the user's".utf8))
        source.items = []
        var pass = SyncPass(source: source, folder: SyncFolder(path: other), manifestPath: box.state + "/manifest.json")
        pass.maxFiles = 0
        _ = try pass.run()
        #expect(FileManager.default.contents(atPath: other + "/a.jpg") == Data("the user's".utf8))
        #expect(box.files() == ["a.jpg"], "what was fetched into the old folder is left there")
    }

    @Test func onePassAtATimeAndOnlyItsOwnLeftoversAreRemoved() throws {
        let box = try SyncSandbox()
        let source = MemorySource()
        source.add("a", "a.jpg")
        _ = try box.pass(source)
        box.write(".notes.part", "a user's file")
        box.write(SyncFolder.partName("a.jpg"), "half of a sync's")
        let held = try SyncLock(box.state + "/manifest.json.lock")
        #expect(throws: SyncError.self) { try box.pass(source) }
        held.release()
        _ = try box.pass(source)
        #expect(box.files(hidden: true) == [".notes.part", "a.jpg"])
    }

    @Test func unknownSizesOverTheCapDropTheEndOfTheSelectionWithoutRefetching() throws {
        let box = try SyncSandbox()
        let source = MemorySource()
        for i in 0..<4 { source.add("k\(i)", "p\(i).jpg", size: 400_000) }
        for i in source.items.indices { source.items[i].bytes = nil }
        _ = try box.pass(source, maxMB: 1)
        #expect(box.files() == ["p0.jpg", "p1.jpg"])
        // A new picture at the head of the selection: it comes, the last one goes, nothing is fetched for nothing.
        source.items.insert(RemoteItem(key: "new", name: "new.jpg", version: "1"), at: 0)
        source.bytes["new"] = [UInt8](repeating: 7, count: 400_000)
        source.fetched = []
        _ = try box.pass(source, maxMB: 1)
        #expect(box.files() == ["new.jpg", "p0.jpg"] && source.fetched == ["new"], "\(box.files()) \(source.fetched)")
        source.fetched = []
        _ = try box.pass(source, maxMB: 1)
        #expect(source.fetched.isEmpty && box.files() == ["new.jpg", "p0.jpg"])
    }

    @Test func aListingThatFailsDeletesNothing() throws {
        final class Failing: SyncSourceClient {
            var summary: String { "failing" }
            func list() throws(SyncError) -> [RemoteItem] { throw SyncError(.offline, "down") }
            func fetch(_ item: RemoteItem, into fd: Int32, maxBytes: Int) throws(SyncError) -> Int { 0 }
        }
        let box = try SyncSandbox()
        let source = MemorySource()
        source.add("a", "a.jpg")
        _ = try box.pass(source)
        var pass = SyncPass(source: Failing(), folder: SyncFolder(path: box.folder), manifestPath: box.state + "/manifest.json")
        pass.maxFiles = 0
        #expect(throws: SyncError.self) { try pass.run() }
        #expect(box.files() == ["a.jpg"])
    }
}

@Suite("Sync captions and names") struct SyncCaptionTests {
    static let fixture: [UInt8] = {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(2)
        let path = parts.joined(separator: "/") + "/CarouselImagingTests/Fixtures/quadrants.jpg"
        return [UInt8](FileManager.default.contents(atPath: path)!)
    }()

    @Test func theCaptionReaderFindsTheInsertedDateAndDescription() throws {
        let tags = CaptionTags(dateTaken: CaptionTags.exifDate(iso: "2024-06-30T14:32:10.000Z"),
                               description: "Grandma's 80th <in the garden> & café ☕")
        var jpeg = Self.fixture
        #expect(jpeg.prefix(2) == [0xFF, 0xD8])
        jpeg.insert(contentsOf: tags.jpegSegments(withDate: true), at: 2)
        let metadata = jpeg.withUnsafeBytes { ImageMetadata.parse($0) }
        #expect(metadata.dateTaken == ImageMetadata.DateTaken(year: 2024, month: 6, day: 30, hour: 14, minute: 32, second: 10))
        #expect(metadata.description == "Grandma's 80th <in the garden> & café ☕")
        // The picture still decodes.
        let decoded = try ImageDecoder.decode(bytes: jpeg, name: "tagged.jpg")
        #expect(decoded.width > 0)
    }

    @Test func immichFacesBecomeRegionsTheFaceReaderFinds() throws {
        // Immich's boxes in pixels of the image it looked at; a box that is not one is left out.
        let faces = [CaptionTags.FaceTag(x1: 100, y1: 50, x2: 200, y2: 170, imageWidth: 1000, imageHeight: 500, name: "Ann & <Bo>"),
                     CaptionTags.FaceTag(x1: 0, y1: 0, x2: 1000, y2: 500, imageWidth: 1000, imageHeight: 500, name: ""),
                     CaptionTags.FaceTag(x1: 900, y1: 100, x2: 800, y2: 200, imageWidth: 1000, imageHeight: 500, name: nil),
                     CaptionTags.FaceTag(x1: 0, y1: 0, x2: 10, y2: 10, imageWidth: 0, imageHeight: 500, name: nil)].compactMap { $0 }
        #expect(faces.count == 2 && faces[1].name == nil)
        for description in [nil, "At the lake"] {
            var jpeg = Self.fixture
            jpeg.insert(contentsOf: CaptionTags(dateTaken: nil, description: description, faces: faces).jpegSegments(withDate: false), at: 2)
            let metadata = jpeg.withUnsafeBytes { ImageMetadata.parse($0) }
            #expect(metadata.description == description)
            #expect(metadata.faces.count == 2)
            if let first = metadata.faces.first {
                #expect(abs(first.x - 0.1) < 1e-4 && abs(first.y - 0.1) < 1e-4 && abs(first.width - 0.1) < 1e-4 && abs(first.height - 0.24) < 1e-4)
            }
            #expect(metadata.faces.last == FaceRegion(x: 0, y: 0, width: 1, height: 1))
            #expect(try ImageDecoder.decode(bytes: jpeg, name: "faces.jpg").width > 0)
        }
        // No description and no faces: no XMP segment at all.
        #expect(CaptionTags(dateTaken: nil, description: nil, faces: []).jpegSegments(withDate: false).isEmpty)
    }

    @Test func anOriginalKeepsItsOwnExifAndItsOrientation() throws {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(2)
        let path = parts.joined(separator: "/") + "/CarouselImagingTests/Fixtures/orientation-7.jpg"
        var jpeg = [UInt8](try #require(FileManager.default.contents(atPath: path)))
        #expect(try ImageDecoder.inspect(bytes: jpeg, name: "o.jpg").orientation != .identity)
        let before = try ImageDecoder.inspect(bytes: jpeg, name: "o.jpg").orientation
        let tags = CaptionTags(dateTaken: "2024:06:30 14:32:10", description: "On its side, unless the EXIF is kept")
        // An original gets the description only: its own EXIF (orientation, date) stays the one read.
        jpeg.insert(contentsOf: tags.jpegSegments(withDate: false), at: 2)
        #expect(try ImageDecoder.inspect(bytes: jpeg, name: "o.jpg").orientation == before)
        #expect(jpeg.withUnsafeBytes { ImageMetadata.parse($0) }.description == "On its side, unless the EXIF is kept")
    }

    @Test func isoTimesBecomeExifDates() {
        #expect(CaptionTags.exifDate(iso: "2024-06-30T14:32:10.000Z") == "2024:06:30 14:32:10")
        #expect(CaptionTags.exifDate(iso: "1999-12-31") == "1999:12:31 00:00:00")
        #expect(CaptionTags.exifDate(iso: "yesterday") == nil)
        #expect(CaptionTags.exifDate(iso: "2024-13-01T00:00:00Z") == nil)
    }

    @Test func namesStayInTheFolderAndSortByTheDayTaken() {
        let id = "1a2b3c4d-0000-4000-8000-00000000abcd"
        #expect(ImmichSource.localName(taken: "2024-06-30T14:32:10.000Z", original: "IMG_1234.HEIC", id: id, ext: "jpg")
            == "2024-06-30_143210_IMG_1234_1a2b3c4d.jpg")
        let hostile = ImmichSource.localName(taken: nil, original: "../../etc/passwd", id: id, ext: "jpg")
        #expect(!hostile.contains("/") && hostile.hasSuffix("_1a2b3c4d.jpg") && SyncFolder.isPlainName(hostile), "\(hostile)")
        #expect(!ImmichSource.isID("../x") && ImmichSource.isID(id))
        #expect(RcloneSource.localName("Holidays/2024/beach.jpg") == "Holidays_2024_beach.jpg")
        #expect(RcloneSource.localName(".hidden/a.jpg") == "hidden_a.jpg")
        #expect(RcloneSource.isWanted("a/b.JPG", videos: false) && !RcloneSource.isWanted("a/clip.mp4", videos: false))
        #expect(RcloneSource.isWanted("a/clip.mp4", videos: true) && !RcloneSource.isWanted("notes.txt", videos: true))
        // Long paths (CJK: 3 bytes a character) fit a name with room for ".NAME.part", and stay apart.
        let long = String(repeating: "写真", count: 60)
        let a = RcloneSource.localName("a/\(long).jpg"), b = RcloneSource.localName("b/\(long).jpg")
        #expect(a.utf8.count <= 200 && a.hasSuffix(".jpg") && a != b && SyncFolder.isPlainName(SyncFolder.partName(a)))
    }

    @Test func rcloneErrorsAreToldByWhatRcloneSaysNotByThePath() {
        func kind(_ status: Int32, _ errors: String) -> SyncError.Kind {
            RcloneSource.error(ToolRun.Outcome(status: status, output: [], errors: errors), listing: "nas:p/IMG_0403.JPG",
                               path: "nas:p/IMG_0403.JPG").kind
        }
        #expect(kind(1, "ERROR : nas:p/IMG_0403.JPG: corrupted on transfer") == .server)
        #expect(kind(1, "ERROR : couldn't write: no space left on device") == .diskFull)
        #expect(kind(1, "ERROR : 401 Unauthorized") == .unauthorized)
        #expect(kind(3, "directory not found") == .missing)
    }
}

@Suite("[sync] configuration") struct SyncConfigTests {
    @Test func aCompleteImmichSectionIsAccepted() throws {
        let config = try Configuration.parse("""
            [sync]
            source = immich
            server = https://photos.example.com/
            api_key_file = /etc/carouseld/immich.key
            albums = Family, Holidays 2024
            people = Alice
            favorites = true
            taken_after = 2020-01-01
            size = original
            max_mb = 500
            """, file: "t.ini")
        #expect(config.sync.source == .immich)
        #expect(config.sync.server == "https://photos.example.com")
        #expect(config.sync.albums == ["Family", "Holidays 2024"])
        #expect(config.sync.size == .original && config.sync.maxMB == 500)
    }

    @Test func mistakesAreRefusedWithTheirLine() {
        func error(_ text: String) -> String {
            do {
                _ = try Configuration.parse(text, file: "t.ini")
                return "accepted"
            } catch {
                return "\(error)"
            }
        }
        #expect(error("[sync]\nsource = dropbox\n").hasPrefix("t.ini:2: source = 'dropbox': expected immich or rclone:REMOTE:PATH"))
        #expect(error("[sync]\nsource = rclone:photos\n").hasPrefix("t.ini:2: source = 'rclone:photos'"))
        #expect(error("[sync]\nsource = immich\nserver = photos.example.com\n").hasPrefix("t.ini:3: server = 'photos.example.com'"))
        #expect(error("[sync]\nsource = immich\nserver = https://me:secret@p.example\n").contains("no user or password"))
        #expect(error("[sync]\nsource = immich\nserver = https://p.example\napi_key_file = key.txt\n").hasPrefix("t.ini:4: api_key_file"))
        #expect(error("[sync]\nsource = immich\nserver = https://p.example\n").contains("needs api_key_file"))
        #expect(error("[sync]\nsource = immich\nserver = https://p.example\napi_key_file = /k\n").contains("needs something to show"))
        #expect(error("[sync]\nsource = rclone:nas:Photos\ntaken_after = 2024-02-30x\n").hasPrefix("t.ini:3: taken_after"))
        #expect(error("[sync]\nsource = rclone:nas:Photos\nalbums = a,,b\n").hasPrefix("t.ini:3: albums"))
        // Each key alone is valid (the schema's edges hold for it); without a source there is no sync.
        #expect(error("[sync]\nfavorites = true\n") == "accepted")
        #expect(error("[sync]\nsource = rclone:nas:Photos\n") == "accepted")
    }
}

@Suite("The sync's status, as the daemon reads it") struct SyncStatusTests {
    @Test func theStatusIsReadFromTheFolderOnlyWithASource() throws {
        let box = try SyncSandbox()
        var config = Configuration()
        config.images.path = box.folder
        #expect(SyncStatusFile.read(for: config) == nil, "no [sync] source: no sync in the status")
        config.sync.source = .rclone(remote: "nas:photos")
        try FileManager.default.createDirectory(atPath: box.folder, withIntermediateDirectories: true)
        #expect(SyncStatusFile.read(for: config)?["error"]?.stringValue?.hasPrefix("no sync has run yet") == true)
        FileManager.default.createFile(atPath: box.folder + "/" + SyncStatusFile.name,
                                       contents: Data(#"{"time":1,"files":3,"bytes":9,"error":null}"#.utf8))
        let status = try #require(SyncStatusFile.read(for: config))
        #expect(status["files"]?.intValue == 3 && status["error"] == .null)
        FileManager.default.createFile(atPath: box.folder + "/" + SyncStatusFile.name, contents: Data("garbage".utf8))
        #expect(SyncStatusFile.read(for: config)?["error"]?.stringValue?.contains("cannot be read") == true)
    }
}
