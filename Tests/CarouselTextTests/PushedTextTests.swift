// What a pushed text or a text file says as lines to draw: the line rules,
// the 4-line limit, and the files that are not shown (too large, binary,
// not UTF-8, not a regular file) or not there.

import Foundation
import Testing
@testable import CarouselText

@Suite("PushedText: lines and limits")
struct PushedTextTests {
    @Test func linesAreSplitTrimmedAndBlankEdgesLeftOut() {
        let lines = PushedText.lines("\n\nSunny 21 °C  \r\n\nRain\tfrom 16:00\n\n")
        #expect(lines.lines == ["Sunny 21 °C", "", "Rain from 16:00"])
        #expect(!lines.cut)
        #expect(lines.text == "Sunny 21 °C\n\nRain from 16:00")
        #expect(PushedText.lines("  \n \n").isEmpty)
    }

    @Test func atMostFourLinesAndTheCutIsSaid() {
        let lines = PushedText.lines("1\n2\n3\n4\n5\n6")
        #expect(lines.lines == ["1", "2", "3", "4"])
        #expect(lines.cut)
        #expect(!PushedText.lines("1\n2\n3\n4\n").cut)
    }

    @Test func aPushedBackslashNEndsALine() {
        #expect(PushedText.lines(pushed: #"Sunny 21 °C\nRain from 16:00"#).lines == ["Sunny 21 °C", "Rain from 16:00"])
        #expect(PushedText.lines(pushed: "a\nb").lines == ["a", "b"])
        #expect(PushedText.lines(pushed: "雨のち晴れ").lines == ["雨のち晴れ"])
    }

    @Test func bytesThatAreNotTextAreRefused() throws {
        func problem(_ bytes: [UInt8], size: Int? = nil) -> String? {
            do {
                _ = try PushedText.lines(bytes: bytes, size: size ?? bytes.count, path: "/dev/shm/t")
                return nil
            } catch {
                return error.message
            }
        }
        #expect(problem(Array("Sunny".utf8)) == nil)
        #expect(try PushedText.lines(bytes: [0xEF, 0xBB, 0xBF] + Array("BOM".utf8), size: 6, path: "p").lines == ["BOM"])
        #expect(problem([0x41, 0x00, 0x42]) == "overlay: /dev/shm/t holds a NUL byte (a binary file?), not text; not shown")
        #expect(problem([0x41, 0xFF, 0x42]) == "overlay: /dev/shm/t is not UTF-8 text (save it as UTF-8); not shown")
        #expect(problem(Array("x".utf8), size: 20_000)
                == "overlay: /dev/shm/t is 20000 bytes, more than the 16 KiB of a text file shown; not shown")
        #expect(problem([UInt8](repeating: 0x41, count: PushedText.fileLimit)) == nil, "16 KiB exactly is shown")
    }

    @Test func filesAreReadBoundedAndOnlyWhenRegular() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pushed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("text").path
        #expect(PushedText.read(path: path) == .missing)
        #expect(PushedText.read(path: folder.appendingPathComponent("no/such").path) == .missing)
        try Data("Sunny 21 °C\nRain from 16:00\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(PushedText.read(path: path) == .text(.init(lines: ["Sunny 21 °C", "Rain from 16:00"], cut: false)))
        try Data(repeating: 0x41, count: 100_000).write(to: URL(fileURLWithPath: path))
        guard case let .problem(large) = PushedText.read(path: path) else { Issue.record("a large file was shown"); return }
        #expect(large.message.contains("100000 bytes"))
        #expect(PushedText.read(path: folder.path) == .problem(.init("overlay: \(folder.path) is not a regular file; not shown")))
        // A FIFO is not waited on.
        let fifo = folder.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(PushedText.read(path: fifo) == .problem(.init("overlay: \(fifo) is not a regular file; not shown")))
    }
}
