// libinput is not linked (issue 31): CInputLoader opens it with dlopen when
// the first input context is made. What it opened is libinput, and a library
// that is missing, or is not libinput, makes one error line naming it. That
// carouseld does not load it at start is DecodingProcessTests'
// libheifNotLoadedAtStart; that input is still read, InputContextTests and
// the VM's input tests.

import CInputLoader
import CLibinput
import CUdev
@testable import CarouselInput
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("libinput opened with dlopen") struct InputLibraryTests {
    @Test("libinput.so.10 loads, and its table makes and releases a udev context")
    func libinputLoads() throws {
        #expect(InputLibrary.loadError(soname: "libinput.so.10") == nil)
        let lib = try InputLibrary.table()
        #expect(InputLibrary.isLoaded)
        // No seat assigned: no device is opened, whatever the machine has.
        let udev = try #require(udev_new())
        defer { udev_unref(udev) }
        var interface = libinput_interface(open_restricted: { _, _, _ in -EACCES }, close_restricted: { _, _ in })
        try withUnsafePointer(to: &interface) { interface in
            let context = try #require(lib.libinput_udev_create_context(interface, nil, udev))
            #expect(lib.libinput_get_fd(context) >= 0)
            #expect(lib.libinput_get_user_data(context) == nil)
            #expect(lib.libinput_unref(context) == nil, "the last reference destroys the context")
        }
    }

    @Test("a libinput that cannot be opened is one error line naming it, with the package to install")
    func aMissingLibraryIsNamed() throws {
        let error = try #require(InputLibrary.loadError(soname: "libinput.so.404"))
        guard case let .libraryUnavailable(reason) = error else {
            Issue.record("not a load failure: \(error)")
            return
        }
        #expect(reason.hasPrefix("libinput.so.404: "), "\(error)")
        #expect(error.description.hasPrefix("input: cannot load libinput (libinput.so.404: "), "\(error)")
        #expect(error.description.hasSuffix("): touch and keys are not read (apt-get install libinput10)"), "\(error)")
        #expect(!error.description.contains("\n"), "\(error)")
    }

    @Test("a library that is not libinput is an error naming it and the function it lacks")
    func aLibraryWithoutTheFunctionIsNamed() throws {
        // libm opens, and has no libinput_udev_create_context.
        let error = try #require(InputLibrary.loadError(soname: "libm.so.6"))
        #expect(error == .libraryUnavailable(reason: "libm.so.6 has no libinput_udev_create_context"), "\(error)")
    }
}
