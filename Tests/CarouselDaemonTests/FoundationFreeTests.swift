// The rooms carouseld runs import no Foundation: linked statically, it
// would add tens of megabytes to the binary and to every start (one slipped
// in with the clip player's first thread and condition variable: the
// static release binary, unstripped, grew from 38 to 88 MB). The tools
// beside it may.

import Foundation
import Testing

@Suite struct FoundationFreeTests {
    /// Targets that never run inside carouseld or carouselctl.
    static let allowed: Set<String> = ["carousel-docs", "carousel-fuzz", "CarouselFuzzing", "CarouselBenchmarks", "carouseld-web"]
    /// Rooms of a process of their own beside carouseld (the web page, which
    /// Hummingbird brings Foundation into anyway): only their words, which
    /// carouseld links, are held to the rule.
    static let wordsOnly: Set<String> = ["CarouselWeb"]

    @Test func theDaemonsRoomsImportNoFoundation() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        let rooms = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { !Self.allowed.contains($0) }
        #expect(rooms.contains("CarouselRender") && rooms.contains("CarouselDaemon"))
        var offenders: [String] = []
        for room in rooms {
            let folder = sources.appendingPathComponent(room)
            guard let files = FileManager.default.enumerator(atPath: folder.path) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                if Self.wordsOnly.contains(room), !file.hasPrefix("Words/") { continue }
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                if text.split(separator: "\n").contains(where: { $0.hasPrefix("import Foundation") }) {
                    offenders.append("\(room)/\(file)")
                }
            }
        }
        #expect(offenders.isEmpty, "Foundation imported by \(offenders)")
    }
}
