// What a caption says: the file's name, its sidecar NAME.txt (missing,
// empty, huge, not UTF-8), and the sprite that goes into the picture.

import CarouselCore
import CarouselImaging
import CarouselText
import Foundation
import Synchronization
import Testing

final class Scratch {
    let path = NSTemporaryDirectory() + "carousel-caption-" + UUID().uuidString
    init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let p = path + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: p))
        return p
    }
    func write(_ name: String, _ text: String) throws -> String { try write(name, Array(text.utf8)) }
}

@Suite("Captions: names and sidecar files") struct CaptionTests {
    @Test func namesWithoutFolderAndExtension() {
        #expect(Caption.baseName("/a/b/IMG_1234.JPG") == "IMG_1234")
        #expect(Caption.baseName("/a/trip.2024/beach") == "beach")
        #expect(Caption.baseName("/a/.hidden") == ".hidden")
        #expect(Caption.baseName("/a/archive.tar.gz") == "archive.tar")
    }

    @Test func theSidecarIsTheNameWithTxt() {
        #expect(Caption.sidecarPath(for: "/p/photo.jpg") == "/p/photo.txt")
        #expect(Caption.sidecarPath(for: "/p/photo.JPEG") == "/p/photo.txt")
        #expect(Caption.sidecarPath(for: "/p.d/photo") == "/p.d/photo.txt")
        #expect(Caption.sidecarPath(for: "/p/.hidden") == "/p/.hidden.txt")
    }

    @Test func aMissingSidecarIsNoCaptionAndNoProblem() throws {
        let s = try Scratch()
        #expect(try Caption.lines(for: s.path + "/photo.jpg", kind: .sidecar) == [])
    }

    @Test func theFirstParagraphUpToThreeLinesTrimmed() throws {
        let s = try Scratch()
        _ = try s.write("a.txt", "\u{FEFF}\r\n\n  Grandma's garden  \r\nSummer 1987\n\nNot this\n")
        #expect(try Caption.lines(for: s.path + "/a.jpg", kind: .sidecar) == ["Grandma's garden", "Summer 1987"])
        _ = try s.write("b.txt", "one\ntwo\nthree\nfour\n")
        #expect(try Caption.lines(for: s.path + "/b.png", kind: .sidecar) == ["one", "two", "three"])
        _ = try s.write("c.txt", "tab\there\u{7}bell")
        #expect(try Caption.lines(for: s.path + "/c.png", kind: .sidecar) == ["tab here bell"])
    }

    @Test func anEmptySidecarIsNoCaption() throws {
        let s = try Scratch()
        _ = try s.write("e.txt", "")
        _ = try s.write("w.txt", "  \n\n \t\n")
        #expect(try Caption.lines(for: s.path + "/e.jpg", kind: .sidecar) == [])
        #expect(try Caption.lines(for: s.path + "/w.jpg", kind: .sidecar) == [])
    }

    @Test func aHugeSidecarIsReadOnlyToItsLimitAndACharacterCutThereIsDropped() throws {
        let s = try Scratch()
        // One long line of 3-byte characters: 4096 bytes end inside one.
        let text = String(repeating: "東", count: 400_000)
        _ = try s.write("h.txt", text)
        let lines = try Caption.lines(for: s.path + "/h.jpg", kind: .sidecar)
        #expect(lines.count == 1)
        #expect(lines[0].unicodeScalars.count == Caption.sidecarLimit / 3)
    }

    @Test func aSidecarThatIsNotUTF8IsReportedOnceAndGivesNoCaption() throws {
        let s = try Scratch()
        _ = try s.write("latin1.txt", [0x43, 0x61, 0x66, 0xE9, 0x0A])   // "Café" in Latin-1
        #expect(throws: Caption.Problem.self) { try Caption.lines(for: s.path + "/latin1.jpg", kind: .sidecar) }
        let reports = Mutex<[String]>([])
        let captioning = Captioning(kind: .sidecar, position: .bottomLeft, style: TextStyle(), size: 16)
        for _ in 0..<3 {
            let sprite = Captioner.sprite(for: s.path + "/latin1.jpg", in: PixelSize(width: 320, height: 200), captioning) { line in
                reports.withLock { $0.append(line) }
            }
            #expect(sprite == nil)
        }
        let lines = reports.withLock { $0 }
        #expect(lines.count == 1, "one line however often the picture is prepared: \(lines)")
        #expect(lines.first == "caption: \(s.path)/latin1.txt is not UTF-8 text (save it as UTF-8); no caption")
    }

    @Test func aSidecarThatIsAFolderIsReported() throws {
        let s = try Scratch()
        try FileManager.default.createDirectory(atPath: s.path + "/d.txt", withIntermediateDirectories: false)
        #expect(throws: Caption.Problem.self) { try Caption.lines(for: s.path + "/d.jpg", kind: .sidecar) }
    }

    @Test func theCaptionSpriteSitsInItsCornerInsideThePicture() throws {
        let s = try Scratch()
        let picture = try s.write("IMG_0001.jpg", "not read for a name caption")
        let box = PixelSize(width: 400, height: 300)
        for position in OverlayPosition.allCases {
            let c = Captioning(kind: .name, position: position, style: TextStyle(), size: 20)
            let placed = try #require(Captioner.sprite(for: picture, in: box, c) { Issue.record("reported \($0)") })
            let (w, h) = (placed.sprite.width, placed.sprite.height)
            #expect(placed.x >= 0 && placed.y >= 0 && placed.x + w <= box.width && placed.y + h <= box.height)
            #expect(position.isTop ? placed.y < 30 : placed.y + h > 270, "\(position)")
            switch position.horizontal {
            case ..<0: #expect(placed.x < 30, "\(position)")
            case 0: #expect(abs(placed.x + w / 2 - 200) <= 1, "\(position)")
            default: #expect(placed.x + w > 370, "\(position)")
            }
        }
    }
}
