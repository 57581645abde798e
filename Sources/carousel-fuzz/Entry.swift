import CarouselFuzzing
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

// Built two ways. By scripts/fuzz.sh with `-sanitize=fuzzer,address` and
// `-D CAROUSEL_FUZZING`: `main` hands over to libFuzzer's driver, which
// calls `fuzzOneInput` with each input, for the target named by
// CAROUSEL_FUZZ_TARGET. By a plain `swift build`: `main` replays files
// through a target's checks (`carousel-fuzz TARGET FILE...`), to look at an
// input without sanitizers.
//
// libFuzzer's own `main` cannot be used: SwiftPM links every executable
// with `main` defined as the module's entry point (carousel_fuzz_main), so
// the entry point must exist and start the driver itself.

/// The target chosen by the environment; libFuzzer owns the command line.
let selectedTarget: FuzzTarget = {
    let name = getenv("CAROUSEL_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let target = FuzzTarget(rawValue: name) else {
        let known = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
        printError("carousel-fuzz: set CAROUSEL_FUZZ_TARGET to one of: \(known) (got '\(name)')")
        exit(2)
    }
    return target
}()

/// libFuzzer's entry: one input; a property that fails is a crash, so that
/// libFuzzer keeps the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        try selectedTarget.check(input)
    } catch {
        fatalError("carousel-fuzz \(selectedTarget.rawValue): property failed: \(error)")
    }
    return 0
}

#if CAROUSEL_FUZZING
/// libFuzzer's driver (FuzzerDriver.cpp), linked in by `-sanitize=fuzzer`:
/// `int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *, size_t))`.
/// Declared by its symbol name: no header of libFuzzer's is installed for
/// Swift to import, and these pointer and integer arguments are passed the
/// same way by Swift's and C's calling conventions.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

@main
struct Fuzz {
    static func main() {
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        _ = selectedTarget  // an unknown target stops here, before libFuzzer starts
        exit(runFuzzerDriver(&argc, &argv, { data, size in fuzzOneInput(data, size) }))
    }
}
#else
@main
struct Replay {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name), arguments.count >= 2 else {
            let known = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
            printError("usage: carousel-fuzz \(known) FILE...\n(fuzzing itself: scripts/fuzz.sh)")
            exit(2)
        }
        // HEIF and AVIF under the helper's address-space cap, as the daemon decodes them.
        if !target.applyHelperLimits() {
            printError("carousel-fuzz: cannot cap the address space as the decoding helper's is: \(errnoDescription(errno))")
            exit(2)
        }
        var failed = 0
        for path in arguments.dropFirst() {
            guard let input = readFile(path) else {
                printError("carousel-fuzz: cannot read \(path)")
                exit(2)
            }
            do {
                try target.check(input)
                print("\(path): ok")
            } catch {
                print("\(path): FAILED: \(error)")
                failed += 1
            }
        }
        // What the inputs cost at most, for the tests that hold a decode to a
        // budget. VmHWM, not getrusage's ru_maxrss: Linux keeps ru_maxrss
        // across execve, and a child spawned with vfork (Foundation's
        // Process) starts with its parent's peak, so a test process that had
        // decoded a large picture made this replayer look as large.
        if let peak = peakResidentKiB() {
            print("peak resident set: \(peak) KiB")
        }
        exit(failed == 0 ? 0 : 1)
    }

    /// This process's peak resident set since its execve: the VmHWM line of /proc/self/status.
    static func peakResidentKiB() -> Int? {
        guard let file = fopen("/proc/self/status", "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(cString: line)
            if text.hasPrefix("VmHWM:") {
                return Int(text.dropFirst("VmHWM:".count).filter(\.isNumber))
            }
        }
        return nil
    }

    static func readFile(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            bytes.append(contentsOf: buffer[0..<n])
            if n < buffer.count { return ferror(file) == 0 ? bytes : nil }
        }
    }
}
#endif
