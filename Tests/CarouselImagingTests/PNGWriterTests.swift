import Foundation
import Testing
@testable import CarouselImaging

/// Screenshots go to paths a client names, in folders others may write to:
/// the writer must never write through a link someone planted.
@Suite struct PNGWriterTests {
    let pixels: [UInt32] = [0xFF11_2233, 0xFF44_5566, 0xFF77_8899, 0xFFAA_BBCC]

    func write(_ path: String) throws {
        try pixels.withUnsafeBytes { raw in
            try PNGWriter.write(path: path, pixels: raw.baseAddress!, width: 2, height: 2, stride: 8)
        }
    }

    func scratch() throws -> String {
        let dir = NSTemporaryDirectory() + "carousel-png-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func aSymlinkPlantedAtTheOldTemporaryNameIsNotWrittenThrough() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let victim = dir + "/victim"
        try "precious".write(toFile: victim, atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: dir + "/shot.png.tmp", withDestinationPath: victim)
        try write(dir + "/shot.png")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        let decoded = try ImageDecoder.decode(path: dir + "/shot.png")
        #expect(decoded.width == 2 && decoded.height == 2)
        // Nothing is left behind but the link that was planted.
        let left = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(left == ["shot.png", "shot.png.tmp", "victim"])
    }

    @Test func aSymlinkAtThePathItselfIsReplacedNotFollowed() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let victim = dir + "/victim"
        try "precious".write(toFile: victim, atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: dir + "/shot.png", withDestinationPath: victim)
        try write(dir + "/shot.png")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        let type = try FileManager.default.attributesOfItem(atPath: dir + "/shot.png")[.type] as? FileAttributeType
        #expect(type == .typeRegular)
        let mode = try FileManager.default.attributesOfItem(atPath: dir + "/shot.png")[.posixPermissions] as? Int
        #expect(mode == 0o644)
    }

    @Test func aFolderThatCannotBeWrittenIsAnErrorNamingThePath() throws {
        #expect(throws: PNGWriteError.self) { try write("/nonexistent-folder-\(UUID().uuidString)/shot.png") }
    }
}
