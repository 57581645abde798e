// [images] decode_mb (issue 31, item 5): every decode has a memory budget,
// half of the board's memory by default; a picture that would need more is
// one skip line that says why and how to make it fit, and the carousel goes on.

import CarouselConfig
import CarouselCore
import CarouselDaemon
import Foundation
import Testing

/// A lossless WebP (VP8L) whose header says `width` x `height`: what
/// libwebp's WebPGetFeatures reads. Its pixels are not there; a decode
/// within the budget would fail on them, a refusal comes first.
func losslessWebPHeader(width: Int, height: Int) -> [UInt8] {
    func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }
    // Signature 0x2F, then 14 bits width - 1, 14 bits height - 1, alpha 0, version 0.
    let bits = (width - 1) | (height - 1) << 14
    let payload: [UInt8] = [0x2F] + le32(bits) + [UInt8](repeating: 0, count: 27)
    let chunk = Array("VP8L".utf8) + le32(payload.count) + payload
    return Array("RIFF".utf8) + le32(4 + chunk.count) + Array("WEBP".utf8) + chunk
}

@Suite("decode_mb: every decode has a memory budget, half the board's by default")
struct DecodeBudgetRunTests {
    @Test("auto is half the board's memory, a number is MiB, an unknown board has none; the start line says which")
    func budget() throws {
        let auto = try Configuration.parse("[images]\ndecode_mb = auto\n", file: "a.ini")
        #expect(auto.images.decodeMB == nil)
        #expect(auto.decodeBytes(boardMemory: 1 << 30) == 512 << 20)
        #expect(auto.decodeBytes(boardMemory: 0) == .max)
        let set = try Configuration.parse("[images]\ndecode_mb = 200\n", file: "b.ini")
        #expect(set.images.decodeMB == 200 && set.decodeBytes(boardMemory: 1 << 30) == 200 << 20)
        #expect(throws: (any Error).self) { try Configuration.parse("[images]\ndecode_mb = 8\n", file: "c.ini") }
        #expect(throws: (any Error).self) { try Configuration.parse("[images]\ndecode_mb = lots\n", file: "d.ini") }

        let d = try OffscreenDaemon(images: ["01-mountains.jpg"], boardMemory: 1 << 30)
        #expect(d.daemon.layout.cacheSettings(d.daemon.config).decodeBudget == 512 << 20)
        #expect(d.daemon.layout.decodeLine(d.daemon.config)
            == "decode budget: 512 MiB a picture (decode_mb = auto: half of the board's 1024 MiB)")
        let unknown = try OffscreenDaemon(images: ["01-mountains.jpg"])
        #expect(unknown.daemon.layout.cacheSettings(unknown.daemon.config).decodeBudget == .max)
        #expect(unknown.daemon.layout.decodeLine(unknown.daemon.config)
            == "decode budget: none (decode_mb = auto, and the board's memory is not known)")
    }

    @Test("a picture over the budget is one skip line with its needs and a fix; the others show",
          .enabled(if: daemonBinary != nil, "carouseld not built"))
    func overBudgetIsSkipped() throws {
        let d = try RunningDaemon(config: "[images]\npath = $IMAGES\ndecode_mb = 16\n[autoplay]\ninterval = 0.3\ntransition = 0.1\n")
        try d.addImage("1.jpg", from: "01-mountains.jpg")
        // 8000x7000 lossless: libwebp would keep 56 MP at 4 bytes, 214 MB.
        try Data(losslessWebPHeader(width: 8000, height: 7000)).write(to: d.folder.appendingPathComponent("images/2.webp"))
        try d.addImage("3.webp", from: "05-glow.webp")
        try d.start()
        d.waitFor("the budget line") { $0.contains("<6>decode budget: 16 MiB a picture\n") }
        d.waitFor("the skip line") { $0.contains("<4>skipping ") && $0.contains("2.webp") }
        d.waitFor("two images left") { $0.contains("<6>images: 2 now") }
        let skips = d.log.split(separator: "\n").filter { $0.contains("2.webp") }
        #expect(skips.count == 1, "\(skips)")
        let path = d.folder.appendingPathComponent("images/2.webp").path
        #expect(skips.first?.hasPrefix("<4>skipping \(path): needs about 214 MB to decode (a lossless WebP: libwebp keeps "
            + "all of its 56 MP at 4 bytes a pixel, 214 MB), more than the 16 MB decode budget ([images] decode_mb); save it ") == true,
            "\(skips)")
        #expect(d.process.isRunning)
        #expect(d.stop() == 0)
    }
}
