// End-to-end: the real `carouseld simulate SCRIPT [--config FILE]` binary.

import CarouselConfig
import CarouselSimulation
import Foundation
import Testing

/// The `carouseld` executable built next to this test bundle
/// (`<scratch>/debug/carouseld`), or `$CAROUSELD_BIN`.
let carouseldBinary: String? = {
    let fm = FileManager.default
    if let env = ProcessInfo.processInfo.environment["CAROUSELD_BIN"], fm.isExecutableFile(atPath: env) {
        return env
    }
    var candidates: [String] = []
    for start in [(try? fm.destinationOfSymbolicLink(atPath: "/proc/self/exe")), CommandLine.arguments.first, Bundle.main.executablePath] {
        guard let start else { continue }
        var dir = URL(fileURLWithPath: start).deletingLastPathComponent()
        // The test executable may sit inside a bundle directory (…/debug/X.xctest/…).
        for _ in 0..<4 {
            candidates.append(dir.appendingPathComponent("carouseld").path)
            dir = dir.deletingLastPathComponent()
        }
    }
    return candidates.first { fm.isExecutableFile(atPath: $0) && !$0.hasSuffix(".xctest") }
}()

struct RunResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

func runCarouseld(_ arguments: [String], stdin: String? = nil) throws -> RunResult {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: carouseldBinary!)
    p.arguments = arguments
    // stderr goes to a file so that reading stdout to its end cannot deadlock.
    let errPath = try tempFile("stderr-\(UUID().uuidString)", "")
    let errHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
    let out = Pipe()
    p.standardOutput = out
    p.standardError = errHandle
    let inPipe = Pipe()
    p.standardInput = inPipe
    try p.run()
    if let stdin { inPipe.fileHandleForWriting.write(Data(stdin.utf8)) }
    try inPipe.fileHandleForWriting.close()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    try errHandle.close()
    let errData = try Data(contentsOf: URL(fileURLWithPath: errPath))
    try? FileManager.default.removeItem(atPath: errPath)
    return RunResult(status: p.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                     stderr: String(decoding: errData, as: UTF8.self))
}

func tempFile(_ name: String, _ text: String) throws -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("carousel-simtests-\(getpid())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    let url = dir.appendingPathComponent(name)
    try Data(text.utf8).write(to: url)
    return url.path
}

@Suite("carouseld simulate binary", .enabled(if: carouseldBinary != nil,
    "carouseld binary not found next to the test bundle; set CAROUSELD_BIN to run these"))
struct BinaryTests {
    @Test("a valid script: exit 0, JSON lines identical to the library's")
    func validScript() throws {
        let script = """
        set autoplay true
        \(path(from: (1100, 400), to: (300, 400), at: 100, ms: 400))
        at 600 up
        at 600 probe
        at 800 down 640 400
        at 850 up
        until 4000
        at 4000 probe
        """
        let file = try tempFile("valid.txt", timeline(script))
        let r = try runCarouseld(["simulate", file])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        var lib: [String] = []
        SimulationRunner.run(try SimulationScript.parse(timeline(script)), emit: { lib.append($0) })
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.last == "", "output must end with a newline")
        #expect(Array(lines.dropLast()) == lib)
        for l in lines.dropLast() {
            _ = parseLine(l, sourceLocation: #_sourceLocation)
        }
    }

    @Test("bad lines exit 2 with `line N:` on stderr and nothing on stdout", arguments: [
        ("images 3\nframble\n", 2),
        ("# header\n\nset nosuchkey 3\n", 3),
        ("set wrap perhaps\n", 1),
        ("at 100 probe\nat 50 probe\n", 2),
        ("images 3\nat 10 command goto 3\n", 2),
        ("at 1O0 probe\n", 1),
    ])
    func badLine(script: String, line: Int) throws {
        let file = try tempFile("bad-\(UUID().uuidString).txt", script)
        let r = try runCarouseld(["simulate", file])
        #expect(r.status == 2, "exit \(r.status), stderr: \(r.stderr)")
        #expect(r.stderr.contains("line \(line): "), "stderr: \(r.stderr)")
        #expect(r.stdout.isEmpty, "stdout: \(r.stdout)")
    }

    @Test("--config FILE: INI values apply, the script's set lines override them")
    func configFile() throws {
        let ini = try tempFile("c.ini", "[autoplay]\ninterval = 1.5\n")
        let file = try tempFile("cfg.txt", "at 0 probe\nuntil 2100\n")
        let r = try runCarouseld(["simulate", file, "--config", ini])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let lines = r.stdout.split(separator: "\n").compactMap { parseLine(String($0), sourceLocation: #_sourceLocation) }
        #expect(lines.first?.probe?.nextMs == 1500, "\(r.stdout.prefix(300))")
        let end = lines.first { $0.event == "didEndScrollingAnimation" }
        #expect(end.map { $0.t.isClose(2000, 1e-3) } == true, "first advance 1500 + 500 ms")

        let over = try tempFile("cfg2.txt", "set interval 1\nat 0 probe\n")
        let r2 = try runCarouseld(["simulate", over, "--config", ini])
        #expect(r2.status == 0)
        #expect(parseLine(String(r2.stdout.split(separator: "\n").first ?? ""), sourceLocation: #_sourceLocation)?.probe?.nextMs == 1000)

        let ini2 = try tempFile("c2.ini", "[carousel]\nwrap = false\nstart_index = 2\n[autoplay]\nenabled = false\n")
        let r3 = try runCarouseld(["simulate", file, "--config", ini2])
        let p = r3.stdout.split(separator: "\n").first.flatMap { parseLine(String($0), sourceLocation: #_sourceLocation)?.probe }
        #expect(p?.offset == 2 && p?.running == false && p?.nextMs == nil, "\(r3.stdout)")
    }

    @Test("a bad --config file is refused")
    func badConfig() throws {
        let ini = try tempFile("bad.ini", "[autoplay]\ninterval = soon\n")
        let file = try tempFile("ok.txt", "at 0 probe\n")
        let r = try runCarouseld(["simulate", file, "--config", ini])
        #expect(r.status != 0)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("bad.ini"), "the error should name the file: \(r.stderr)")
    }
}
