import CarouselCore
import CarouselImaging
import CarouselPlatform
import CarouselRender
import CPlatform
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Where a screenshot goes: a path the daemon writes (atomically, under a
/// fresh name then renamed), a file a client opened with its own rights and
/// sent over the socket, or memory (MQTT publishes the bytes).
enum ScreenshotDestination: Sendable {
    case path(String)
    case descriptor(FileDescriptor)
    case memory

    /// Readies a passed descriptor for a PNG (emptied, at its start), or
    /// says why it cannot take one: it must be a regular file open for
    /// writing (a pipe or socket could block the writer for ever; a
    /// terminal or device is no place for one).
    static func prepare(_ file: FileDescriptor) -> String? {
        var info = stat()
        guard fstat(file.raw, &info) == 0 else { return "the file sent cannot be examined: \(String(cString: strerror(errno)))" }
        guard info.st_mode & S_IFMT == S_IFREG else { return "the descriptor sent is not a regular file" }
        let mode = fcntl(file.raw, F_GETFL) & O_ACCMODE
        guard mode == O_WRONLY || mode == O_RDWR else { return "the file sent is not open for writing" }
        // Start from an empty file, whatever it held.
        if ftruncate(file.raw, 0) != 0 || lseek(file.raw, 0, SEEK_SET) != 0 {
            return "the file sent cannot be emptied: \(String(cString: strerror(errno)))"
        }
        return nil
    }
}

/// A screenshot written: where, as its destination asked.
enum ScreenshotOutcome: Sendable {
    case written(path: String)
    case bytes(Int)
    case png([UInt8])
}

/// Why a screenshot was not written (the client knows its file's name; the daemon says why).
struct ScreenshotFailure: Error, Sendable {
    let reason: String
}

/// The one screenshot encoder: a composed frame turned upright and written
/// as a PNG to its destination, on a queue of its own (never on the loop).
enum ScreenshotEncoder {
    static let queue = DispatchQueue(label: "carouseld.screenshot", qos: .utility)

    static func encode(_ panel: Frame, from rotation: Rotation,
                       to destination: ScreenshotDestination) -> Result<ScreenshotOutcome, ScreenshotFailure> {
        let copy = panel.upright(from: rotation)
        switch destination {
        case let .path(path):
            do {
                try copy.writePNG(to: path)
                return .success(.written(path: path))
            } catch {
                return .failure(ScreenshotFailure(reason: "\(error)"))
            }
        case let .descriptor(file):
            // Closed here, before the reply: the work closure that holds it
            // is released by its worker thread only after the loop was told,
            // and a worker made nicer by the decoder's work (ThreadPriority)
            // may do that long after the client heard back.
            defer { file.close() }
            do throws(PNGWriteError) {
                try copy.writePNG(toDescriptor: file.raw)
                return .success(.bytes(Int(lseek(file.raw, 0, SEEK_CUR))))
            } catch {
                return .failure(ScreenshotFailure(reason: error.reason))
            }
        case .memory:
            // An anonymous file in memory (gone when closed) takes the PNG
            // writer's output: the service's /tmp is read-only.
            let fd = cplatform_memory_file("carouseld-screenshot")
            guard fd >= 0 else { return .failure(ScreenshotFailure(reason: "no temporary file: \(errnoDescription(errno))")) }
            defer { close(fd) }
            do throws(PNGWriteError) {
                try copy.writePNG(toDescriptor: fd)
            } catch {
                return .failure(ScreenshotFailure(reason: error.reason))
            }
            let size = Int(lseek(fd, 0, SEEK_END))
            var bytes = [UInt8](repeating: 0, count: size)
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, size, 0) }
            return n == size ? .success(.png(bytes)) : .failure(ScreenshotFailure(reason: "reading the PNG back failed"))
        }
    }
}

extension Daemon {
    /// What is on screen, composed once more on the loop (the scene of the
    /// last frame; no frame is kept for this between requests), then
    /// encoded off the loop; `completion` gets the outcome on the loop.
    func screenshot(to destination: ScreenshotDestination,
                    then completion: @escaping (Result<ScreenshotOutcome, ScreenshotFailure>) -> Void) {
        let (panel, rotation) = composeScreenshot()
        executor.run(on: ScreenshotEncoder.queue, { ScreenshotEncoder.encode(panel, from: rotation, to: destination) },
                     then: completion)
    }

    /// What is on screen composed once more, with the panel's rotation (to
    /// be turned upright off the loop): the scene of the last frame, unless
    /// the layout turned or resized since: then the new layout (as laid out
    /// so far), as a screenshot follows the layout.
    func composeScreenshot() -> (Frame, Rotation) {
        let writer = frames.writer
        let source = frames.shown.flatMap { old in
            old.compositor.rotation == writer.compositor.rotation && old.compositor.panel == writer.compositor.panel
                ? old : nil
        } ?? writer
        let panel = Frame(width: source.compositor.panel.width, height: source.compositor.panel.height)
        source.render(source.scene, into: panel)
        return (panel, source.compositor.rotation)
    }
}
