import CarouselPlatform
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A whole file read into memory that this object owns; freed exactly once.
///
/// The decoders parse the same bytes several times (format sniffing, EXIF,
/// the codec), and libjpeg/libpng read them through a pointer that must stay
/// valid across several C calls, which an Array's scoped pointer cannot give.
///
/// The bytes live in `PixelMemory` (mapped, returned to the kernel on
/// release), not the heap: a 6 MB JPEG freed into malloc's arena would stay
/// resident after its decode, as pixel buffers did. The file is read, not
/// mapped: a picture rewritten in place (truncated, then written) while a
/// mapping of it is being decoded would kill the daemon with SIGBUS, where a
/// read copy only decodes as truncated. Reading costs the file's size for
/// the length of one decode, one decode at a time: a 24 MP camera JPEG is
/// under 15 MB, a 62 MP PNG of a photograph around 100 (the 1 GiB
/// `maxFileBytes` is the only bound).
final class FileContents {
    let base: UnsafeMutableRawPointer?
    let count: Int
    /// What was mapped: `count`, or more if the file shrank while being read.
    private let mappedBytes: Int

    /// Bytes already in memory (tests, and callers that have the data).
    init(copying bytes: some Collection<UInt8>) {
        count = bytes.count
        mappedBytes = count
        if count == 0 {
            base = nil
            return
        }
        guard let memory = PixelMemory.allocate(count) else {
            fatalError("out of memory copying \(count) bytes of an image")
        }
        memory.copyMemory(from: Array(bytes), byteCount: count)
        base = memory
    }

    /// The size of the regular file at `path`; nil for anything else or
    /// when it cannot be looked at.
    static func regularFileSize(_ path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(exactly: info.st_size)
    }

    /// Reads `path` whole.
    ///
    /// The file is opened with `O_NONBLOCK` because opening a FIFO for reading
    /// blocks until a writer appears, which would stall the decoder thread; on a
    /// regular file the flag changes nothing. `fstat` then rejects anything that
    /// is not a regular file before a byte is read.
    init(readingFile path: String, maxBytes: Int) throws(ImageError) {
        let fd = try retryingOnEINTR(path: path, call: "open") { open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        defer { close(fd) }
        var info = stat()
        _ = try retryingOnEINTR(path: path, call: "fstat") { fstat(fd, &info) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw ImageError(path: path, reason: .notARegularFile) }
        let size = Int(info.st_size)
        if size == 0 { throw ImageError(path: path, reason: .emptyFile) }
        if size > maxBytes { throw ImageError(path: path, reason: .fileTooLarge(bytes: size)) }

        guard let memory = PixelMemory.allocate(size) else {
            throw ImageError(path: path, reason: .outOfMemory(bytes: size))
        }
        var filled = 0
        do {
            // The file may shrink while we read (being replaced in the watched
            // folder): stop at end of file and decode what is there, which the
            // codec will call truncated.
            while filled < size {
                let n = try retryingOnEINTR(path: path, call: "read") { read(fd, memory + filled, size - filled) }
                if n == 0 { break }
                filled += n
            }
        } catch {
            PixelMemory.release(memory, size)
            throw error
        }
        if filled == 0 {
            PixelMemory.release(memory, size)
            throw ImageError(path: path, reason: .emptyFile)
        }
        base = memory
        count = filled
        mappedBytes = size
    }

    deinit {
        if let base { PixelMemory.release(base, mappedBytes) }
    }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }
}

/// Runs a system call, retrying while it fails with EINTR (a signal arrived),
/// and turns any other failure into an `ImageError` naming the call.
@discardableResult
func retryingOnEINTR<T: BinaryInteger>(path: String, call: String, _ body: () -> T) throws(ImageError) -> T {
    while true {
        let result = body()
        if result >= 0 { return result }
        let code = errno
        if code == EINTR { continue }
        switch code {
        case ENOENT, ENOTDIR: throw ImageError(path: path, reason: .notFound)
        case EACCES, EPERM: throw ImageError(path: path, reason: .permissionDenied)
        case EISDIR: throw ImageError(path: path, reason: .notARegularFile)
        default: throw ImageError(path: path, reason: .readFailed(call: call, errno: code))
        }
    }
}

