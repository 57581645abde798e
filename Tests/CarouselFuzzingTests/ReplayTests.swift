import CarouselFuzzing
import CarouselImaging
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

    /// HEIF and AVIF inputs are replayed by the `carousel-fuzz` built next to
    /// this test bundle, a process of their own: it caps its address space as
    /// the daemon's decoding helper does, where an in-process replay would let
    /// a damaged file's codec take gigabytes of this test process
    /// (Fuzz/regressions/avif/oom-declared-frame made dav1d ask for 3 GB).
    @Test("seeds and regression inputs keep every property", arguments: FuzzTarget.allCases)
    func replay(_ target: FuzzTarget) throws {
        let paths = Self.inputs("corpus", target) + Self.inputs("regressions", target)
        if target.decodesUnderHelperLimits {
            let (exited, report) = try Self.replay([target.rawValue] + paths)
            #expect(exited == 0, "carousel-fuzz \(target.rawValue): \(report)")
            #expect(report.split(separator: "\n").filter { $0.hasSuffix(": ok") }.count == paths.count, "\(report)")
            return
        }
        for path in paths {
            let input = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(throws: Never.self, "\(path)") { try target.check(input) }
        }
    }

    /// The replayer under the helper's cap: the 3 GB the AVIF regression's
    /// codec asks for fails, and the decode with it, in a process that never
    /// grows past the budget (without the cap it peaks at 3 GB resident).
    @Test("the AVIF whose stream declares a 3 GB frame is refused within the helper's budget")
    func declaredFrameBeyondTheBudget() throws {
        let input = try #require(Self.inputs("regressions", .avif).first { $0.hasSuffix("/oom-declared-frame") })
        let (exited, report) = try Self.replay(["avif", input])
        #expect(exited == 0, "\(report)")
        #expect(report.contains("oom-declared-frame: ok"), "\(report)")
        let peakLine = try #require(report.split(separator: "\n").first { $0.hasPrefix("peak resident set: ") }, "\(report)")
        let kibibytes = try #require(Int(peakLine.dropFirst("peak resident set: ".count).prefix { $0.isNumber }), "\(report)")
        let budget = DecodingProcess.heapBudget(maxPixels: 1 << 22)
        #expect(kibibytes * 1024 < budget, "the replayer held \(kibibytes) KiB, over the helper's \(budget) bytes")
    }

    /// scripts/fuzz.sh has AddressSanitizer refuse, in the HEIF and AVIF
    /// targets, any allocation the helper's cap would refuse: the same
    /// number of MiB.
    @Test("the fuzz script refuses allocations past the helper's cap")
    func fuzzScriptKeepsTheBudget() throws {
        let script = try String(contentsOfFile: Self.fuzzDirectory.dropLast("Fuzz".count) + "scripts/fuzz.sh", encoding: .utf8)
        let mebibytes = DecodingProcess.addressSpaceAllowance(maxPixels: 1 << 22) >> 20
        #expect(script.contains("max_allocation_size_mb=\(mebibytes)\""), "scripts/fuzz.sh: max_allocation_size_mb is not \(mebibytes)")
    }

    /// Runs the replayer with `arguments`: its exit status (nil when a signal
    /// ended it) and what it printed.
    static func replay(_ arguments: [String]) throws -> (Int32?, String) {
        let replayer = try #require(Self.replayer, "no carousel-fuzz built next to the test bundle")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: replayer)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let report = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationReason == .exit ? process.terminationStatus : nil, report)
    }

    /// `carousel-fuzz` next to this test bundle, or `$CAROUSEL_FUZZ_BIN`.
    static let replayer: String? = {
        let fm = FileManager.default
        if let env = ProcessInfo.processInfo.environment["CAROUSEL_FUZZ_BIN"], fm.isExecutableFile(atPath: env) { return env }
        guard let exe = try? fm.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("carousel-fuzz").path
            if fm.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }()
}
