import CarouselImaging
import Testing
@testable import CarouselAlbum

/// The album shows what the decoders read: the extensions come from the
/// formats the imaging room declares, not from a list of the album's own.
@Suite struct FormatTests {
    @Test func everyDeclaredFormatIsShownInEitherCase() throws {
        let folder = try ScratchFolder()
        var expected: [String] = []
        for format in ImageFormat.allCases {
            #expect(!format.fileExtensions.isEmpty, "\(format.name) declares no file name extension")
            for ext in format.fileExtensions {
                expected.append(try folder.write("\(format.rawValue)-\(ext).\(ext)", bytes: 1))
                expected.append(try folder.write("\(format.rawValue)-\(ext)-upper.\(ext.uppercased())", bytes: 1))
            }
        }
        try folder.write("notes.txt", bytes: 1)
        try folder.write("scan.bmp", bytes: 1)
        let shown = try Album.scanListing(folder: folder.path, order: .name).entries.map(\.path)
        #expect(Set(shown) == Set(expected))
    }
}
