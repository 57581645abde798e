import CarouselCore
import CarouselImaging
import CarouselText
import Dispatch
import Synchronization

/// Decoded, pre-scaled item pictures, prepared on a background thread.
///
/// The render path only asks `image(for:)`, which never blocks on decoding:
/// an item that is not ready is drawn as background and appears when its
/// decode finishes (`onReady` is called, from the decoder thread, so that the
/// loop can wake up and draw). It holds what is wanted: a picture the new
/// wanted list leaves out is let go at once (unless `keepsUnwanted`: then
/// the least recently used go when room is needed), and nothing is decoded
/// beyond `budgetBytes`, so 10,000 images cost what 10 do.
public final class ItemCache: Sendable {
    public struct Settings: Equatable, Sendable {
        /// Every picture is scaled to exactly this size (the item's extent by the screen's cross extent).
        public var itemSize: PixelSize
        public var fit: FitMode
        public var background: PixelColor
        public var maxPixels: Int
        public var budgetBytes: Int
        /// Pictures are turned to the panel's orientation after scaling (the
        /// renderer then writes every rotation with row copies).
        public var rotation: Rotation
        /// Pictures no longer wanted stay decoded while the budget has room
        /// (an explicit `cache_mb`: memory given to skip decoding again);
        /// otherwise they are let go at once (memory by need).
        public var keepsUnwanted: Bool
        /// The fill around the picture with `fit = blur` (made here, at decode time).
        public var blur: BlurStyle
        /// Captions (`[overlay] caption`) are drawn into each picture as it
        /// is prepared, so that a caption slides with its picture at no cost
        /// per frame; nil: none.
        public var caption: Captioning?

        public init(itemSize: PixelSize, fit: FitMode, background: PixelColor, maxPixels: Int, budgetBytes: Int,
                    rotation: Rotation = .none, keepsUnwanted: Bool = false, blur: BlurStyle = BlurStyle(),
                    caption: Captioning? = nil) {
            self.blur = blur
            self.rotation = rotation
            self.caption = caption
            self.keepsUnwanted = keepsUnwanted
            self.itemSize = itemSize
            self.fit = fit
            self.background = background
            self.maxPixels = maxPixels
            self.budgetBytes = budgetBytes
        }
    }

    /// A file that could not be shown, and why (one line for the log).
    public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        public var path: String
        public var message: String
        public var description: String { message }
    }

    private struct State {
        var settings: Settings
        var ready: [String: DecodedImage] = [:]
        var lastUse: [String: UInt64] = [:]
        var failed: [String: String] = [:]
        var wanted: [String] = []
        var working = false
        var bytes = 0
        var useClock: UInt64 = 0
        var newFailures: [Failure] = []
        /// Bumped by `reset`: a decode started under older settings is thrown away.
        var generation = 0
        /// The file being decoded now (one decoder thread), and whether
        /// `forget` named it meanwhile: a decode of a file that changed on disk
        /// while it ran (a half-copied file completed, a file replaced) is
        /// thrown away, success or failure, and the file is decoded again.
        var inFlight: String?
        var inFlightForgotten = false

        /// Whether the decoder must be started: something wanted is neither
        /// ready nor known broken, and it is not running (then it is marked running).
        mutating func startIfMissing() -> Bool {
            guard !working, wanted.contains(where: { ready[$0] == nil && failed[$0] == nil }) else { return false }
            working = true
            return true
        }
    }

    private let state: Mutex<State>
    /// Serial on purpose: one decode at a time, so that what a decode needs
    /// besides the cache (its output before scaling, the file's bytes, the
    /// codec's buffers) is paid once, never once per core.
    private let queue = DispatchQueue(label: "carouseld.decoder", qos: .utility)
    private let onReady: @Sendable () -> Void
    /// Reads, decodes and scales one file (a seam for tests that must hold a
    /// decode in flight; the real one is `prepare`).
    typealias Prepare = @Sendable (_ path: String, _ settings: Settings) throws -> DecodedImage
    private let prepare: Prepare

    public convenience init(settings: Settings, onReady: @escaping @Sendable () -> Void = {}) {
        self.init(settings: settings, prepare: ItemCache.prepare, onReady: onReady)
    }

    init(settings: Settings, prepare: @escaping Prepare, onReady: @escaping @Sendable () -> Void = {}) {
        state = Mutex(State(settings: settings))
        self.prepare = prepare
        self.onReady = onReady
    }

    /// The picture for `path` as the cache keeps it: decoded for the item
    /// size and fit, scaled onto exactly the item size, its caption drawn
    /// over it (in the item's upright orientation), then turned to the
    /// panel's orientation.
    static func prepare(path: String, settings: Settings) throws -> DecodedImage {
        let decoded = try ImageDecoder.decode(path: path, targetSize: settings.itemSize,
                                              fit: settings.fit, maxPixels: settings.maxPixels)
        let scaled = try ImageScaler.scale(decoded, to: settings.itemSize, fit: settings.fit, background: settings.background,
                                           blur: settings.blur)
        // `scaled` is this decode's own (a new picture, or the decoded one
        // itself): nothing else holds it yet, so the caption goes into it.
        if let caption = settings.caption, caption.kind != .none,
           let text = Captioner.sprite(for: path, in: settings.itemSize, caption) {
            try scaled.drawOver(text.sprite, x: text.x, y: text.y)
        }
        return try scaled.turned(settings.rotation)
    }

    /// The prepared picture for `path`, or `nil` if it is not ready (yet).
    public func image(for path: String) -> DecodedImage? {
        state.withLock { s in
            guard let image = s.ready[path] else { return nil }
            s.useClock += 1
            s.lastUse[path] = s.useClock
            return image
        }
    }

    /// Whether `path` failed to decode (it should be skipped).
    public func failure(for path: String) -> String? { state.withLock { $0.failed[path] } }

    /// Sets what should be ready, most important first (on screen, then the
    /// neighbours in the direction of motion), and starts decoding what is missing.
    /// The same list again does nothing: the render loop asks on every frame
    /// while the content moves, and the list changes only a few times a
    /// slide (`reset` and `forget`, which make wanted pictures missing
    /// without a new list, start the decoder themselves).
    ///
    /// Pictures no longer wanted are let go at once: the cache holds what
    /// the screen needs, not what fits in the budget (which only bounds it).
    public func want(_ paths: [String]) {
        let start = state.withLock { s -> Bool in
            guard paths != s.wanted else { return false }
            s.wanted = paths
            let keep = Set(paths)
            for path in s.ready.keys where !s.settings.keepsUnwanted && !keep.contains(path) {
                s.bytes -= s.ready.removeValue(forKey: path)!.byteCount
                s.lastUse[path] = nil
            }
            return s.startIfMissing()
        }
        if start { queue.async { self.work() } }
    }

    /// Failures found since the last call, each reported once.
    public func drainFailures() -> [Failure] {
        state.withLock { s in
            defer { s.newFailures.removeAll() }
            return s.newFailures
        }
    }

    /// Blocks until the decoder has nothing left to do. For `render`, tests
    /// and start-up only: never call this on the render loop.
    public func waitUntilIdle() {
        while state.withLock({ $0.working }) {
            queue.sync {}
        }
    }

    /// The wanted pictures neither ready nor known broken: none once the
    /// decoder has caught up, unless the budget had no room for them.
    public var missing: [String] {
        state.withLock { s in s.wanted.filter { s.ready[$0] == nil && s.failed[$0] == nil } }
    }

    /// Bytes of decoded pictures held now.
    public var residentBytes: Int { state.withLock { $0.bytes } }

    /// Number of pictures held now.
    public var residentCount: Int { state.withLock { $0.ready.count } }

    /// Drops everything (the item size, fit or background changed) and
    /// decodes what is wanted anew.
    public func reset(settings: Settings) {
        let start = state.withLock { s -> Bool in
            s.settings = settings
            s.ready.removeAll()
            s.lastUse.removeAll()
            s.failed.removeAll()
            s.bytes = 0
            s.generation += 1
            return s.startIfMissing()
        }
        if start { queue.async { self.work() } }
    }

    /// Forgets `paths` (files replaced or removed on disk): they are decoded again if wanted.
    public func forget(_ paths: [String]) {
        let start = state.withLock { s -> Bool in
            for p in paths {
                if let image = s.ready.removeValue(forKey: p) { s.bytes -= image.byteCount }
                s.lastUse[p] = nil
                s.failed[p] = nil
            }
            if let p = s.inFlight, paths.contains(p) { s.inFlightForgotten = true }
            return s.startIfMissing()
        }
        if start { queue.async { self.work() } }
    }

    // MARK: - The decoder thread

    private func work() {
        while let job = nextJob() {
            let result: Result<DecodedImage, Failure>
            do {
                result = .success(try prepare(job.path, job.settings))
            } catch let error as ImageError {
                result = .failure(Failure(path: job.path, message: error.description))
            } catch {
                result = .failure(Failure(path: job.path, message: "\(job.path): \(error)"))
            }
            state.withLock { s in
                defer { s.inFlight = nil }
                guard s.generation == job.generation, !s.inFlightForgotten else { return }
                switch result {
                case .success(let image):
                    // No longer wanted (the carousel moved on while it decoded): not kept.
                    guard s.settings.keepsUnwanted || s.wanted.contains(job.path) else { return }
                    s.ready[job.path] = image
                    s.bytes += image.byteCount
                    s.useClock += 1
                    s.lastUse[job.path] = s.useClock
                case .failure(let failure):
                    s.failed[job.path] = failure.message
                    s.newFailures.append(failure)
                }
            }
            onReady()
        }
    }

    private struct Job {
        var path: String
        var settings: Settings
        var generation: Int
    }

    /// The next wanted picture to decode, after making room for it within the
    /// budget; `nil` (and the worker stops) when there is nothing to do or no room.
    private func nextJob() -> Job? {
        state.withLock { s -> Job? in
            let itemBytes = s.settings.itemSize.width * s.settings.itemSize.height * 4
            let wantedSet = Set(s.wanted)
            for (rank, path) in s.wanted.enumerated() where s.ready[path] == nil && s.failed[path] == nil {
                // Make room by dropping pictures nobody wants, least recently used first.
                while s.bytes + itemBytes > s.settings.budgetBytes,
                      let victim = s.ready.keys.filter({ !wantedSet.contains($0) })
                          .min(by: { (s.lastUse[$0] ?? 0) < (s.lastUse[$1] ?? 0) }) {
                    s.bytes -= s.ready.removeValue(forKey: victim)!.byteCount
                    s.lastUse[victim] = nil
                }
                // The first picture (on screen) is decoded whatever the budget;
                // the rest only while they fit.
                if rank > 0, s.bytes + itemBytes > s.settings.budgetBytes { break }
                s.inFlight = path
                s.inFlightForgotten = false
                return Job(path: path, settings: s.settings, generation: s.generation)
            }
            s.working = false
            return nil
        }
    }
}
