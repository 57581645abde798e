// The text libraries are not linked (issue 31): CTextLoader opens them with
// dlopen at the first text drawn. What it opened is the three libraries, and
// one that is missing, or is not the one expected, makes one error naming it.
// That carouseld does not load them at start is DecodingProcessTests'
// libheifNotLoadedAtStart; that text is still drawn, every other test here.

@testable import CarouselText
import Testing

@Suite("Text libraries opened with dlopen") struct TextLibrariesTests {
    @Test("fontconfig, FreeType and HarfBuzz load and say their versions")
    func theThreeLibrariesLoad() throws {
        let versions = try TextLibraries.versions()
        #expect(TextLibraries.isLoaded)
        let match = try #require(versions.wholeMatch(of:
            #/fontconfig (\d+)\.(\d+)\.(\d+), FreeType (\d+)\.(\d+)\.(\d+), HarfBuzz (\d+)\.(\d+)\.(\d+)/#), "\(versions)")
        // Debian 12: fontconfig 2.14, FreeType 2.12, HarfBuzz 6.0; hb_ft_font_create_referenced is HarfBuzz 0.9.38's.
        #expect(Int(match.output.1) == 2, "\(versions)")
        #expect(Int(match.output.4) == 2, "\(versions)")
        #expect((Int(match.output.7) ?? 0) >= 1, "\(versions)")
    }

    @Test("a text library that cannot be opened is one error naming it, with the packages to install",
          arguments: [("libfontconfig.so.404", 0), ("libfreetype.so.404", 1), ("libharfbuzz.so.404", 2)])
    func aMissingLibraryIsNamed(missing: String, position: Int) throws {
        var sonames = ["libfontconfig.so.1", "libfreetype.so.6", "libharfbuzz.so.0"]
        sonames[position] = missing
        let error = try #require(TextLibraries.loadError(fontconfig: sonames[0], freetype: sonames[1], harfbuzz: sonames[2]))
        #expect(error.message.hasPrefix("the text libraries cannot be loaded: \(missing): "), "\(error)")
        #expect(error.message.hasSuffix("(apt-get install libfontconfig1 libfreetype6 libharfbuzz0b)"), "\(error)")
    }

    @Test("a library that lacks a function called is an error naming both")
    func aLibraryWithoutTheFunctionIsNamed() throws {
        // libm opens, and has no FT_Init_FreeType.
        let error = try #require(TextLibraries.loadError(fontconfig: "libfontconfig.so.1", freetype: "libm.so.6",
                                                         harfbuzz: "libharfbuzz.so.0"))
        #expect(error.message.contains("libm.so.6 has no FT_Init_FreeType"), "\(error)")
    }

    @Test("the sonames carouseld opens load")
    func theDefaultSonamesLoad() {
        #expect(TextLibraries.loadError(fontconfig: "libfontconfig.so.1", freetype: "libfreetype.so.6",
                                        harfbuzz: "libharfbuzz.so.0") == nil)
    }
}
