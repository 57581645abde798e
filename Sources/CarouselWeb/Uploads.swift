import CarouselImaging
import CarouselPlatform
import CPlatform
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// A file the page refused, in the words shown to the person who sent it.
public struct UploadError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    /// The HTTP status the refusal is answered with.
    public let status: Int
    public init(_ message: String, status: Int = 400) {
        self.message = message
        self.status = status
    }
    public var description: String { message }
}

/// The names the page gives uploaded files: the sender's name made safe
/// (its last path component, letters, digits and `-_.` only, no leading
/// dot, at most 80 bytes before the extension), with an extension the
/// album shows (a picture's or a clip's, lower case).
public enum UploadName {
    /// The extensions taken: every picture format the album decodes, and clips.
    public static let extensions: Set<String> = Set(ImageFormat.allCases.flatMap(\.fileExtensions) + ClipName.fileExtensions)

    /// The safe form of `sent` as `(stem, extension)`; nil, with why, when
    /// its extension is not a picture's or a clip's.
    public static func safe(_ sent: String) -> Result<(stem: String, ext: String), UploadError> {
        // The last component, whichever separator the sender's system uses.
        let last = sent.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        guard let dot = last.lastIndex(of: "."), dot != last.startIndex else {
            return .failure(UploadError("\(shown(sent)): a picture or clip needs its extension (.jpg, .heic, .mp4...)",
                                        status: 415))
        }
        let ext = String(last[last.index(after: dot)...]).lowercased()
        guard extensions.contains(ext) else {
            return .failure(UploadError("\(shown(sent)): .\(shown(ext)) is not a picture or clip the frame shows "
                                        + "(\(extensions.sorted().map { "." + $0 }.joined(separator: " ")))", status: 415))
        }
        var stem = ""
        var lastWasUnderscore = false
        for scalar in last[..<dot].unicodeScalars {
            let keep = (scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)))
                || scalar == "-" || scalar == "."
            if keep {
                stem.unicodeScalars.append(scalar)
                lastWasUnderscore = false
            } else if !lastWasUnderscore {
                stem += "_"
                lastWasUnderscore = true
            }
        }
        while stem.hasPrefix(".") || stem.hasPrefix("_") || stem.hasPrefix("-") { stem.removeFirst() }
        while stem.hasSuffix(".") || stem.hasSuffix("_") { stem.removeLast() }
        if stem.utf8.count > 80 { stem = String(stem.prefix(80)) }
        if stem.isEmpty { stem = "upload" }
        return .success((stem, ext))
    }

    /// A sent name as a message quotes it: short, one line.
    static func shown(_ name: String) -> String {
        let line = name.filter { !$0.isNewline && $0.asciiValue.map { $0 >= 0x20 && $0 != 0x7F } ?? true }
        return line.count > 60 ? String(line.prefix(57)) + "..." : line
    }
}

/// Removes what a `carouseld-web` that stopped mid-upload left in `folder`
/// (its hidden `.carouseld-web-*.part` files); returns how many.
public func removeLeftUploads(in folder: String) -> Int {
    guard let dir = opendir(folder) else { return 0 }
    defer { closedir(dir) }
    var removed = 0
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name.hasPrefix(".carouseld-web-"), name.hasSuffix(".part"), unlinkat(dirfd(dir), name, 0) == 0 { removed += 1 }
    }
    return removed
}

/// One file arriving: written under a hidden temporary name in the album's
/// folder (which the album never shows), counted against the limit as it
/// comes, then synced, checked and given its name by a rename that never
/// replaces a file, or removed. Nothing of a refused file stays.
public final class UploadFile {
    public let folder: String
    public let stem: String
    public let ext: String
    public let limit: Int
    let temporary: String
    private var fd: Int32
    public private(set) var bytes = 0
    private var failure: UploadError?

    public init(folder: String, stem: String, ext: String, limit: Int) throws(UploadError) {
        self.folder = folder
        self.stem = stem
        self.ext = ext
        self.limit = limit
        var random = SystemRandomNumberGenerator()
        let tag = String(random.next() as UInt64, radix: 36)
        temporary = folder + "/.carouseld-web-" + tag + ".part"
        fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o640)
        guard fd >= 0 else {
            throw UploadError("the pictures folder cannot be written (\(String(cString: strerror(errno))))", status: 500)
        }
    }

    deinit { discard() }

    /// Appends `chunk`; the first failure (over the limit, a full disk) is
    /// kept and every later chunk ignored.
    public func append(_ chunk: UnsafeRawBufferPointer) {
        guard failure == nil, fd >= 0 else { return }
        bytes += chunk.count
        if bytes > limit {
            fail(UploadError("\(UploadName.shown(stem + "." + ext)) is larger than the \(limit >> 20) MiB one file may be "
                             + "([web] max_upload_mb)", status: 413))
            return
        }
        var offset = 0
        while offset < chunk.count {
            let n = write(fd, chunk.baseAddress! + offset, chunk.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                fail(Self.writeError(errno))
                return
            }
            offset += n
        }
    }

    static func writeError(_ code: Int32) -> UploadError {
        code == ENOSPC || code == EDQUOT
            ? UploadError("the frame's disk is full: nothing of this file was kept", status: 507)
            : UploadError("the pictures folder cannot be written (\(String(cString: strerror(code))))", status: 500)
    }

    public var failed: UploadError? { failure }

    private func fail(_ error: UploadError) {
        failure = error
        discard()
    }

    /// Removes the temporary file (nothing else is ever removed here).
    public func discard() {
        if fd >= 0 {
            close(fd)
            fd = -1
            unlink(temporary)
        }
    }

    /// Syncs the file, has `check` decide on it (the decoders, in a helper),
    /// and gives it its name: `stem.ext`, else `stem-2.ext` and on. Returns
    /// the name; on any failure nothing is left.
    public func finish(check: (String) async -> UploadError?) async throws(UploadError) -> String {
        if let failure { throw failure }
        guard fd >= 0 else { throw UploadError("the upload was lost", status: 500) }
        if bytes == 0 {
            fail(UploadError("\(UploadName.shown(stem + "." + ext)) is empty"))
            throw failure!
        }
        if fsync(fd) != 0 {
            fail(Self.writeError(errno))
            throw failure!
        }
        if let problem = await check(temporary) {
            fail(problem)
            throw problem
        }
        // renameat2 with RENAME_NOREPLACE: never over a file of that name,
        // and the album's watcher sees it arrive whole (IN_MOVED_TO), as
        // after `mv`.
        for n in 1...1000 {
            let name = n == 1 ? "\(stem).\(ext)" : "\(stem)-\(n).\(ext)"
            if cplatform_rename_noreplace(temporary, folder + "/" + name) == 0 {
                close(fd)
                fd = -1
                // The folder's entry too, so that the name survives a power cut.
                let dir = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                if dir >= 0 {
                    fsync(dir)
                    close(dir)
                }
                return name
            }
            if errno != EEXIST {
                fail(Self.writeError(errno))
                throw failure!
            }
        }
        fail(UploadError("\(UploadName.shown(stem + "." + ext)): a thousand files of that name are there already", status: 409))
        throw failure!
    }
}

/// The check of an arrived file, in a process of its own
/// (`carouseld-web check-upload`, this executable again): the whole picture
/// decoded by the decoders the frame uses, or a clip's first frame, within
/// `[images] max_pixels`. A decoder that crashes or hangs on a hostile file
/// costs that process, and the file is refused.
public struct UploadCheck: Sendable {
    public var executable: String
    public var maxPixels: Int
    public var timeoutMilliseconds: Int

    public init(executable: String = "/proc/self/exe", maxPixels: Int, timeoutMilliseconds: Int = 120_000) {
        self.executable = executable
        self.maxPixels = maxPixels
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    /// Why the file at `path`, sent as `name`, is refused; nil when it is a
    /// picture or clip the frame can show.
    public func problem(path: String, name: String) -> UploadError? {
        let argv = ["carouseld-web", "check-upload", "--max-pixels", String(maxPixels), "--name", name]
        guard let run = HelperRun(executable: executable, arguments: argv, input: path, timeoutMilliseconds: timeoutMilliseconds)
        else { return UploadError("the upload cannot be checked (\(String(cString: strerror(errno))))", status: 500) }
        let status = run.status
        let said = String(decoding: run.output.prefix(1024), as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        let shown = UploadName.shown(name)
        guard let status else { return UploadError("\(shown): its check did not finish in time; refused", status: 422) }
        let signal = status & 0x7F
        if signal != 0 && signal != 0x7F {
            return UploadError("\(shown): the decoder crashed on it (signal \(signal)); refused", status: 422)
        }
        if (status >> 8) & 0xFF == 0 { return nil }
        return UploadError("\(shown): \(said.isEmpty ? "not a picture or clip the frame can show" : said)", status: 422)
    }

}

/// One run of this executable as a helper (`check-upload`, `thumbnail`):
/// the file at `input` on its descriptor 3, what it writes into a memory
/// file on descriptor 4, its wait status (nil: killed for taking too long).
struct HelperRun {
    let status: Int32?
    let output: [UInt8]

    /// Nil, with errno, when the file or the memory file cannot be opened or the process started.
    init?(executable: String, arguments: [String], input path: String, timeoutMilliseconds: Int, maxOutput: Int = 4 << 20) {
        let input = open(path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { return nil }
        defer { close(input) }
        let output = cplatform_memory_file("carouseld-web-helper")
        guard output >= 0 else { return nil }
        defer { close(output) }
        var pid: pid_t = 0
        let started = DecodingProcess.withCStrings(arguments) { cArgs in
            DecodingProcess.withCStrings(DecodingProcess.helperEnvironment) { cEnv in
                cplatform_spawn_helper(executable, cArgs, cEnv, input, output, &pid)
            }
        }
        guard started == 0 else {
            errno = started
            return nil
        }
        status = DecodingProcess.wait(for: pid, timeoutMilliseconds: timeoutMilliseconds)
        var info = stat()
        let size = fstat(output, &info) == 0 ? min(Int(info.st_size), maxOutput) : 0
        var bytes = [UInt8](repeating: 0, count: size)
        let n = size > 0 ? bytes.withUnsafeMutableBytes { pread(output, $0.baseAddress, size, 0) } : 0
        self.output = n > 0 ? Array(bytes[0..<n]) : []
    }
}

/// The helper processes (upload checks, thumbnails): at most `limit` at
/// once, each waited for on a thread of its own. A check can take seconds
/// (a 12 MP JPEG decoded whole on a board) and holds up to the decoders'
/// address-space cap: `limit` bounds both the page's memory (the unit's
/// `MemoryMax=`) and the CPU it takes from the display, and no helper ever
/// blocks Swift's cooperative threads, which serve every other request.
public enum Helpers {
    public static let limit = 2
    static let slots = HelperSlots(limit)
    private static let queue = DispatchQueue(label: "carouseld-web.helpers", attributes: .concurrent)

    /// `work` (which starts and waits for one helper) when a slot is free.
    public static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await slots.acquire()
        let result = await withCheckedContinuation { (done: CheckedContinuation<T, Never>) in
            queue.async { done.resume(returning: work()) }
        }
        await slots.release()
        return result
    }
}

/// A counting semaphore for tasks: `acquire` waits (suspended, not
/// blocking a thread) until one of `count` slots is free; first come,
/// first served.
actor HelperSlots {
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ count: Int) { free = count }

    func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty {
            free += 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
