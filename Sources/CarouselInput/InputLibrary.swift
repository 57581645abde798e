import CarouselPlatform
internal import CInputLoader

/// libinput, opened by the first `InputContext` of the process rather than
/// linked (CInputLoader.h): a start of carouseld does not load it nor the
/// eight libraries it pulls in (libwacom, glib, ...); the daemon makes its
/// context once the first picture is on screen (issue 31).
enum InputLibrary {
    /// The Debian package of libinput.so.10, for the error's hint.
    static let package = "libinput10"

    /// libinput's functions, or why input cannot be read in this process
    /// (libinput10 not installed, or without a function we call). A static
    /// let: opened once, by whichever thread makes a context first; never
    /// closed.
    static let loaded: Result<cinput_library, InputError> = load(cinput_load)

    /// Runs `loader` (`cinput_load`, or `cinput_load_soname` in a test).
    static func load(
        _ loader: (UnsafeMutablePointer<cinput_library>, UnsafeMutablePointer<CChar>, Int) -> Int32
    ) -> Result<cinput_library, InputError> {
        loadLibrary(loader).mapError { InputError.libraryUnavailable(reason: $0.message) }
    }

    /// The table, or the error every context of the process gets.
    static func table() throws(InputError) -> cinput_library {
        try loaded.get()
    }

    /// Whether libinput is loaded (opening it if nothing did yet).
    static var isLoaded: Bool {
        if case .success = loaded { return true }
        return false
    }
}

extension InputLibrary {
    /// Why libinput cannot be loaded under this soname, as the log would
    /// say it; nil when it can. For tests of a missing or wrong library.
    static func loadError(soname: String) -> InputError? {
        if case .failure(let error) = load({ cinput_load_soname(soname, $0, $1, $2) }) {
            return error
        }
        return nil
    }
}
