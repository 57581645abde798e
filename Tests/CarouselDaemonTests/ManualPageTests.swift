// The hand-written manual pages against the programs they describe:
// carouseld(8) names every subcommand and option `carouseld --help` lists,
// carouselctl(1) every subcommand and option of `carouselctl --help` and
// every request of the control protocol with its usage. The lists come from
// the code (the binaries' own help, ControlRequest), so a new command
// without its page fails here. carouseld.ini(5) is generated and checked
// in CarouselConfigTests.

import CarouselControl
import Foundation
import Testing

@Suite("the manual pages name every command")
struct ManualPageTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The page's roff source with escapes and font changes taken out, as lines.
    static func page(_ name: String) -> [String] {
        let text = (try? String(contentsOf: root.appendingPathComponent("man/\(name)"), encoding: .utf8)) ?? ""
        var plain = text
        for (escape, replacement) in [("\\-", "-"), ("\\fB", ""), ("\\fI", ""), ("\\fR", ""), ("\\fP", ""),
                                      ("\\(dq", "\""), ("\\(aq", "'"), ("\\&", ""), ("\\e", "\\")] {
            plain = plain.replacingOccurrences(of: escape, with: replacement)
        }
        return plain.split(separator: "\n").map(String.init)
    }

    /// The first word of each `.TP` entry's tag line: the commands and options the page describes.
    static func tags(_ lines: [String]) -> Set<String> {
        var tags: Set<String> = []
        for (i, line) in lines.enumerated() where i > 0 && lines[i - 1] == ".TP" {
            var words = line.split(separator: " ")
            if words.first?.hasPrefix(".") == true { words.removeFirst() }
            if let first = words.first { tags.insert(first.trimmingCharacters(in: CharacterSet(charactersIn: "\""))) }
        }
        return tags
    }

    static func help(_ binary: String, _ arguments: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// The subcommands `--help` lists (hidden ones are not listed, and need no page).
    static func subcommands(_ help: String) -> [String] {
        guard let start = help.range(of: "SUBCOMMANDS:\n") else { return [] }
        var names: [String] = []
        for line in help[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.isEmpty || !line.hasPrefix("  ") { break }
            // Continuation lines of a long abstract are indented further.
            if line.hasPrefix("   ") { continue }
            names.append(String(line.split(separator: " ")[0]))
        }
        return names
    }

    /// The long options of a command's `--help`, but --help and --version.
    static func options(_ help: String) -> [String] {
        guard let start = help.range(of: "OPTIONS:\n") else { return [] }
        return help[start.upperBound...].split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            let option = words.first { $0.hasPrefix("--") }.map(String.init)
            guard line.hasPrefix("  "), !line.hasPrefix("   "), let option, option != "--help", option != "--version" else { return nil }
            return option
        }
    }

    func check(binary: String, page name: String) throws {
        let lines = Self.page(name)
        try #require(!lines.isEmpty, "man/\(name) is missing")
        let text = lines.joined(separator: "\n")
        let tags = Self.tags(lines)
        let commands = Self.subcommands(try Self.help(binary, ["--help"]))
        #expect(commands.count > 5, "could not read the subcommands of \(binary) --help")
        for command in commands {
            #expect(tags.contains(command), "man/\(name) has no entry for the subcommand \(command)")
            for option in Self.options(try Self.help(binary, [command, "--help"])) {
                #expect(text.contains(option), "man/\(name) does not name \(command)'s option \(option)")
            }
        }
    }

    @Test("carouseld(8) names every subcommand and option", .enabled(if: daemonBinary != nil, "carouseld binary not found; set CAROUSELD_BIN"))
    func carouseld() throws {
        try check(binary: daemonBinary!, page: "carouseld.8")
    }

    @Test("carouselctl(1) names every subcommand and option", .enabled(if: controlBinary != nil, "carouselctl binary not found; set CAROUSELCTL_BIN"))
    func carouselctl() throws {
        try check(binary: controlBinary!, page: "carouselctl.1")
    }

    @Test func carouselctlsPageListsEveryRequestWithItsUsage() throws {
        let lines = Self.page("carouselctl.1")
        try #require(!lines.isEmpty, "man/carouselctl.1 is missing")
        for name in ControlRequest.commandNames {
            let usage = try #require(ControlRequest.usage[name], "\(name) has no usage line")
            #expect(lines.contains(".B \(usage)"), "man/carouselctl.1's CONTROL PROTOCOL lacks the line .B \(usage)")
        }
    }
}
