import CarouselFuzzing
import Foundation
import Testing

/// The fuzz targets' seeds and every input a fuzzer ever failed on
/// (Fuzz/regressions/TARGET/), replayed through the same checks on every
/// `swift test`, without sanitizers. A regression input stays here for good.
@Suite("fuzz inputs replayed")
struct ReplayTests {
    static let fuzzDirectory: String = {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Tests/CarouselFuzzingTests/ReplayTests.swift
        return parts.joined(separator: "/") + "/Fuzz"
    }()

    static func inputs(_ folder: String, _ target: FuzzTarget) -> [String] {
        let directory = "\(fuzzDirectory)/\(folder)/\(target.rawValue)"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { "\(directory)/\($0)" }
    }

    @Test("every target has seeds", arguments: FuzzTarget.allCases)
    func seeded(_ target: FuzzTarget) {
        #expect(!Self.inputs("corpus", target).isEmpty, "no seeds in Fuzz/corpus/\(target.rawValue)")
    }

    @Test("seeds and regression inputs keep every property", arguments: FuzzTarget.allCases)
    func replay(_ target: FuzzTarget) throws {
        for path in Self.inputs("corpus", target) + Self.inputs("regressions", target) {
            let input = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(throws: Never.self, "\(path)") { try target.check(input) }
        }
    }
}
