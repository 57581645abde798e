// Every key at the edges of its stated range (ValueDomain.edgeValues) and
// just past them, through every door a value comes in by: check-config and
// render (the real binary), reload and set (a running offscreen daemon).
// They must agree with the schema on what is accepted, and whatever is
// accepted must run: a trap is exit status 132 for the binary, and ends this
// test process for the daemon.

import CarouselConfig
import CarouselControl
import CarouselDaemon
import Foundation
import Testing

@Suite("Every key at its edges: check-config, render, reload, set")
struct KeyEdgeTests {
    /// The INI text with `key = value` on top of a small working configuration.
    static func ini(images: String, key: String, value: String) -> (text: String, line: Int) {
        var sections: [(String, [(String, String)])] = [("images", [("path", images)]), ("autoplay", [("enabled", "false")])]
        let parts = key.split(separator: ".").map(String.init)
        if let s = sections.firstIndex(where: { $0.0 == parts[0] }) {
            sections[s].1.removeAll { $0.0 == parts[1] }
            sections[s].1.append((parts[1], value))
        } else {
            sections.append((parts[0], [(parts[1], value)]))
        }
        var lines: [String] = []
        var keyLine = 0
        for (section, entries) in sections {
            lines.append("[\(section)]")
            for (name, v) in entries {
                lines.append("\(name) = \(v)")
                if "\(section).\(name)" == key { keyLine = lines.count }
            }
        }
        return (lines.joined(separator: "\n") + "\n", keyLine)
    }

    static func accepts(_ key: String, _ value: String) -> Bool {
        var c = Configuration()
        do { try c.set(key, value); return true } catch { return false }
    }

    static func run(_ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: daemonBinary!)
        p.arguments = arguments
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let data = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test("the binary agrees with the schema, and what it accepts renders",
          .enabled(if: daemonBinary != nil, "carouseld binary not found; set CAROUSELD_BIN"),
          arguments: Schema.keys.filter { $0.domain != .text }.map { "\($0.section).\($0.name)" })
    func binary(key: String) throws {
        let spec = try #require(Schema.lookup(key))
        let d = try OffscreenDaemon(images: ["01-mountains.jpg", "04-panels.png"])
        let images = d.folder.appendingPathComponent("images").path
        let file = d.folder.appendingPathComponent("edge.ini").path
        for value in spec.domain.edgeValues {
            let (text, line) = Self.ini(images: images, key: key, value: value)
            try text.write(toFile: file, atomically: true, encoding: .utf8)
            let accepted = Self.accepts(key, value)
            let check = try Self.run(["check-config", file])
            if accepted {
                #expect(check.status == 0, "\(key) = \(value): check-config \(check.status): \(check.stderr)")
                let out = d.folder.appendingPathComponent("f.png").path
                let render = try Self.run(["render", "--config", file, "--size", "160x100", "--offset", "0.5", "--out", out])
                #expect(render.status == 0, "\(key) = \(value): render \(render.status): \(render.stderr)")
                #expect(FileManager.default.fileExists(atPath: out), "\(key) = \(value): no frame")
                try? FileManager.default.removeItem(atPath: out)
            } else {
                #expect(check.status == 1, "\(key) = \(value) was refused by the schema; check-config \(check.status)")
                #expect(check.stderr.contains("\(file):\(line): "), "\(key) = \(value): \(check.stderr)")
            }
        }
    }

    @Test("reload and set agree with the schema, and what they accept runs",
          arguments: Schema.keys.filter { $0.domain != .text }.map { "\($0.section).\($0.name)" })
    func running(key: String) throws {
        let spec = try #require(Schema.lookup(key))
        let d = try OffscreenDaemon(images: ["01-mountains.jpg", "04-panels.png"])
        let images = d.folder.appendingPathComponent("images").path
        d.advance(ms: 0)
        for value in spec.domain.edgeValues {
            let accepted = Self.accepts(key, value)
            try Self.ini(images: images, key: key, value: value).text.write(toFile: d.daemon.configPath, atomically: true,
                                                                             encoding: .utf8)
            let reloaded = d.daemon.reload()
            if case .ok = reloaded { #expect(accepted, "\(key) = \(value): reload took what the schema refuses") } else {
                #expect(!accepted, "\(key) = \(value): reload refused an accepted value: \(reloaded)")
            }
            d.exercise()
            let set = d.daemon.set(key, value)
            let restartOnly = Daemon.restartKeys.contains { $0.name == key }
            if case .ok = set { #expect(accepted, "\(key) = \(value): set took what the schema refuses") } else {
                #expect(!accepted || restartOnly, "\(key) = \(value): set refused an accepted value: \(set)")
            }
            d.exercise()
        }
    }
}

