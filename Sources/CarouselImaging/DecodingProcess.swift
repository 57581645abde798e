import CPlatform
import CarouselCore
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// HEIF and AVIF pictures decoded by a short-lived helper process, so that a
/// crash inside libheif costs one picture, not the carousel.
///
/// Debian 12's libheif 1.15 crashes on some damaged HEICs inside its grid
/// decoding (SIGSEGV, or an uncaught `std::system_error` when it cannot
/// start a thread per tile; heif-convert crashes on the same files), and no
/// check of ours before the call can tell those files apart. The helper is
/// the daemon's own executable started again with a hidden subcommand
/// (`carouseld decode-picture`): it reads the file's bytes from descriptor 3,
/// decodes them in its own address space and writes the picture, or the
/// `ImageError` it met, into descriptor 4, an anonymous memory file the
/// parent then reads. A helper that dies by a signal, exits otherwise or
/// does not finish in time becomes an `ImageError` like any broken file:
/// one log line, and the picture is skipped.
///
/// It costs a process start per HEIF picture decoded and one more copy of
/// its pixels, through the memory file: `carousel-bench --transitions`
/// measured a 4032x3024 HEIC decoded and scaled this way at 1.09x the
/// in-process decode.
public struct DecodingProcess: Sendable {
    /// The program to start; `/proc/self/exe` is the running binary even
    /// after a package upgrade replaced the file.
    public var executable: String
    /// Its argv, program name first; `--max-pixels N` is appended, and
    /// `--decode-budget BYTES` when a decode has one.
    public var arguments: [String]
    /// How long a decode may take before the helper is killed.
    public var timeoutMilliseconds: Int

    public init(executable: String, arguments: [String], timeoutMilliseconds: Int = 120_000) {
        self.executable = executable
        self.arguments = arguments
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    /// What one decode may allocate in the helper: 24 bytes a pixel of
    /// `max_pixels`, at least 256 MiB. A 10-bit 4:4:4 AVIF with alpha, the
    /// dearest picture libheif 1.15 decodes, holds about 22 bytes a pixel at
    /// its peak, counted from the buffers (not measured): the codec's picture
    /// (6), libheif's copy of its planes (6) and alpha (2), the 8-bit RGBA
    /// libheif converts it to (4) and ours (4).
    /// A damaged file can declare a far larger frame inside the codec's
    /// stream than its container does, past every check made before the
    /// decode (a 352-byte AVIF made dav1d ask for 3 GB: Fuzz/regressions/avif):
    /// the cap makes such an allocation fail, and the decode with it.
    /// Never more than the board's memory: a picture that needs more
    /// cannot be shown there whatever max_pixels allows.
    public static func heapBudget(maxPixels: Int) -> Int {
        let (bytes, overflow) = maxPixels.multipliedReportingOverflow(by: 24)
        return max(256 << 20, min(overflow ? Int.max : bytes, PixelMemory.boardBytes))
    }

    /// Caps this process's address space as the helper's is capped for
    /// `maxPixels`, so that an allocation past the budget fails; false when
    /// it could not be set (a sandbox that forbids it). The replayer of the
    /// AVIF and HEIF fuzz inputs uses it too.
    @discardableResult
    public static func limitAddressSpace(maxPixels: Int) -> Bool {
        cplatform_limit_address_space(addressSpaceAllowance(maxPixels: maxPixels)) == 0
    }

    /// The helper's address space beyond what it has mapped at its start:
    /// the heap budget, and 512 MiB for what threads reserve whether they use
    /// it or not (each codec thread's stack and glibc's malloc arena). No
    /// decode in the helper can hold more heap than this; the AVIF and HEIF
    /// fuzz targets hold every decode to it.
    public static func addressSpaceAllowance(maxPixels: Int) -> Int {
        let (bytes, overflow) = heapBudget(maxPixels: maxPixels).addingReportingOverflow(512 << 20)
        return overflow ? Int.max : bytes
    }

    /// Decodes `contents` (sniffed as `format`) in a helper process.
    func decode(_ contents: FileContents, format: ImageFormat, path: String, maxPixels: Int,
                decodeBudget: Int = .max) throws(ImageError) -> DecodedImage {
        func failed(_ call: String, _ code: Int32 = errno) -> ImageError {
            ImageError(path: path, reason: .readFailed(call: call, errno: code))
        }
        let input = cplatform_memory_file("carousel-picture")
        guard input >= 0 else { throw failed("memfd_create") }
        defer { close(input) }
        let output = cplatform_memory_file("carousel-pixels")
        guard output >= 0 else { throw failed("memfd_create") }
        defer { close(output) }
        guard writeAll(input, UnsafeRawBufferPointer(start: contents.base, count: contents.count)) else {
            throw failed("write")
        }

        var argv = arguments + ["--max-pixels", String(maxPixels)]
        if decodeBudget < .max { argv += ["--decode-budget", String(decodeBudget)] }
        var pid: pid_t = 0
        let started = Self.withCStrings(argv) { cArgs in
            Self.withCStrings(Self.helperEnvironment) { cEnv in
                cplatform_spawn_helper(executable, cArgs, cEnv, input, output, &pid)
            }
        }
        guard started == 0 else { throw failed("posix_spawn", started) }

        let status = wait(for: pid)
        guard let status else {
            throw ImageError(path: path, reason: .corrupt(format, detail:
                "libheif did not finish within \(timeoutMilliseconds / 1000) s; its decoding process was stopped"))
        }
        // WIFSIGNALED / WEXITSTATUS, which are macros.
        let signal = status & 0x7F
        if signal != 0 && signal != 0x7F {
            throw ImageError(path: path, reason: .corrupt(format, detail:
                "libheif crashed on it (\(Self.signalName(signal)) in the process that decodes it; carouseld runs on)"))
        }
        let exitCode = (status >> 8) & 0xFF
        guard exitCode == 0 else {
            throw ImageError(path: path, reason: .corrupt(format, detail: "its decoding process exited with status \(exitCode)"))
        }
        return try PictureTransfer.read(from: output, path: path, format: format, maxPixels: maxPixels)
    }

    /// Waits for `pid` to end, at most `timeoutMilliseconds` (then kills it).
    /// The wait status, or nil after a timeout.
    private func wait(for pid: pid_t) -> Int32? {
        Self.wait(for: pid, timeoutMilliseconds: timeoutMilliseconds)
    }

    /// Waits for the helper `pid` to end, at most `timeoutMilliseconds`
    /// (then kills it). The wait status, or nil after a timeout. For every
    /// helper that checks or decodes a file (the web's upload check too).
    public static func wait(for pid: pid_t, timeoutMilliseconds: Int) -> Int32? {
        var timedOut = false
        let pidfd = cplatform_pidfd_open(pid)
        if pidfd >= 0 {
            defer { close(pidfd) }
            let deadline = Int(MonotonicClock.now() / 1000) + timeoutMilliseconds
            while true {
                let remaining = deadline - Int(MonotonicClock.now() / 1000)
                if remaining <= 0 {
                    timedOut = true
                    break
                }
                var entry = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
                let n = poll(&entry, 1, Int32(min(remaining, Int(Int32.max))))
                if n > 0 { break }
                if n < 0 && errno != EINTR { break }
            }
            if timedOut { kill(pid, SIGKILL) }
        }
        // Without pidfd_open (Linux before 5.3) the wait has no time limit.
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return timedOut ? nil : 0x7F00 }
        }
        return timedOut ? nil : status
    }

    static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGSEGV: return "SIGSEGV"
        case SIGABRT: return "SIGABRT"
        case SIGBUS: return "SIGBUS"
        case SIGFPE: return "SIGFPE"
        case SIGILL: return "SIGILL"
        case SIGKILL: return "SIGKILL"
        default: return "signal \(signal)"
        }
    }

    /// This process's environment, for a helper it starts (this one, or the
    /// clip's): without Swift's crash reports, which would only slow a
    /// helper's end (the parent writes the one line that matters).
    public static var helperEnvironment: [String] {
        var result: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            let line = String(cString: pointer)
            if !line.hasPrefix("SWIFT_BACKTRACE=") { result.append(line) }
            entry += 1
        }
        return result + ["SWIFT_BACKTRACE=enable=no"]
    }

    /// `body` with a NULL-terminated C array of `strings` (an argv, an
    /// environment), valid during the call.
    public static func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        let copies = strings.map { strdup($0) } + [nil]
        defer { for pointer in copies { free(pointer) } }
        return body(copies)
    }

    /// The helper's side, run by `carouseld decode-picture`: decodes what
    /// descriptor 3 holds in this process and writes the outcome into
    /// descriptor 4. The exit status is 0 whenever the outcome was written,
    /// a decoding error included.
    public static func serveHelperRequest(maxPixels: Int, decodeBudget: Int = .max) -> Int32 {
        _ = cplatform_helper_process_setup()
        // After the setup, before libheif is loaded: its libraries, its
        // codecs' threads and their buffers all come out of the allowance.
        limitAddressSpace(maxPixels: maxPixels)
        var outcome: Result<DecodedImage, ImageError>
        var fault: TestFault?
        do throws(ImageError) {
            let contents = try FileContents(readingFile: "/proc/self/fd/3", maxBytes: ImageDecoder.maxFileBytes)
            fault = TestFault.requested(for: contents)
            outcome = .success(try ImageDecoder.decode(contents, path: "", targetSize: nil, fit: .none,
                                                       maxPixels: maxPixels, decodeBudget: decodeBudget, process: nil))
        } catch {
            outcome = .failure(error)
        }
        switch (fault, outcome) {
        case let (.die(signal)?, .success(image)):
            // Half an answer, then the end a crash in libheif would bring.
            _ = PictureTransfer.write(outcome, to: 4, rows: image.height / 2)
            TestFault.die(by: signal)
        case (.allocateTheAllowance?, .success):
            // What a codec asking for more than the cap meets: a failed
            // allocation (the picture is answered only if it did not fail).
            let bytes = addressSpaceAllowance(maxPixels: maxPixels)
            if let memory = malloc(bytes) {
                free(memory)
            } else {
                outcome = .failure(ImageError(path: "", reason: .outOfMemory(bytes: bytes)))
            }
        default:
            break
        }
        return PictureTransfer.write(outcome, to: 4) ? 0 : 1
    }

    /// Faults of the helper on demand, for tests only. The crash path must
    /// stay tested, and no file is known to crash libheif any more: the
    /// inputs Debian 12's libheif 1.15 used to abort or fault on
    /// (Fuzz/libheif-crashes) are refused with an error by its security
    /// update 1.15.1-1+deb12u3, which also refuses the AVIF whose stream
    /// asked dav1d for 3 GB (Fuzz/regressions/avif) before that allocation,
    /// so no file reaches the address-space cap either. With
    /// `CAROUSELD_TEST_DECODE_FAULT` in the daemon's environment (the helper
    /// inherits it), a helper given a picture whose bytes hold `marker`
    /// decodes it with libheif, then:
    /// * `SIGSEGV`, `SIGABRT`, `SIGBUS` or `SIGKILL`: writes half of its
    ///   answer and dies by that signal, which is what the parent sees of a
    ///   crash inside libheif, with a half-written picture it must not show;
    /// * `allocate`: asks malloc for the whole address-space allowance, as a
    ///   codec asking for a frame past the cap would, and answers the
    ///   refusal (`.outOfMemory`) if the cap refused it, else the picture.
    /// Without the variable, or for any other picture, nothing changes.
    public enum TestFault: Equatable {
        case die(Int32)
        case allocateTheAllowance

        public static let variable = "CAROUSELD_TEST_DECODE_FAULT"
        public static let marker = "carouseld test: the decoding helper dies on this picture"

        /// `heif` with a top-level `free` box holding `marker` after its
        /// boxes: libheif skips the box and decodes the picture as before.
        public static func marked(_ heif: [UInt8]) -> [UInt8] {
            let bytes = Array(marker.utf8)
            return heif + withUnsafeBytes(of: UInt32(8 + bytes.count).bigEndian, Array.init) + Array("free".utf8) + bytes
        }

        static func requested(for contents: FileContents) -> TestFault? {
            guard let value = getenv(variable).map({ String(cString: $0) }) else { return nil }
            let fault: TestFault
            switch value {
            case "SIGSEGV": fault = .die(SIGSEGV)
            case "SIGABRT": fault = .die(SIGABRT)
            case "SIGBUS": fault = .die(SIGBUS)
            case "SIGKILL": fault = .die(SIGKILL)
            case "allocate": fault = .allocateTheAllowance
            default: return nil
            }
            guard let base = contents.base else { return nil }
            let bytes = UnsafeRawBufferPointer(start: base, count: contents.count)
            return bytes.firstRange(of: Array(marker.utf8)) != nil ? fault : nil
        }

        static func die(by signal: Int32) -> Never {
            // The default action, whatever a runtime installed: the process
            // ends by the signal, as it would inside libheif.
            _ = Glibc.signal(signal, SIG_DFL)
            raise(signal)
            _exit(70)
        }
    }
}

/// The helper's answer in its memory file: a 32-byte header, then either
/// the picture's rows (width * 4 bytes each, no padding) or an error.
enum PictureTransfer {
    static let magic: [UInt8] = Array("crslpic1".utf8)
    static let headerBytes = 32

    /// Header words after the magic: kind (0 picture, 1 error), then for a
    /// picture width, height, format (0 xrgb8888, 1 premultiplied argb8888),
    /// has alpha; for an error the byte count of its fields.
    /// `rows`: at most that many of a picture's rows (TestFault's half answer).
    static func write(_ outcome: Result<DecodedImage, ImageError>, to fd: Int32, rows: Int = .max) -> Bool {
        var header = [UInt8](repeating: 0, count: headerBytes)
        header.replaceSubrange(0..<8, with: magic)
        func put(_ value: Int, at word: Int) {
            withUnsafeBytes(of: UInt32(truncatingIfNeeded: value)) { header.replaceSubrange(8 + word * 4 ..< 12 + word * 4, with: $0) }
        }
        switch outcome {
        case let .success(image):
            put(0, at: 0)
            put(image.width, at: 1)
            put(image.height, at: 2)
            put(image.format == .xrgb8888 ? 0 : 1, at: 3)
            put(image.hasAlpha ? 1 : 0, at: 4)
            guard writeAll(fd, header) else { return false }
            return image.withUnsafeBytes { pixels in
                for y in 0..<min(image.height, rows) {
                    let row = UnsafeRawBufferPointer(rebasing: pixels[y * image.stride ..< y * image.stride + image.width * 4])
                    guard CarouselPlatform.writeAll(fd, row) else { return false }
                }
                return true
            }
        case let .failure(error):
            let text = Array(error.reason.transferFields.joined(separator: "\u{1F}").utf8)
            put(1, at: 0)
            put(text.count, at: 1)
            return writeAll(fd, header) && writeAll(fd, text)
        }
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { CarouselPlatform.writeAll(fd, $0) }
    }

    /// Reads the helper's answer; anything not exactly as `write` lays it
    /// out, or a picture the limits refuse, is an error about the picture.
    static func read(from fd: Int32, path: String, format: ImageFormat, maxPixels: Int) throws(ImageError) -> DecodedImage {
        let malformed = ImageError(path: path, reason: .corrupt(format, detail: "its decoding process gave a malformed answer"))
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw ImageError(path: path, reason: .readFailed(call: "fstat", errno: errno)) }
        let size = Int(info.st_size)
        var header = [UInt8](repeating: 0, count: headerBytes)
        guard size >= headerBytes, readAll(fd, into: &header, at: 0), Array(header[0..<8]) == magic else { throw malformed }
        func word(_ index: Int) -> Int {
            Int(header.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 8 + index * 4, as: UInt32.self) })
        }
        switch word(0) {
        case 0:
            let width = word(1), height = word(2), formatCode = word(3), alpha = word(4)
            guard width > 0, height > 0, width <= ImageDecoder.maxSide, height <= ImageDecoder.maxSide,
                  formatCode <= 1, alpha <= 1, size == headerBytes + width * height * 4 else { throw malformed }
            if width * height > maxPixels {
                throw ImageError(path: path, reason: .tooManyPixels(width: width, height: height, limit: maxPixels))
            }
            let image = try DecodedImage(width: width, height: height,
                                         format: formatCode == 0 ? .xrgb8888 : .argb8888Premultiplied,
                                         hasAlpha: alpha == 1, path: path)
            // DecodedImage rows are width * 4 bytes apart: one read fills it.
            precondition(image.stride == width * 4)
            var done = 0
            while done < image.byteCount {
                let n = pread(fd, image.base + done, image.byteCount - done, off_t(headerBytes + done))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw malformed }
                done += n
            }
            return image
        case 1:
            let count = word(1)
            guard count > 0, count <= 65536, size == headerBytes + count else { throw malformed }
            var text = [UInt8](repeating: 0, count: count)
            guard readAll(fd, into: &text, at: headerBytes),
                  let reason = ImageError.Reason(transferFields: String(decoding: text, as: UTF8.self)
                      .split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init)) else { throw malformed }
            throw ImageError(path: path, reason: reason)
        default:
            throw malformed
        }
    }

    private static func readAll(_ fd: Int32, into bytes: inout [UInt8], at offset: Int) -> Bool {
        let count = bytes.count
        return bytes.withUnsafeMutableBytes { buffer in
            var done = 0
            while done < count {
                let n = pread(fd, buffer.baseAddress! + done, count - done, off_t(offset + done))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return false }
                done += n
            }
            return true
        }
    }
}

extension ImageError.Reason {
    /// The reason as text fields, for the helper's answer.
    var transferFields: [String] {
        switch self {
        case .notFound: return ["notFound"]
        case .permissionDenied: return ["permissionDenied"]
        case .notARegularFile: return ["notARegularFile"]
        case let .readFailed(call, code): return ["readFailed", call, String(code)]
        case .emptyFile: return ["emptyFile"]
        case let .fileTooLarge(bytes): return ["fileTooLarge", String(bytes)]
        case let .unsupportedFormat(detected): return ["unsupportedFormat"] + (detected.map { [$0] } ?? [])
        case let .invalidDimensions(width, height): return ["invalidDimensions", String(width), String(height)]
        case let .tooManyPixels(width, height, limit): return ["tooManyPixels", String(width), String(height), String(limit)]
        case let .sideTooLong(width, height): return ["sideTooLong", String(width), String(height)]
        case let .corrupt(format, detail): return ["corrupt", format.rawValue, detail]
        case let .unsupportedVariant(format, detail): return ["unsupportedVariant", format.rawValue, detail]
        case let .outOfMemory(bytes): return ["outOfMemory", String(bytes)]
        case let .overDecodeBudget(needs, budget, cause, fix): return ["overDecodeBudget", String(needs), String(budget), cause, fix]
        }
    }

    /// The reason `transferFields` wrote, or nil for anything else. The
    /// texts come from another process: control characters become `?` and
    /// each is cut at 300 characters, so that the reason stays one log line.
    init?(transferFields raw: [String]) {
        let fields = raw.map { field in
            String(field.unicodeScalars.prefix(300).map { $0.value < 0x20 || (0x7F..<0xA0).contains($0.value) ? "?" : Character($0) })
        }
        func int(_ i: Int) -> Int? { i < fields.count ? Int(fields[i]) : nil }
        let arity: Int
        switch fields.first {
        case "notFound": self = .notFound; arity = 1
        case "permissionDenied": self = .permissionDenied; arity = 1
        case "notARegularFile": self = .notARegularFile; arity = 1
        case "emptyFile": self = .emptyFile; arity = 1
        case "readFailed":
            guard fields.count > 1, let code = int(2).flatMap(Int32.init(exactly:)) else { return nil }
            self = .readFailed(call: fields[1], errno: code); arity = 3
        case "fileTooLarge":
            guard let bytes = int(1) else { return nil }
            self = .fileTooLarge(bytes: bytes); arity = 2
        case "unsupportedFormat":
            self = .unsupportedFormat(detected: fields.count > 1 ? fields[1] : nil); arity = min(fields.count, 2)
        case "invalidDimensions":
            guard let width = int(1), let height = int(2) else { return nil }
            self = .invalidDimensions(width: width, height: height); arity = 3
        case "tooManyPixels":
            guard let width = int(1), let height = int(2), let limit = int(3) else { return nil }
            self = .tooManyPixels(width: width, height: height, limit: limit); arity = 4
        case "sideTooLong":
            guard let width = int(1), let height = int(2) else { return nil }
            self = .sideTooLong(width: width, height: height); arity = 3
        case "corrupt", "unsupportedVariant":
            guard fields.count == 3, let format = ImageFormat(rawValue: fields[1]) else { return nil }
            self = fields[0] == "corrupt" ? .corrupt(format, detail: fields[2]) : .unsupportedVariant(format, detail: fields[2])
            arity = 3
        case "outOfMemory":
            guard let bytes = int(1) else { return nil }
            self = .outOfMemory(bytes: bytes); arity = 2
        case "overDecodeBudget":
            guard let needs = int(1), let budget = int(2), fields.count == 5 else { return nil }
            self = .overDecodeBudget(needs: needs, budget: budget, cause: fields[3], fix: fields[4]); arity = 5
        default:
            return nil
        }
        guard fields.count == arity else { return nil }
    }
}
