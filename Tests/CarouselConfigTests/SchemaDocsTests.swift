import Foundation
import Testing
import CarouselConfig

/// The shipped INI, the README's key table and carouseld.ini(5) say what the
/// schema says: each is the generator's output, committed.
@Suite struct SchemaDocsTests {
    /// The repository's root, found from this source file.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func committed(_ relative: String) -> String {
        (try? String(contentsOf: root.appendingPathComponent(relative), encoding: .utf8)) ?? ""
    }

    /// The first line where `committed` and `generated` part, or nil when they are the same.
    static func firstDifference(_ committed: String, _ generated: String) -> String? {
        guard committed != generated else { return nil }
        let old = committed.split(separator: "\n", omittingEmptySubsequences: false)
        let new = generated.split(separator: "\n", omittingEmptySubsequences: false)
        for i in 0..<max(old.count, new.count) {
            let a = i < old.count ? String(old[i]) : "(end of file)"
            let b = i < new.count ? String(new[i]) : "(end of file)"
            if a != b { return "line \(i + 1) is\n  \(a)\nbut the schema makes it\n  \(b)" }
        }
        return "they differ in line endings"
    }

    static let generated: [(path: String, text: String?)] = [
        (SchemaDocs.iniPath, SchemaDocs.shippedINI()),
        (SchemaDocs.readmePath, SchemaDocs.readme(replacingKeysIn: committed(SchemaDocs.readmePath))),
        (SchemaDocs.manPath, SchemaDocs.manPage()),
        (SchemaDocs.controlManPath, SchemaDocs.controlManual(replacingIn: committed(SchemaDocs.controlManPath))),
    ]

    @Test("the committed document is what the schema makes", arguments: [0, 1, 2, 3])
    func committedDocumentIsGenerated(index: Int) throws {
        let (path, generated) = Self.generated[index]
        let committed = Self.committed(path)
        try #require(!committed.isEmpty, "\(path) is missing or empty; run `swift run carousel-docs` from the repository's root")
        let text = try #require(generated, "\(path) lacks its marker lines \(SchemaDocs.readmeBegin) and \(SchemaDocs.readmeEnd)")
        if let difference = Self.firstDifference(committed, text) {
            Issue.record("\(path) disagrees with the schema: \(difference)\nRun `swift run carousel-docs` from the repository's root and commit the result.")
        }
    }

    @Test func theDocumentedDefaultIsTheDefault() {
        for spec in Schema.keys {
            var config = Configuration()
            do {
                try config.set("\(spec.section).\(spec.name)", spec.defaultValue)
            } catch {
                Issue.record("\(spec.section).\(spec.name): the documented default '\(spec.defaultValue)' is refused: \(error)")
                continue
            }
            #expect(config == Configuration(), "\(spec.section).\(spec.name) = '\(spec.defaultValue)' is not the built-in default")
        }
    }

    @Test func everyKeyHasTextTheGeneratorCanCarry() {
        for spec in Schema.keys {
            let key = "\(spec.section).\(spec.name)"
            #expect(!spec.help.isEmpty, "\(key) has no help text")
            #expect(!spec.help.contains("|"), "\(key): a '|' would split the README's table row")
            #expect(!spec.help.contains("]("), "\(key): no links in help texts (the INI and the manual cannot follow them)")
            #expect(spec.help.filter { $0 == "`" }.count % 2 == 0, "\(key): a code span is not closed")
            #expect(spec.help.hasSuffix("."), "\(key): the text should end with a full stop")
        }
        #expect(Set(Schema.keys.map(\.section)) == Set(Schema.sectionNames), "a key's section is not in Schema.sectionSpecs")
        for section in Schema.sectionSpecs { #expect(!section.help.isEmpty, "[\(section.name)] has no text") }
    }

    @Test func everyKeyIsInEachDocument() throws {
        let ini = Set(try IniParser.parse(Self.committed(SchemaDocs.iniPath), file: "carouseld.ini").map { "\($0.section).\($0.key)" })
        let readme = Set(Self.committed(SchemaDocs.readmePath).split(separator: "\n").compactMap { line -> String? in
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            return line.hasPrefix("| ") && cells.count >= 2 ? "\(cells[0]).\(cells[1])" : nil
        })
        let entries = Self.manEntries()
        for spec in Schema.keys {
            let key = "\(spec.section).\(spec.name)"
            #expect(ini.contains(key), "\(SchemaDocs.iniPath) lacks \(key)")
            #expect(readme.contains(key), "README.md's key table lacks \(key)")
            #expect(entries[key] != nil, "\(SchemaDocs.manPath) lacks \(key) under .SS [\(spec.section)]")
        }
    }

    @Test func theManualNamesEveryValueAKeyTakes() throws {
        let entries = Self.manEntries()
        for spec in Schema.keys {
            let key = "\(spec.section).\(spec.name)"
            guard let entry = entries[key] else { continue }
            #expect(entry.contains("Accepts: \(spec.accepts)."), "\(key): the manual does not say it accepts \(spec.accepts)")
            let shown = spec.defaultValue.isEmpty ? "empty" : spec.defaultValue
            #expect(entry.contains("Default: \(shown)."), "\(key): the manual does not give its default \(shown)")
            if case let .choice(words) = spec.domain {
                for word in words { #expect(entry.contains(word), "\(key): the manual's entry does not name \(word)") }
            }
        }
    }

    /// The committed manual page's entries, "section.key" to their text with
    /// roff's escapes and font changes taken out.
    static func manEntries() -> [String: String] {
        var entries: [String: String] = [:]
        var section: String?
        var key: String?
        for line in committed(SchemaDocs.manPath).split(separator: "\n") {
            if line.hasPrefix(".SS [") {
                section = String(line.dropFirst(5).dropLast())
                key = nil
            } else if line.hasPrefix(".SH") {
                section = nil
                key = nil
            } else if line.hasPrefix(".B "), let section {
                key = "\(section).\(line.dropFirst(3))"
                entries[key!] = ""
            } else if let key, !line.hasPrefix(".") {
                let text = line.replacingOccurrences(of: "\\-", with: "-").replacingOccurrences(of: "\\fB", with: "")
                    .replacingOccurrences(of: "\\fR", with: "").replacingOccurrences(of: "\\e", with: "\\")
                    .replacingOccurrences(of: "\\&", with: "")
                entries[key, default: ""] += text + "\n"
            }
        }
        return entries
    }
}
