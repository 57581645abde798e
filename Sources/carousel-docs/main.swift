// Writes the documents made from the configuration schema, from the
// repository's root: etc/carouseld/carouseld.ini, the key table and the
// capabilities' table in README.md (between their marker lines),
// man/carouseld.ini.5, and the capabilities' requests in man/carouselctl.1.
// SchemaDocsTests fails until they are written again after a schema change.

import CarouselConfig
import Foundation

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("carousel-docs: \(message)\n".utf8))
    exit(1)
}

let root = FileManager.default.currentDirectoryPath
func path(_ relative: String) -> String { root + "/" + relative }

guard FileManager.default.fileExists(atPath: path("Package.swift")),
      let readme = try? String(contentsOfFile: path(SchemaDocs.readmePath), encoding: .utf8) else {
    fail("run me from the repository's root (swift run carousel-docs): no Package.swift and README.md in \(root)")
}
guard let newReadme = SchemaDocs.readme(replacingKeysIn: readme) else {
    fail("README.md lacks the lines \(SchemaDocs.readmeBegin) and \(SchemaDocs.readmeEnd), in that order; "
         + "put them where the key table goes")
}

guard let controlPage = try? String(contentsOfFile: path(SchemaDocs.controlManPath), encoding: .utf8),
      let newControlPage = SchemaDocs.controlManual(replacingIn: controlPage) else {
    fail("\(SchemaDocs.controlManPath) lacks the lines \(SchemaDocs.controlManBegin) and \(SchemaDocs.controlManEnd), in that order; "
         + "put them where the capabilities' requests go")
}

let documents = [
    (SchemaDocs.iniPath, SchemaDocs.shippedINI()),
    (SchemaDocs.readmePath, newReadme),
    (SchemaDocs.manPath, SchemaDocs.manPage()),
    (SchemaDocs.controlManPath, newControlPage),
]
for (relative, text) in documents {
    let file = path(relative)
    let old = try? String(contentsOfFile: file, encoding: .utf8)
    if old == text {
        print("unchanged \(relative)")
        continue
    }
    do {
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try text.write(toFile: file, atomically: true, encoding: .utf8)
    } catch {
        fail("cannot write \(relative): \(error)")
    }
    print("wrote \(relative)")
}
