// `carouseld calibrate --config`: one key set, every other byte kept, the
// file replaced atomically and only with a valid configuration.

import CarouselConfig
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Setting one INI key, everything else kept")
struct IniRewriterTests {
    static let matrix = "0 -1.12 1.07 0.93 0 -0.04"

    @Test("an existing key is replaced, every other line kept byte for byte")
    func replace() {
        let before = "# carouseld\n\n[display]\nrotation = 90   # turned\n\n[input]\n# the matrix, see README\n  calibration = 1 0 0 0 1 0  ; old one\npointer = yes\n\n; next\n[carousel]\nwrap = no\n"
        let after = IniRewriter.setting("calibration", to: Self.matrix, in: "input", of: before)
        #expect(after == "# carouseld\n\n[display]\nrotation = 90   # turned\n\n[input]\n# the matrix, see README\n  calibration = \(Self.matrix) ; old one\npointer = yes\n\n; next\n[carousel]\nwrap = no\n")
    }

    @Test("added after the last key of an existing [input], not into the next section's comment")
    func addToSection() {
        let before = "[input]\n# calibration = 1 0 0 0 1 0\nseat = seat0\npointer = yes\n\n# The carousel\n[carousel]\ncalibration = x\n"
        let after = IniRewriter.setting("calibration", to: Self.matrix, in: "input", of: before)
        #expect(after == "[input]\n# calibration = 1 0 0 0 1 0\nseat = seat0\npointer = yes\ncalibration = \(Self.matrix)\n\n# The carousel\n[carousel]\ncalibration = x\n")
        let empty = IniRewriter.setting("calibration", to: Self.matrix, in: "input", of: "[input]\n# nothing yet\n[display]\n")
        #expect(empty == "[input]\ncalibration = \(Self.matrix)\n# nothing yet\n[display]\n")
    }

    @Test("a missing section is added at the end, also after a last line without newline")
    func addSection() {
        #expect(IniRewriter.setting("calibration", to: Self.matrix, in: "input", of: "[display]\nrotation = 0")
            == "[display]\nrotation = 0\n\n[input]\ncalibration = \(Self.matrix)\n")
        #expect(IniRewriter.setting("calibration", to: Self.matrix, in: "input", of: "")
            == "[input]\ncalibration = \(Self.matrix)\n")
        #expect(IniRewriter.setting("calibration", to: Self.matrix, in: "input", of: "[input]\nseat = seat1")
            == "[input]\nseat = seat1\ncalibration = \(Self.matrix)\n")
    }

    @Test("CRLF files stay CRLF")
    func crlf() {
        let before = "[input]\r\nseat = seat0\r\n\r\n[display]\r\nrotation = 0\r\n"
        #expect(IniRewriter.setting("calibration", to: "1 0 0 0 1 0", in: "input", of: before)
            == "[input]\r\nseat = seat0\r\ncalibration = 1 0 0 0 1 0\r\n\r\n[display]\r\nrotation = 0\r\n")
        #expect(IniRewriter.setting("seat", to: "seat1", in: "input", of: before)
            == "[input]\r\nseat = seat1\r\n\r\n[display]\r\nrotation = 0\r\n")
    }

    @Test("the result parses, with the new matrix")
    func parses() throws {
        let text = IniRewriter.setting("calibration", to: Self.matrix, in: "input", of: "# x\n[input]\nseat = seat0\n")
        let config = try Configuration.parse(text, file: "test.ini")
        #expect(config.input.calibration == [0, -1.12, 1.07, 0.93, 0, -0.04])
    }

    @Test("the file is replaced atomically: mode kept, no temporary left, invalid files untouched")
    func update() throws {
        var template = Array("/tmp/carousel-ini-XXXXXX".utf8CString)
        let dir = String(cString: try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }))
        defer { _ = rmdir(dir) }
        let path = dir + "/carouseld.ini"
        defer { unlink(path) }
        let original = "# kiosk\n[input]\nseat = seat0   # the only seat\n"
        try write(original, to: path, mode: 0o640)
        try IniRewriter.update(path: path, section: "input", key: "calibration", value: Self.matrix)
        #expect(try read(path) == original + "calibration = \(Self.matrix)\n")
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o640)
        #expect(try entries(dir) == ["carouseld.ini"])

        // A file that would not load is left as it is.
        let broken = "[input]\nseat = seat0\nbogus line\n"
        try write(broken, to: path, mode: 0o644)
        #expect(throws: ConfigWriteError.self) {
            try IniRewriter.update(path: path, section: "input", key: "calibration", value: Self.matrix)
        }
        #expect(try read(path) == broken)
        #expect(try entries(dir) == ["carouseld.ini"])

        // A file that does not exist yet is created.
        unlink(path)
        try IniRewriter.update(path: path, section: "input", key: "calibration", value: Self.matrix)
        #expect(try read(path) == "[input]\ncalibration = \(Self.matrix)\n")
    }

    func write(_ text: String, to path: String, mode: mode_t) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode)
        try #require(fd >= 0)
        fchmod(fd, mode)
        var t = text
        _ = t.withUTF8 { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    func read(_ path: String) throws -> String {
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = Glibc.read(fd, &buffer, buffer.count)
        return String(decoding: buffer[0..<max(0, n)], as: UTF8.self)
    }

    func entries(_ dir: String) throws -> [String] {
        let d = try #require(opendir(dir))
        defer { closedir(d) }
        var names: [String] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}
