import ArgumentParser
import CarouselConfig
import CarouselCore
import CarouselSimulation

#if canImport(Glibc)
import Glibc
#endif

@main
struct Carouseld: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "carouseld",
        abstract: "A full-screen touch image carousel for embedded Linux (DRM/KMS + libinput).",
        version: CarouselVersion.string,
        subcommands: [Simulate.self, CheckConfig.self]
    )
}

/// Reads a whole file; errors name the file and the reason.
func readTextFile(_ path: String) throws -> String {
    guard let f = fopen(path, "rb") else {
        throw ValidationError("cannot open \(path): \(String(cString: strerror(errno)))")
    }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buffer, 1, buffer.count, f)
        if n > 0 { bytes.append(contentsOf: buffer[0..<n]) }
        if n < buffer.count {
            if ferror(f) != 0 { throw ValidationError("cannot read \(path): \(String(cString: strerror(errno)))") }
            break
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Writes all of `text` to file descriptor `fd` (1 stdout, 2 stderr), retrying on EINTR.
func writeAll(_ fd: Int32, _ text: String) {
    var text = text
    text.withUTF8 { buffer in
        var offset = 0
        while offset < buffer.count {
            let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += n
        }
    }
}

func printError(_ line: String) { writeAll(2, line + "\n") }

struct Simulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the carousel model headless on a virtual 60 Hz clock and print JSON lines.",
        discussion: """
        SCRIPT has one command a line ('#' starts a comment, times in ms from start):
          size WIDTHxHEIGHT        set KEY VALUE        images COUNT
          at MS down X Y | move X Y | up | cancel | probe
          at MS command next|prev|goto I|pause|resume
          until MS
        Output: one JSON object a line, in time order. A bad line exits 2 with 'line N: ...'.
        """
    )

    @Argument(help: "The script file ('-' for standard input).")
    var script: String

    @Option(name: .long, help: "An INI configuration file applied before the script's 'set' lines.")
    var config: String?

    func run() throws {
        var base = Configuration()
        if let config {
            do {
                base = try Configuration.parse(try readTextFile(config), file: config)
            } catch let error as ConfigError {
                printError("carouseld: \(error)")
                throw ExitCode(2)
            }
        }
        let text: String
        if script == "-" {
            var lines: [String] = []
            while let l = readLine(strippingNewline: false) { lines.append(l) }
            text = lines.joined()
        } else {
            text = try readTextFile(script)
        }
        let parsed: SimulationScript
        do {
            parsed = try SimulationScript.parse(text, configuration: base)
        } catch {
            printError("\(error)")
            throw ExitCode(2)
        }
        var out = ""
        out.reserveCapacity(1 << 16)
        SimulationRunner.run(parsed, base: base, emit: { line in
            out += line
            out += "\n"
            if out.utf8.count > 1 << 16 {
                writeAll(1, out)
                out.removeAll(keepingCapacity: true)
            }
        }, diagnostic: { printError("carouseld: \($0)") })
        writeAll(1, out)
    }
}

struct CheckConfig: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate a configuration file without touching any device (exit 0 if valid, 1 if not)."
    )

    @Argument(help: "The INI file.")
    var file: String = "/etc/carouseld/carouseld.ini"

    func run() throws {
        do {
            _ = try Configuration.parse(try readTextFile(file), file: file)
            print("\(file): OK")
        } catch let error as ConfigError {
            printError("\(error)")
            throw ExitCode(1)
        } catch {
            printError("\(error)")
            throw ExitCode(1)
        }
    }
}
