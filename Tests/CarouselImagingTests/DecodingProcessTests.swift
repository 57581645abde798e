import Foundation
import Testing
@testable import CarouselImaging

/// The `carouseld` executable built next to this test bundle, or `$CAROUSELD_BIN`:
/// its hidden `decode-picture` command is the helper under test.
let carouseldForDecoding: String? = {
    let fm = FileManager.default
    if let env = ProcessInfo.processInfo.environment["CAROUSELD_BIN"], fm.isExecutableFile(atPath: env) { return env }
    guard let exe = try? fm.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
    var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = dir.appendingPathComponent("carouseld").path
        if fm.isExecutableFile(atPath: candidate) { return candidate }
        dir = dir.deletingLastPathComponent()
    }
    return nil
}()

/// Fuzz/libheif-crashes: what the heif fuzz target found that libheif 1.15
/// itself cannot survive (not replayed in-process by the fuzzing tests).
let libheifCrashFolder: String = {
    var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)
    return parts.joined(separator: "/") + "/Fuzz/libheif-crashes"
}()

let libheifCrashes: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: libheifCrashFolder)) ?? [])
    .filter { $0.hasSuffix(".heic") }.sorted()

/// Marsaglia's xorshift64: the same answers on every run, so a failure replays.
struct Xorshift64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}

/// Decodes `bytes` as the daemon does, HEIF and AVIF in `process`.
private func decode(_ bytes: [UInt8], name: String, process: DecodingProcess?,
                    maxPixels: Int = ImageDecoder.defaultMaxPixels) -> Result<DecodedImage, ImageError> {
    Result { () throws(ImageError) -> DecodedImage in
        try ImageDecoder.decode(FileContents(copying: bytes), path: name, targetSize: nil, fit: .none,
                                maxPixels: maxPixels, process: process)
    }
}

private func helper(timeoutMilliseconds: Int = 120_000) -> DecodingProcess? {
    carouseldForDecoding.map {
        DecodingProcess(executable: $0, arguments: ["carouseld", "decode-picture"], timeoutMilliseconds: timeoutMilliseconds)
    }
}

/// The failure, recording an issue when there was a picture instead.
private func failure(_ result: Result<DecodedImage, ImageError>, sourceLocation: SourceLocation = #_sourceLocation) -> ImageError? {
    switch result {
    case let .success(image):
        Issue.record("decoded to \(image.size) instead of failing", sourceLocation: sourceLocation)
        return nil
    case let .failure(error):
        return error
    }
}

/// What the frame promises for a picture its decoder refuses, whatever the
/// library's way to refuse: an error (not a picture), about `path`, on one line.
private func expectOneErrorAbout(_ path: String, _ error: ImageError?, sourceLocation: SourceLocation = #_sourceLocation) {
    guard let error else { return }  // failure() recorded the picture
    #expect(error.path == path, "\(error)", sourceLocation: sourceLocation)
    #expect(error.description.hasPrefix(path + ": "), "\(error)", sourceLocation: sourceLocation)
    #expect(!error.message.isEmpty && !error.description.contains("\n"), "\(error)", sourceLocation: sourceLocation)
}

@Suite("HEIF and AVIF decoded in a helper process: the same pictures and errors, and its crash costs one picture")
struct DecodingProcessTests {
    @Test("every ImageError reason survives the helper's answer", arguments: [
        ImageError.Reason.notFound, .permissionDenied, .notARegularFile, .readFailed(call: "open", errno: 5), .emptyFile,
        .fileTooLarge(bytes: 1 << 31), .unsupportedFormat(detected: nil), .unsupportedFormat(detected: "MP4 or QuickTime video"),
        .invalidDimensions(width: 0, height: 7), .tooManyPixels(width: 30000, height: 30000, limit: 64_000_000),
        .sideTooLong(width: 40000, height: 2), .corrupt(.heif, detail: "Invalid input: No 'ftyp' box"),
        .unsupportedVariant(.avif, detail: ""), .outOfMemory(bytes: 123),
        .overDecodeBudget(needs: 600 << 20, budget: 200 << 20, cause: "48 MP decoded whole by libheif, about 12 bytes a pixel",
                          fix: "save it at 14 MP or less, or as a JPEG, or raise decode_mb if the board has the memory"),
    ])
    func reasons(reason: ImageError.Reason) {
        #expect(ImageError.Reason(transferFields: reason.transferFields) == reason)
    }

    @Test("an answer that is not one of the helper's is refused; its texts stay one log line")
    func malformedFields() {
        #expect(ImageError.Reason(transferFields: []) == nil)
        #expect(ImageError.Reason(transferFields: ["corrupt", "tiff", "x"]) == nil)
        #expect(ImageError.Reason(transferFields: ["corrupt", "heif"]) == nil)
        #expect(ImageError.Reason(transferFields: ["notFound", "extra"]) == nil)
        #expect(ImageError.Reason(transferFields: ["tooManyPixels", "1", "x", "3"]) == nil)
        // A text that would break the log line is kept on one.
        #expect(ImageError.Reason(transferFields: ["corrupt", "heif", "a\nb\u{1B}[2Jc"]) == .corrupt(.heif, detail: "a?b?[2Jc"))
        #expect(ImageError.Reason(transferFields: ["corrupt", "heif", String(repeating: "x", count: 5000)])
            == .corrupt(.heif, detail: String(repeating: "x", count: 300)))
    }

    @Test("the helper's pictures are the in-process decode's, pixel for pixel",
          .enabled(if: carouseldForDecoding != nil, "carouseld not built; set CAROUSELD_BIN"),
          arguments: ["quadrants.heic", "quadrants.avif", "alpha.avif", "irot-3-exif-6.heic"])
    func samePictures(name: String) throws {
        let bytes = try Fixtures.bytes(name)
        let here = try decode(bytes, name: name, process: nil).get()
        let there = try decode(bytes, name: name, process: helper()).get()
        #expect(there.size == here.size && there.format == here.format && there.hasAlpha == here.hasAlpha)
        let same = here.withUnsafeBytes { a in there.withUnsafeBytes { b in a.elementsEqual(b) } }
        #expect(same, "\(name): the helper's pixels differ")
    }

    @Test("the helper keeps the decode budget it is given: the same refusal as in this process, and a picture within it",
          .enabled(if: carouseldForDecoding != nil, "carouseld not built; set CAROUSELD_BIN"))
    func decodeBudget() throws {
        let bytes = try Fixtures.bytes("quadrants.heic")
        func decode(budget: Int, process: DecodingProcess?) -> Result<DecodedImage, ImageError> {
            Result { () throws(ImageError) -> DecodedImage in
                try ImageDecoder.decode(FileContents(copying: bytes), path: "/photos/q.heic", targetSize: nil, fit: .none,
                                        maxPixels: ImageDecoder.defaultMaxPixels, decodeBudget: budget, process: process)
            }
        }
        let here = failure(decode(budget: 1000, process: nil))
        let there = failure(decode(budget: 1000, process: try #require(helper())))
        #expect(here != nil && there == here, "\(String(describing: there)) vs \(String(describing: here))")
        guard case .overDecodeBudget(_, 1000, _, _)? = there?.reason else {
            Issue.record("not a refusal for the budget: \(String(describing: there))")
            return
        }
        #expect(throws: Never.self) { try decode(budget: 1 << 20, process: try #require(helper())).get() }
    }

    @Test("the helper's errors are the in-process decode's, with the parent's path",
          .enabled(if: carouseldForDecoding != nil, "carouseld not built; set CAROUSELD_BIN"))
    func sameErrors() throws {
        let heic = try Fixtures.bytes("quadrants.heic")
        let cases: [(String, [UInt8], Int)] = [
            ("cut.heic", Array(heic.prefix(heic.count - 40)), ImageDecoder.defaultMaxPixels),
            ("bomb.heic", try Fixtures.bytes("bomb.heic"), ImageDecoder.defaultMaxPixels),
            ("small.heic", heic, 2047),
            ("jpeg-coded.avif", try Fixtures.bytes("jpeg-coded.avif"), ImageDecoder.defaultMaxPixels),
        ]
        for (name, bytes, maxPixels) in cases {
            let here = failure(decode(bytes, name: "/photos/" + name, process: nil, maxPixels: maxPixels))
            let there = failure(decode(bytes, name: "/photos/" + name, process: helper(), maxPixels: maxPixels))
            #expect(here != nil && there == here, "\(name): \(String(describing: there)) vs \(String(describing: here))")
        }
    }

    /// Fuzz/regressions/avif/oom-declared-frame without the fuzz target's
    /// three leading bytes: the file as the daemon would meet it. Its AV1
    /// stream declares a frame far larger than its container does, past every
    /// check before the decode; dav1d asked for 3 GB for it. Under the
    /// helper's address-space cap that allocation fails and the picture is
    /// one error (without the cap the helper took 3 GB resident and 11 s).
    /// How libheif and dav1d refuse it is theirs (a corrupt stream, an
    /// unsupported variant, a failed allocation: security updates change
    /// which); that it is one error about this picture, and no picture, is
    /// the frame's. ReplayTests holds the helper's peak memory under its cap.
    @Test("an AVIF whose stream declares a 3 GB frame is one error from the helper, under its memory cap")
    func declaredFrameBeyondTheBudget() throws {
        let path = libheifCrashFolder.dropLast("libheif-crashes".count) + "regressions/avif/oom-declared-frame"
        let bytes = Array([UInt8](try Data(contentsOf: URL(fileURLWithPath: String(path)))).dropFirst(3))
        let error = failure(decode(bytes, name: "/photos/big.avif", process: try #require(helper())))
        expectOneErrorAbout("/photos/big.avif", error)
    }

    /// Inputs the heif fuzz target found on which libheif 1.15 itself failed
    /// hard in this process: an uncaught std::system_error (it could not
    /// start a thread per tile of a grid that declares thousands), or
    /// SIGSEGV in its grid decoding. Debian's security update 1.15.1-1+deb12u3
    /// refuses them with an error instead; another version may crash again.
    /// Either way each is one error about that picture, through the helper.
    @Test("a HEIC that crashed libheif 1.15 is one error about that picture, and this process runs on",
          .enabled(if: carouseldForDecoding != nil, "carouseld not built; set CAROUSELD_BIN"),
          arguments: libheifCrashes)
    func crashingHEIC(name: String) throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: libheifCrashFolder + "/" + name)))
        let error = failure(decode(bytes, name: "/photos/" + name, process: helper()))
        expectOneErrorAbout("/photos/\(name)", error)
    }

    @Test("the folder of HEICs that crashed libheif is there (the test above runs once per file)")
    func crashFolder() {
        #expect(!libheifCrashes.isEmpty, "nothing in \(libheifCrashFolder)")
    }

    /// The crash path itself, with the real helper and libheif: the helper
    /// decodes a HEIC carrying `DecodingProcess.TestFault.marker`, writes half
    /// of its answer and dies by the signal the test asks for (SIGSEGV and
    /// SIGABRT as libheif's own crashes ended, SIGKILL as the kernel's OOM
    /// killer ends it). The parent reports the crash, names the signal, and
    /// does not take the half-written picture.
    @Test("a helper killed mid-decode, half of its answer written, is one error naming the signal, not a picture",
          .enabled(if: carouseldForDecoding != nil, "carouseld not built; set CAROUSELD_BIN"),
          arguments: ["SIGSEGV", "SIGABRT", "SIGKILL"])
    func helperKilledMidDecode(signal: String) throws {
        let bytes = DecodingProcess.TestFault.marked(try Fixtures.bytes("quadrants.heic"))
        let carouseld = try #require(carouseldForDecoding)
        // Through env(1), not this process's environment: other tests start
        // helpers at the same time, and setenv is not safe beside them.
        let dying = DecodingProcess(executable: "/usr/bin/env", arguments: [
            "env", "\(DecodingProcess.TestFault.variable)=\(signal)", carouseld, "decode-picture"])
        let error = failure(decode(bytes, name: "/photos/a.heic", process: dying))
        #expect(error?.reason == .corrupt(.heif, detail:
            "libheif crashed on it (\(signal) in the process that decodes it; carouseld runs on)"), "\(String(describing: error))")
        #expect(error?.description.hasPrefix("/photos/a.heic: corrupt HEIF data: libheif crashed on it (\(signal)") == true)
        // The marker alone changes nothing: the same bytes decode without the
        // variable, and with it a picture without the marker does.
        #expect(throws: Never.self) { try decode(bytes, name: "/photos/a.heic", process: helper()).get() }
        #expect(throws: Never.self) {
            try decode(try Fixtures.bytes("quadrants.heic"), name: "/photos/b.heic", process: dying).get()
        }
    }

    /// The cap itself, now that no known file makes a codec ask past it
    /// (libheif's security update refuses the 3 GB AVIF above first): the
    /// helper, libheif loaded and the picture decoded, asks malloc for the
    /// whole allowance, which its capped address space cannot hold (with the
    /// cap gone the allocation succeeds and the picture comes back).
    @Test("an allocation of the helper's whole allowance, made after libheif decoded, is refused by its cap",
          .enabled(if: carouseldForDecoding != nil, "carouseld not built; set CAROUSELD_BIN"))
    func helperAddressSpaceIsCapped() throws {
        let carouseld = try #require(carouseldForDecoding)
        let greedy = DecodingProcess(executable: "/usr/bin/env", arguments: [
            "env", "\(DecodingProcess.TestFault.variable)=allocate", carouseld, "decode-picture"])
        let maxPixels = 1 << 22
        let error = failure(decode(DecodingProcess.TestFault.marked(try Fixtures.bytes("quadrants.heic")), name: "/photos/a.heic",
                                   process: greedy, maxPixels: maxPixels))
        #expect(error?.reason == .outOfMemory(bytes: DecodingProcess.addressSpaceAllowance(maxPixels: maxPixels)),
                "\(String(describing: error))")
    }

    // The parent's side against programs that behave as a broken helper would.

    @Test("a helper killed by a signal is a corrupt picture that names the signal")
    func killedHelper() throws {
        let process = DecodingProcess(executable: "/bin/sh", arguments: ["sh", "-c", "kill -SEGV $$"])
        let error = failure(decode(try Fixtures.bytes("quadrants.heic"), name: "/p/a.heic", process: process))
        #expect(error?.reason == .corrupt(.heif, detail: "libheif crashed on it (SIGSEGV in the process that decodes it; carouseld runs on)"))
    }

    @Test("a helper that does not finish in time is killed, and the picture is an error")
    func slowHelper() throws {
        let process = DecodingProcess(executable: "/bin/sh", arguments: ["sh", "-c", "sleep 30"], timeoutMilliseconds: 1000)
        let started = Date()
        let error = failure(decode(try Fixtures.bytes("quadrants.avif"), name: "/p/a.avif", process: process))
        #expect(error?.reason == .corrupt(.avif, detail: "libheif did not finish within 1 s; its decoding process was stopped"))
        // Not a timing assertion on the decode: sleep 30 must not have run to its end.
        #expect(Date().timeIntervalSince(started) < 25)
    }

    @Test("a helper that answers nothing, or exits with a status, is an error, not a picture")
    func silentHelper() throws {
        let bytes = try Fixtures.bytes("quadrants.heic")
        let silent = DecodingProcess(executable: "/bin/true", arguments: ["true"])
        #expect(failure(decode(bytes, name: "/p/a.heic", process: silent))?.reason
            == .corrupt(.heif, detail: "its decoding process gave a malformed answer"))
        let failing = DecodingProcess(executable: "/bin/sh", arguments: ["sh", "-c", "exit 3"])
        #expect(failure(decode(bytes, name: "/p/a.heic", process: failing))?.reason
            == .corrupt(.heif, detail: "its decoding process exited with status 3"))
        // A helper that claims a picture larger than its answer holds.
        let liar = DecodingProcess(executable: "/bin/sh", arguments: ["sh", "-c",
            "printf 'crslpic1\\000\\000\\000\\000\\100\\000\\000\\000\\040\\000\\000\\000\\000\\000\\000\\000\\000\\000\\000\\000\\000\\000\\000\\000' >&4"])
        #expect(failure(decode(bytes, name: "/p/a.heic", process: liar))?.reason
            == .corrupt(.heif, detail: "its decoding process gave a malformed answer"))
    }

    @Test("a helper that cannot be started is one error naming posix_spawn")
    func missingHelper() throws {
        let process = DecodingProcess(executable: "/nonexistent/carouseld", arguments: ["carouseld"])
        #expect(failure(decode(try Fixtures.bytes("quadrants.heic"), name: "/p/a.heic", process: process))?.reason
            == .readFailed(call: "posix_spawn", errno: ENOENT))
    }

    @Test("only HEIF and AVIF go to the helper: a JPEG never starts it")
    func otherFormatsStayHere() throws {
        let process = DecodingProcess(executable: "/bin/true", arguments: ["true"])
        let image = try decode(try Fixtures.bytes("orientation-1.jpg"), name: "/p/a.jpg", process: process).get()
        #expect(image.width > 0)
    }

    /// libheif and its codecs (libde265's tables are built by a constructor)
    /// cost every start of carouseld CPU and resident pages when linked; only
    /// the process that decodes a HEIF opens it (CHeifLoader). libmosquitto
    /// and OpenSSL likewise wait for [mqtt] (CMosquittoLoader; MQTT's own
    /// tests run against a real broker), FFmpeg's libraries (and the dozens
    /// of codec libraries libavcodec links) for the first clip (CVideoLoader),
    /// HarfBuzz, FreeType and fontconfig (and libgraphite2, brotli and expat
    /// under them) for the first caption, clock or pushed text (CTextLoader;
    /// issue 31), and libinput (with libwacom, libgudev, glib, gobject,
    /// libevdev and libmtdev) for the first input context, which the daemon
    /// makes once its first picture is on screen (CInputLoader; issue 31).
    /// The dynamic loader's own list (what
    /// `ldd` prints: LD_TRACE_LOADED_OBJECTS) of the built binary says what
    /// any start of it loads.
    @Test("carouseld starts without libheif, libmosquitto, FFmpeg, the text libraries, libinput or what they pull in; the helper still decodes a HEIC",
          .enabled(if: carouseldForDecoding != nil))
    func libheifNotLoadedAtStart() throws {
        let tracer = Process()
        tracer.executableURL = URL(fileURLWithPath: try #require(carouseldForDecoding))
        tracer.arguments = ["--version"]
        tracer.environment = ["LD_TRACE_LOADED_OBJECTS": "1"]
        let output = Pipe()
        tracer.standardOutput = output
        try tracer.run()
        let loaded = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        tracer.waitUntilExit()
        try #require(loaded.contains("libjpeg.so"), "not the loader's list: \(loaded)")
        for library in ["libheif", "libde265", "libx265", "libaom", "libdav1d", "libmosquitto", "libssl", "libcrypto",
                        "libavcodec", "libavformat", "libswscale", "libavutil", "libvpx", "libx264",
                        "libharfbuzz", "libfreetype", "libfontconfig", "libgraphite2", "libbrotli", "libexpat",
                        "libinput", "libwacom", "libgudev", "libglib-2.0", "libgobject-2.0", "libevdev", "libmtdev"] {
            #expect(!loaded.contains(library), "\(library) is loaded at every start:\n\(loaded)")
        }
        let image = try decode(try Fixtures.bytes("quadrants.heic"), name: "/p/a.heic", process: try #require(helper())).get()
        #expect(image.width == 64 && image.height == 32)
    }

    @Test("the helper has descriptors 0 to 4 and none other of ours")
    func helperDescriptors() throws {
        // A descriptor of ours that is not close-on-exec must not reach it.
        let leaked = open("/dev/null", O_RDONLY)
        defer { close(leaked) }
        try #require(leaked > 4)
        // Exit 4 when 0-4 are open and `leaked` is not, 5 otherwise.
        let probe = DecodingProcess(executable: "/bin/sh", arguments: ["sh", "-c",
            "for fd in 0 1 2 3 4; do [ -e /proc/$$/fd/$fd ] || exit 5; done; [ -e /proc/$$/fd/\(leaked) ] && exit 5; exit 4"])
        #expect(failure(decode(try Fixtures.bytes("quadrants.heic"), name: "/p/a.heic", process: probe))?.reason
            == .corrupt(.heif, detail: "its decoding process exited with status 4"))
    }

    /// The helper decodes files from anyone's phone with a library that
    /// crashes on some: its answer is read as untrusted bytes. Valid answers
    /// with bytes changed, cut or added, and answers made of random header
    /// words, are each a picture that keeps every limit or an ImageError —
    /// never a trap, never a picture larger than its bytes.
    @Test("damaged and random helper answers are an error or a picture within the limits, never a trap")
    func untrustedAnswers() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path + "/answer"
        func read(_ bytes: [UInt8], maxPixels: Int) -> Result<DecodedImage, ImageError> {
            FileManager.default.createFile(atPath: path, contents: Data(bytes))
            let fd = open(path, O_RDONLY)
            defer { close(fd) }
            return Result { () throws(ImageError) -> DecodedImage in
                try PictureTransfer.read(from: fd, path: "/p/a.heic", format: .heif, maxPixels: maxPixels)
            }
        }
        func answer(_ outcome: Result<DecodedImage, ImageError>) throws -> [UInt8] {
            FileManager.default.createFile(atPath: path, contents: nil)
            let fd = open(path, O_WRONLY)
            #expect(PictureTransfer.write(outcome, to: fd))
            close(fd)
            return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        }
        let picture = try ImageDecoder.decode(path: Fixtures.path("alpha.avif"))
        let valid = try answer(.success(picture))
        let refusal = try answer(.failure(ImageError(path: "", reason: .corrupt(.heif, detail: "Invalid input: No 'ftyp' box"))))
        // The valid answers read back exactly.
        let back = try read(valid, maxPixels: ImageDecoder.defaultMaxPixels).get()
        #expect(back.size == picture.size && back.format == picture.format && back.hasAlpha == picture.hasAlpha)
        #expect(back.withUnsafeBytes { a in picture.withUnsafeBytes { b in a.elementsEqual(b) } })
        #expect(failure(read(refusal, maxPixels: 100))?.reason == .corrupt(.heif, detail: "Invalid input: No 'ftyp' box"))

        var generator = Xorshift64(state: 0x5EED_0F_A115)
        var pictures = 0, errors = 0
        for round in 0..<3000 {
            var bytes: [UInt8]
            switch round % 4 {
            case 0:  // a header byte changed
                bytes = valid
                bytes[Int.random(in: 0..<32, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            case 1:  // cut, or bytes added
                bytes = Bool.random(using: &generator) ? Array(valid.prefix(Int.random(in: 0..<valid.count, using: &generator)))
                    : valid + (0..<Int.random(in: 1...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            case 2:  // an error's fields changed
                bytes = refusal
                bytes[Int.random(in: 8..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            default:  // the magic, then random words, then random bytes
                bytes = PictureTransfer.magic + (0..<6).flatMap { _ -> [UInt8] in
                    let word = [0, 1, 2, 64, 65536, UInt32.max, UInt32.random(in: 0...UInt32.max, using: &generator)]
                        .randomElement(using: &generator)!
                    return withUnsafeBytes(of: UInt32(word)) { Array($0) }
                }
                bytes += (0..<Int.random(in: 0...300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            }
            let maxPixels = [64, 4096, ImageDecoder.defaultMaxPixels].randomElement(using: &generator)!
            switch read(bytes, maxPixels: maxPixels) {
            case let .success(image):
                pictures += 1
                #expect(image.width * image.height <= maxPixels && image.width <= ImageDecoder.maxSide
                        && image.height <= ImageDecoder.maxSide)
                #expect(image.byteCount + PictureTransfer.headerBytes == bytes.count, "\(image.size) from \(bytes.count) bytes")
            case let .failure(error):
                errors += 1
                #expect(error.path == "/p/a.heic" && !error.description.contains("\n"))
            }
        }
        // Both outcomes were met: the changes reached the checks, not only the magic.
        #expect(pictures > 0 && errors > 0, "\(pictures) pictures, \(errors) errors")
    }
}
