internal import CTextLoader
import CarouselPlatform

/// fontconfig, FreeType and HarfBuzz, opened by the first `TextRenderer` of
/// the process rather than linked (CTextLoader.h): a start of carouseld that
/// draws no text does not load them nor what they pull in (issue 31).
enum TextLibraries {
    /// The Debian packages of the three libraries, for the error's hint.
    static let packages = "libfontconfig1 libfreetype6 libharfbuzz0b"

    /// The libraries' functions, or why text cannot be drawn in this process
    /// (one of them not installed, or without a function we call). A static
    /// let: opened once, by whichever thread draws text first; never closed.
    static let loaded: Result<ctext_library, TextError> = load(ctext_load)

    /// Runs `loader` (`ctext_load`, or `ctext_load_sonames` in a test) and
    /// words its failure for the one log line the caller writes.
    static func load(
        _ loader: (UnsafeMutablePointer<ctext_library>, UnsafeMutablePointer<CChar>, Int) -> Int32
    ) -> Result<ctext_library, TextError> {
        loadLibrary(loader).mapError { TextError("the text libraries cannot be loaded: \($0.message) (apt-get install \(packages))") }
    }

    /// The table, or the error every renderer of the process gets.
    static func table() throws(TextError) -> ctext_library {
        try loaded.get()
    }

    /// Whether the libraries are loaded (opening them if nothing did yet).
    static var isLoaded: Bool {
        if case .success = loaded { return true }
        return false
    }

    /// "fontconfig 2.14.1, FreeType 2.12.1, HarfBuzz 6.0.0": the versions of
    /// the libraries as loaded. The corresponding C functions are
    /// `FcGetVersion`, `FT_Library_Version` and `hb_version_string`.
    static func versions() throws(TextError) -> String {
        let libs = try table()
        let fc = Int(libs.FcGetVersion())
        var ft: FT_Library?
        guard libs.FT_Init_FreeType(&ft) == 0, let ft else { throw TextError("FreeType could not be initialised") }
        defer { _ = libs.FT_Done_FreeType(ft) }
        var major: FT_Int = 0, minor: FT_Int = 0, patch: FT_Int = 0
        libs.FT_Library_Version(ft, &major, &minor, &patch)
        let hb = libs.hb_version_string().map { String(cString: $0) } ?? "?"
        return "fontconfig \(fc / 10000).\(fc / 100 % 100).\(fc % 100), FreeType \(major).\(minor).\(patch), HarfBuzz \(hb)"
    }
}

extension TextLibraries {
    /// Why the three libraries cannot be loaded under these sonames, as the
    /// log would say it; nil when they can. For tests of a missing library.
    static func loadError(fontconfig: String, freetype: String, harfbuzz: String) -> TextError? {
        if case .failure(let error) = load({ ctext_load_sonames(fontconfig, freetype, harfbuzz, $0, $1, $2) }) {
            return error
        }
        return nil
    }
}
