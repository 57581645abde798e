import CarouselCore
import CarouselImaging
import CarouselLoop
import CarouselPlatform
import CarouselRender
import CPlatform
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

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
        case let .pixels(file):
            // The rows as they are: no compression, so the daemon's cost is a copy.
            defer { file.close() }
            let rowBytes = copy.width * 4
            for y in 0..<copy.height where !writeAll(file.raw, UnsafeRawBufferPointer(start: copy.row(y), count: rowBytes)) {
                return .failure(ScreenshotFailure(reason: "write error: \(errnoDescription(errno))"))
            }
            return .success(.pixels(width: copy.width, height: copy.height, stride: rowBytes))
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
    /// encoded off the loop; `completion` gets the outcome on the loop
    /// (`LoopAsk.screenshot`, the socket's and MQTT's).
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
    public func composeScreenshot() -> (Frame, Rotation) {
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
