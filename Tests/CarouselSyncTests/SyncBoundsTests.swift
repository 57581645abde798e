// The sync's bounds that need no server: the manifest's journal (O(N)
// bytes a pass, a kill at any point loses nothing), names too long for
// the file system, the deadlines' arithmetic. The servers' side (a gzip
// bomb, a drip, an endless body, lying sizes) is in Tests/Servers/sync_e2e.py.

@testable import CarouselSync
import CarouselConfig
import Foundation
import Testing

/// Bytes this thread has passed to write(2) so far (/proc/thread-self/io's
/// wchar): a pass runs on the test's thread, so other tests running in
/// parallel do not count.
private func bytesWrittenByThisThread() -> Int {
    let text = (try? String(contentsOfFile: "/proc/thread-self/io", encoding: .utf8)) ?? ""
    let line = text.split(separator: "\n").first { $0.hasPrefix("wchar:") }
    return line.flatMap { Int($0.dropFirst(6).trimmingCharacters(in: .whitespaces)) } ?? -1
}

@Suite("Sync bounds") struct SyncBoundsTests {
    @Test func aPassOfNFilesWritesTheManifestInOrderNBytes() throws {
        let box = try SyncSandbox()
        let source = MemorySource()
        let count = 400
        for i in 0..<count { source.add("key-\(i)", "picture-\(i).jpg", size: 100) }
        let before = bytesWrittenByThisThread()
        #expect(before >= 0)
        _ = try box.pass(source)
        let written = bytesWrittenByThisThread() - before
        #expect(box.files().count == count)
        // The pictures (40 KB), one journal line a file (about 90 bytes) and
        // the whole manifest twice (about 36 KB each): under 150 KB. Rewritten
        // after every file, the manifest alone was count²/2 entries: 7 MB.
        let manifest = try Data(contentsOf: URL(fileURLWithPath: box.state + "/manifest.json")).count
        #expect(written < count * 100 + count * 200 + 3 * manifest, "\(written) bytes written for \(count) files")
        #expect(!FileManager.default.fileExists(atPath: SyncManifest.journalPath(box.state + "/manifest.json")),
                "the journal is folded into the manifest at the end of a pass")
    }

    @Test func theJournalIsReadBackLineByLineAndACutLastLineIsLeftOut() throws {
        let box = try SyncSandbox()
        let path = box.state + "/manifest.json"
        var manifest = SyncManifest(folder: box.folder)
        manifest.entries["old"] = .init(key: "old", name: "old.jpg", version: "1", bytes: 10)
        try manifest.save(path)
        try manifest.record(.init(key: "a", name: "a.jpg", version: "1", bytes: 5), path)
        try manifest.record(.init(key: "old", name: "old.jpg", version: "2", bytes: 20), path)
        // A kill in the middle of a line's write: that line's file was never renamed into the folder.
        let journal = SyncManifest.journalPath(path)
        let handle = try #require(FileHandle(forWritingAtPath: journal))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"key":"b","name":"b.jp"#.utf8))
        handle.closeFile()
        let loaded = try SyncManifest.load(path, folder: box.folder)
        #expect(Set(loaded.entries.keys) == ["old", "a"])
        #expect(loaded.entries["old"]?.version == "2" && loaded.entries["a"]?.bytes == 5)
        // Killed after the manifest was saved but before its journal was
        // removed: the journal replays onto the saved manifest to the same entries.
        var later = loaded
        later.entries["old"] = nil
        try later.save(path)
        try later.record(.init(key: "c", name: "c.jpg", version: "1", bytes: 1), path)
        try later.record(.init(key: "a", name: "a.jpg", version: "2", bytes: 6), path)
        let lines = try Data(contentsOf: URL(fileURLWithPath: journal))
        let expected = try SyncManifest.load(path, folder: box.folder)
        #expect(Set(expected.entries.keys) == ["a", "c"] && expected.entries["a"]?.version == "2")
        try expected.save(path)
        #expect(!FileManager.default.fileExists(atPath: journal))
        try lines.write(to: URL(fileURLWithPath: journal))
        #expect(try SyncManifest.load(path, folder: box.folder) == expected)
    }

    /// The manifest says which server file became which picture: the sync's
    /// user's alone (an umask of 022 would have left it 0644).
    @Test func theManifestAndItsJournalAreTheSyncsAlone() throws {
        let box = try SyncSandbox()
        let path = box.state + "/manifest.json"
        var manifest = SyncManifest(folder: box.folder)
        try manifest.record(.init(key: "a", name: "a.jpg", version: "1", bytes: 5), path)
        func mode(_ p: String) -> mode_t {
            var st = stat()
            return stat(p, &st) == 0 ? st.st_mode & 0o777 : 0o7777
        }
        #expect(mode(SyncManifest.journalPath(path)) == 0o600)
        try manifest.save(path)
        #expect(mode(path) == 0o600)
    }

    @Test func aJournalLineThatNamesNoFileOfTheFolderStopsThePass() throws {
        let box = try SyncSandbox()
        let source = MemorySource()
        source.add("a", "a.jpg")
        _ = try box.pass(source)
        let path = box.state + "/manifest.json"
        let hostile = #"{"key":"x","name":"../etc/passwd","version":"1","bytes":1}"# + "\n"
        _ = FileManager.default.createFile(atPath: SyncManifest.journalPath(path), contents: Data(hostile.utf8))
        source.items = []
        #expect(throws: SyncError.self) { try box.pass(source) }
        #expect(box.files() == ["a.jpg"])
    }

    @Test func aNameTooLongForTheFileSystemIsShortenedNotDropped() throws {
        let box = try SyncSandbox()
        let source = MemorySource()
        // 60 letters of 4 bytes: 240 bytes, over 249 with the rest of the name.
        let stem = String(repeating: "\u{20000}", count: 60)
        source.add("a", "2024-01-01_\(stem)_1.jpg")
        source.add("b", "2024-01-01_\(stem)_2.jpg")
        source.add("c", "short.jpg")
        let outcome = try box.pass(source)
        #expect(outcome.downloaded == 3)
        let names = box.files()
        #expect(names.count == 3 && names.contains("short.jpg"))
        for name in names {
            #expect(name.utf8.count <= 249 && name.hasSuffix(".jpg") && SyncFolder.isPlainName(SyncFolder.partName(name)), "\(name)")
        }
        // The same names next time: nothing fetched again.
        source.fetched = []
        _ = try box.pass(source)
        #expect(source.fetched.isEmpty && box.files() == names)
    }

    @Test func shortenedNamesKeepTheirExtensionStayValidAndApart() {
        let folder = SyncFolder(path: "/srv/pictures")
        #expect(folder.fittedName("IMG_0001.jpg") == "IMG_0001.jpg")
        let stem = String(repeating: "é", count: 200)  // 400 bytes, 2 a character
        let a = folder.fittedName(stem + "a.jpeg"), b = folder.fittedName(stem + "b.jpeg")
        #expect(a != b && a.hasSuffix(".jpeg") && a.hasPrefix("éé"))
        #expect(a.utf8.count <= 249 && a.utf8.count >= 240)
        // Valid UTF-8, cut between characters: the bytes read back as the same string.
        #expect(String(validating: Array(a.utf8), as: UTF8.self) == a)
        #expect(folder.fittedName(stem + "a.jpeg") == a, "the same name each pass")
        // PATH_MAX: a folder whose path is long leaves less for the name.
        let deep = SyncFolder(path: "/" + String(repeating: "d", count: 3990))
        let short = deep.fittedName("a-long-name-of-a-picture-from-a-phone-that-is-longer-than-room-IMG_0001.heic")
        #expect(short.hasSuffix(".heic") && short.utf8.count <= deep.longestName && deep.longestName == 4095 - 3991 - 1 - 6)
        #expect(("/" + String(repeating: "d", count: 3990) + "/." + short + ".part").utf8.count <= 4095)
    }

    @Test func theDeadlineIsAFloorPlusTheSizeAtTheMinimumRate() {
        var limits = TransferLimits()
        #expect(limits.deadline(forBytes: 0) == 30)
        #expect(limits.deadline(forBytes: 32 << 10) == 31)
        #expect(limits.deadline(forBytes: (32 << 10) + 1) == 32)
        #expect(limits.deadline(forBytes: 10 << 20) == 30 + 320)
        // A size not said: the assumed one (a preview is about 0.5 MB).
        #expect(limits.deadline(forBytes: nil) == 30 + 512)
        // The JSON cap's own deadline: 4 MiB at 32 KiB/s, plus the floor.
        #expect(limits.deadline(forBytes: limits.jsonBytes) == 158)
        limits.minimumRate = 4 << 20
        limits.floorSeconds = 2
        #expect(limits.deadline(forBytes: limits.jsonBytes) == 3)
        #expect(limits.explainDeadline(forBytes: 1000).hasPrefix("3 s, the time 1000 bytes takes at 4096 KiB/s plus 2 s"))
    }
}
