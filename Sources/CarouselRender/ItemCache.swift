import CarouselCore
import CarouselImaging
import CarouselPlatform
import CarouselText
import CarouselVideo
import Dispatch
import Synchronization

/// Decoded, pre-scaled item pictures, prepared on a background thread.
///
/// The render path only asks `image(for:)`, which never blocks on decoding:
/// an item that is not ready is drawn as background and appears when its
/// decode finishes (`onReady` is called, from the decoder thread, so that the
/// loop can wake up and draw). It holds what is wanted: a picture the new
/// wanted list leaves out is let go at once (unless `keepsUnwanted`: then
/// the one shown last goes when room is needed), and nothing is decoded
/// beyond `budgetBytes`, so 10,000 images cost what 10 do.
///
/// Pictures are kept at 3 bytes a pixel (`DecodedImage.packed`), as
/// compactly as fbi keeps its own, and widened to the display's 32 bits as
/// the screen writer lays them out.
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
        /// (memory given to skip decoding again: an explicit `cache_mb`, or
        /// `auto`'s share of the board's memory); otherwise they are let go
        /// at once (memory by need).
        public var keepsUnwanted: Bool
        /// The fill around the picture with `fit = blur` (made here, at decode time).
        public var blur: BlurStyle
        /// Captions (`[overlay] caption`) are drawn into each picture as it
        /// is prepared, so that a caption slides with its picture at no cost
        /// per frame; nil: none.
        public var caption: Captioning?
        /// Pixels between the two pictures of a page that shows a pair (`PortraitPairs`).
        public var pairGap: Int
        /// Clips with more coded pixels are refused (`[video] max_pixels`).
        public var clipMaxPixels = 8_294_400
        /// What one decode may hold (`[images] decode_mb`, `ImageDecoder`).
        public var decodeBudget = Int.max

        public init(itemSize: PixelSize, fit: FitMode, background: PixelColor, maxPixels: Int, budgetBytes: Int,
                    rotation: Rotation = .none, keepsUnwanted: Bool = false, blur: BlurStyle = BlurStyle(),
                    caption: Captioning? = nil, pairGap: Int = 0) {
            self.pairGap = pairGap
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
        /// The page asked for: a picture alone, or a pair.
        public var key: PageKey
        public var message: String
        /// The file that failed: `key`'s picture, or the pair's picture that did.
        public var file: String
        public var description: String { message }

        public init(key: PageKey, message: String, file: String? = nil) {
            self.key = key
            self.message = message
            self.file = file ?? key.first
        }
    }

    private struct State {
        var settings: Settings
        var ready: [PageKey: DecodedImage] = [:]
        var lastUse: [PageKey: UInt64] = [:]
        var failed: [PageKey: String] = [:]
        var wanted: [PageKey] = []
        var working = false
        var bytes = 0
        var useClock: UInt64 = 0
        var newFailures: [Failure] = []
        /// Bumped by `reset`: a decode started under older settings is thrown away.
        var generation = 0
        /// The page being decoded now (one decoder thread), and whether
        /// `forget` named its file meanwhile: a decode of a file that changed on disk
        /// while it ran (a half-copied file completed, a file replaced) is
        /// thrown away, success or failure, and the file is decoded again.
        var inFlight: PageKey?
        var inFlightForgotten = false
        /// The picture a zoom needs at more than the screen's resolution, and
        /// the zoom factor it needs (see `wantZoom`).
        var zoomWant: ZoomDecode?
        /// What the decoder made for it: `image` nil when the file has no
        /// more pixels than the screen-size picture (the renderer scales that up).
        var zoomHeld: (decode: ZoomDecode, image: DecodedImage?)?
        var zoomFailed: PageKey?

        var zoomMissing: Bool {
            guard let want = zoomWant, zoomFailed != want.key else { return false }
            guard let held = zoomHeld else { return true }
            return held.decode.key != want.key || held.decode.factor < want.factor
        }

        /// Whether the decoder must be started: something wanted is neither
        /// ready nor known broken, and it is not running (then it is marked running).
        mutating func startIfMissing() -> Bool {
            guard !working, zoomMissing || wanted.contains(where: { ready[$0] == nil && failed[$0] == nil }) else {
                return false
            }
            working = true
            return true
        }
    }

    struct ZoomDecode: Equatable {
        var key: PageKey
        var factor: Double
    }

    private let state: Mutex<State>
    /// Serial on purpose: one decode at a time, so that what a decode needs
    /// besides the cache (its output before scaling, the file's bytes, the
    /// codec's buffers) is paid once, never once per core.
    private let queue = DispatchQueue(label: "carouseld.decoder", qos: .utility)
    private let onReady: @Sendable () -> Void
    /// Reads, decodes and scales one page's pictures (a seam for tests that
    /// must hold a decode in flight; the real one is `prepare`).
    public typealias Prepare = @Sendable (_ key: PageKey, _ settings: Settings) throws -> DecodedImage
    private let prepare: Prepare

    public convenience init(settings: Settings, onReady: @escaping @Sendable () -> Void = {}) {
        self.init(settings: settings, prepare: ItemCache.prepare, onReady: onReady)
    }

    public init(settings: Settings, prepare: @escaping Prepare, onReady: @escaping @Sendable () -> Void = {}) {
        state = Mutex(State(settings: settings))
        self.prepare = prepare
        self.onReady = onReady
    }

    /// The picture for page `key` as the cache keeps it: decoded for the
    /// item size and fit, scaled onto exactly the item size, its caption
    /// drawn over it (in the item's upright orientation), then turned to the
    /// panel's orientation.
    ///
    /// A pair makes one picture of the item size: each picture prepared for
    /// its half as a picture alone is for the whole (fit, blurred fill, its
    /// own caption), with `pairGap` of background between them.
    public static func prepare(_ key: PageKey, settings: Settings) throws -> DecodedImage {
        if key.isPair { return try preparePair(key, settings: settings, factor: 1).turned(settings.rotation) }
        let path = key.first
        // A picture the item's size that nothing is drawn over or turned is
        // kept as it is decoded: straight to 3 bytes a pixel, no 32-bit
        // copy on the way (issue 31: the memory and the packing pass).
        let asDecoded = settings.fit != .blur && settings.rotation == .none && (settings.caption?.kind ?? .none) == .none
        let decoded = ClipName.isClip(path)
            ? try poster(path: path, settings: settings)
            : try ImageDecoder.decode(path: path, targetSize: settings.itemSize, fit: settings.fit, maxPixels: settings.maxPixels,
                                      decodeBudget: settings.decodeBudget, packedAt: asDecoded ? settings.itemSize : nil)
        return try finish(decoded, path: path, settings: settings, box: settings.itemSize, factor: 1).turned(settings.rotation)
    }

    /// A clip's first frame, what stands for it while it does not play (its
    /// frames, while it plays, are the player's: `ClipPlayer`).
    static func poster(path: String, settings: Settings) throws -> DecodedImage {
        let item = settings.itemSize
        do {
            // Twice the item's longer side at most: enough for any fit but `none` of a larger clip.
            return try VideoDecoder.poster(path: path, maxPixels: settings.clipMaxPixels,
                                           maxSide: 2 * max(item.width, item.height))
        } catch {
            throw Failure(key: PageKey(path), message: error.description)
        }
    }

    /// The halves of a pair's page of `box`: the left one's width, and where the right one starts.
    public static func pairHalves(box: PixelSize, gap: Int) -> (left: PixelSize, right: PixelSize, rightX: Int) {
        let gap = min(gap, max(box.width - 2, 0))
        let left = (box.width - gap) / 2
        return (PixelSize(width: max(left, 1), height: box.height),
                PixelSize(width: max(box.width - gap - left, 1), height: box.height), left + gap)
    }

    /// The pair `key` side by side on the item size times `factor`, upright;
    /// throws a `Failure` naming the picture that could not be decoded.
    static func preparePair(_ key: PageKey, settings: Settings, factor: Double,
                            decodedSize: ((Int, PixelSize) -> Void)? = nil) throws -> DecodedImage {
        let item = settings.itemSize
        let box = PixelSize(width: max(1, Int((Double(item.width) * factor).rounded())),
                            height: max(1, Int((Double(item.height) * factor).rounded())))
        let halves = pairHalves(box: box, gap: Int((Double(settings.pairGap) * factor).rounded()))
        var pictures: [DecodedImage] = []
        for (i, (path, half)) in zip(key.paths, [halves.left, halves.right]).enumerated() {
            do {
                let decoded = try ImageDecoder.decode(path: path, targetSize: half, fit: settings.fit,
                                                      maxPixels: settings.maxPixels, decodeBudget: settings.decodeBudget)
                decodedSize?(i, decoded.size)
                pictures.append(try finish(decoded, path: path, settings: settings, box: half, factor: factor))
            } catch let error as ImageError {
                throw Failure(key: key, message: error.description, file: path)
            } catch {
                throw Failure(key: key, message: "\(path): \(error)", file: path)
            }
        }
        return try DecodedImage.sideBySide(pictures[0], pictures[1], x: halves.rightX, width: box.width,
                                           background: settings.background)
    }

    /// `decoded` scaled onto `box`, the item size times `factor`, with the
    /// blurred fill and the caption the screen's picture has, grown by
    /// `factor` (a zoom's sharper decode must look like the screen's picture
    /// enlarged), upright (the caller turns it to the panel's orientation).
    private static func finish(_ decoded: DecodedImage, path: String, settings: Settings, box: PixelSize,
                               factor: Double) throws -> DecodedImage {
        var blur = settings.blur
        blur.radius *= factor
        // A cover crop keeps the faces marked in the picture (its XMP regions).
        // (Read only for a picture that is cropped: not one of the screen's shape.)
        let drawn = ImageScaler.placement(of: decoded.size, in: box, fit: settings.fit)
        let crops = settings.fit == .cover && (drawn.width > box.width || drawn.height > box.height)
        let faces = crops && !ClipName.isClip(path) ? ImageMetadata.read(path: path).faces : []
        let scaled = try ImageScaler.scale(decoded, to: box, fit: settings.fit, background: settings.background, blur: blur,
                                           faces: faces)
        // `scaled` is this decode's own (a new picture, or the decoded one
        // itself): nothing else holds it yet, so the caption goes into it.
        if var caption = settings.caption, caption.kind != .none {
            caption.size = Int((Double(caption.size) * factor).rounded())
            if let text = Captioner.sprite(for: path, in: box, caption) {
                try scaled.drawOver(text.sprite, x: text.x, y: text.y)
            }
        }
        return scaled
    }

    /// The prepared picture for page `key`, or `nil` if it is not ready (yet).
    public func image(for key: PageKey) -> DecodedImage? {
        state.withLock { s in
            guard let image = s.ready[key] else { return nil }
            s.useClock += 1
            s.lastUse[key] = s.useClock
            return image
        }
    }

    /// Asks for page `key` decoded for a zoom at `scale` (`nil`: no zoom; the
    /// picture held for one is let go). The decode is made off the loop at
    /// the scale rounded up to a half, within `[images] max_pixels`, the
    /// largest picture pixman and the decoder take, the file's own pixels
    /// and, with an explicit `cache_mb`, what the budget has left beside the
    /// screen's pictures. Until it is ready (`zoomImage`), the renderer
    /// scales the screen-size picture up. Fit `none` draws pictures
    /// unscaled, so a zoom of one always scales the screen picture.
    /// `exact`: at `scale` itself, not rounded up (Ken Burns: its frames
    /// then stay within bilinear's reduction, `ImageScaler.bilinearReductionLimit`).
    public func wantZoom(_ key: PageKey?, scale: Double, exact: Bool = false) {
        let start = state.withLock { s -> Bool in
            // A clip (always alone on its page) is zoomed from its frame on
            // screen (a decode of the file as a picture would read all of it to fail).
            guard let key, scale > 1, s.settings.fit != .none, key.isPair || !ClipName.isClip(key.first) else {
                s.zoomWant = nil
                s.zoomHeld = nil
                return false
            }
            let want = ZoomDecode(key: key, factor: exact ? scale : (scale * 2).rounded(.up) / 2)
            if s.zoomWant?.key != key { s.zoomHeld = nil }
            // Only ever more: a zoom coming back keeps the sharper picture.
            if let held = s.zoomWant, held.key == key, held.factor >= want.factor { return false }
            s.zoomWant = want
            return s.startIfMissing()
        }
        if start { queue.async { self.work() } }
    }

    /// The decode made for a zoom of page `key`, if one is ready and has
    /// more pixels than the screen-size picture.
    public func zoomImage(for key: PageKey) -> DecodedImage? {
        state.withLock { s in s.zoomHeld?.decode.key == key ? s.zoomHeld?.image : nil }
    }

    /// The picture for page `key` decoded for a zoom by `factor` (times the
    /// item size, at most): `nil` when the file has no more pixels than the
    /// screen-size picture shows.
    static func prepareZoom(_ key: PageKey, settings: Settings, factor: Double) throws -> DecodedImage? {
        let item = settings.itemSize
        if key.isPair {
            // No more than the sharper picture has: its size over its half's.
            let half = pairHalves(box: item, gap: settings.pairGap).left
            var native = 1.0
            func fittedRatio(_ i: Int, _ size: PixelSize) {
                let fitted = ImageScaler.placement(of: size, in: half, fit: settings.fit)
                native = max(native, Double(size.width) / Double(max(fitted.width, 1)),
                             Double(size.height) / Double(max(fitted.height, 1)))
            }
            let picture = try preparePair(key, settings: settings, factor: factor, decodedSize: fittedRatio)
            let f = min(factor, native)
            guard f > 1.05 else { return nil }
            return try (f < factor ? preparePair(key, settings: settings, factor: f) : picture).turned(settings.rotation)
        }
        let path = key.first
        func box(_ f: Double) -> PixelSize {
            PixelSize(width: max(1, Int((Double(item.width) * f).rounded())), height: max(1, Int((Double(item.height) * f).rounded())))
        }
        let decoded = try ImageDecoder.decode(path: path, targetSize: box(factor), fit: settings.fit,
                                              maxPixels: settings.maxPixels, decodeBudget: settings.decodeBudget)
        // No more than the file has: its size over what it is drawn at on the screen.
        let fitted = ImageScaler.placement(of: decoded.size, in: item, fit: settings.fit)
        let native = max(Double(decoded.width) / Double(max(fitted.width, 1)),
                         Double(decoded.height) / Double(max(fitted.height, 1)))
        let f = min(factor, native)
        guard f > 1.05 else { return nil }
        return try finish(decoded, path: path, settings: settings, box: box(f), factor: f).turned(settings.rotation)
    }

    /// The bytes one picture of `item` takes in the cache: 3 a pixel, rows
    /// on 4-byte boundaries (`DecodedImage.packed`).
    public static func keptBytes(_ item: PixelSize) -> Int {
        (PixelFormat.rgb888.rowBytes(width: item.width) ?? item.width * 3) * item.height
    }

    /// What pictures are prepared for now.
    public var settings: Settings { state.withLock { $0.settings } }

    /// Why page `key` failed to decode, if it did (it should be skipped).
    public func failure(for key: PageKey) -> String? { state.withLock { $0.failed[key] } }

    /// Sets what should be ready, most important first (on screen, then the
    /// neighbours in the direction of motion), and starts decoding what is missing.
    /// The same list again does nothing: the render loop asks on every frame
    /// while the content moves, and the list changes only a few times a
    /// slide (`reset` and `forget`, which make wanted pictures missing
    /// without a new list, start the decoder themselves).
    ///
    /// Pictures no longer wanted are let go at once: the cache holds what
    /// the screen needs, not what fits in the budget (which only bounds it).
    public func want(_ keys: [PageKey]) {
        let start = state.withLock { s -> Bool in
            guard keys != s.wanted else { return false }
            s.wanted = keys
            let keep = Set(keys)
            for key in s.ready.keys where !s.settings.keepsUnwanted && !keep.contains(key) {
                s.bytes -= s.ready.removeValue(forKey: key)!.byteCount
                s.lastUse[key] = nil
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
    public var missing: [PageKey] {
        state.withLock { s in s.wanted.filter { s.ready[$0] == nil && s.failed[$0] == nil } }
    }

    /// Bytes of decoded pictures held now.
    public var residentBytes: Int { state.withLock { $0.bytes + ($0.zoomHeld?.image?.byteCount ?? 0) } }

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
            s.zoomHeld = nil
            s.zoomFailed = nil
            s.generation += 1
            return s.startIfMissing()
        }
        if start { queue.async { self.work() } }
    }

    /// Forgets the files at `paths` (replaced or removed on disk): the pages
    /// showing them are decoded again if wanted.
    public func forget(_ paths: [String]) {
        let start = state.withLock { s -> Bool in
            // A pair's picture made of a forgotten file goes with it.
            let named = Set(paths)
            func stale(_ key: PageKey) -> Bool { key.paths.contains(where: named.contains) }
            for key in Set(s.ready.keys).union(s.failed.keys) where stale(key) {
                if let image = s.ready.removeValue(forKey: key) { s.bytes -= image.byteCount }
                s.lastUse[key] = nil
                s.failed[key] = nil
            }
            if let key = s.inFlight, stale(key) { s.inFlightForgotten = true }
            if let held = s.zoomHeld, stale(held.decode.key) { s.zoomHeld = nil }
            if let failed = s.zoomFailed, stale(failed) { s.zoomFailed = nil }
            return s.startIfMissing()
        }
        if start { queue.async { self.work() } }
    }

    // MARK: - The decoder thread

    private func work() {
        // A decode gives way to the loop on a busy CPU (one core: a slide's
        // frames and the first picture's flip come first). The queue runs on
        // libdispatch's threads: one that decoded stays nicer for whatever
        // background work it does later (clock, text, clips: none of it the loop's).
        ThreadPriority.yieldToTheLoop()
        while let job = nextJob() {
            if let zoom = job.zoom {
                let image = Result { try Self.prepareZoom(zoom.key, settings: job.settings, factor: zoom.factor) }
                state.withLock { s in
                    defer { s.inFlight = nil }
                    guard s.generation == job.generation, !s.inFlightForgotten, s.zoomWant?.key == zoom.key else { return }
                    switch image {
                    case .success(let picture): s.zoomHeld = (ZoomDecode(key: zoom.key, factor: job.zoomAsked), picture)
                    // Not one line more in the log: the screen-size decode reports a broken file.
                    case .failure: s.zoomFailed = zoom.key
                    }
                }
                onReady()
                continue
            }
            let result: Result<DecodedImage, Failure>
            do {
                var image = try prepare(job.key, job.settings)
                // Kept at 3 bytes a pixel, packed in place: the picture is this decode's own.
                if isKnownUniquelyReferenced(&image) { image = image.packed() }
                result = .success(image)
            } catch let failure as Failure {
                result = .failure(failure)
            } catch let error as ImageError {
                result = .failure(Failure(key: job.key, message: error.description))
            } catch {
                result = .failure(Failure(key: job.key, message: "\(job.key): \(error)"))
            }
            state.withLock { s in
                defer { s.inFlight = nil }
                guard s.generation == job.generation, !s.inFlightForgotten else { return }
                switch result {
                case .success(let image):
                    // No longer wanted (the carousel moved on while it decoded): not kept.
                    guard s.settings.keepsUnwanted || s.wanted.contains(job.key) else { return }
                    s.ready[job.key] = image
                    s.bytes += image.byteCount
                    s.useClock += 1
                    s.lastUse[job.key] = s.useClock
                case .failure(let failure):
                    s.failed[job.key] = failure.message
                    s.newFailures.append(failure)
                }
            }
            onReady()
        }
    }

    private struct Job {
        var key: PageKey
        var settings: Settings
        var generation: Int
        /// A decode for a zoom, at this factor, for a zoom that asked `zoomAsked`.
        var zoom: ZoomDecode? = nil
        var zoomAsked = 0.0
    }

    /// The next wanted picture to decode, after making room for it within the
    /// budget; `nil` (and the worker stops) when there is nothing to do or no room.
    private func nextJob() -> Job? {
        state.withLock { s -> Job? in
            let itemBytes = Self.keptBytes(s.settings.itemSize)
            let wantedSet = Set(s.wanted)
            for (rank, key) in s.wanted.enumerated() where s.ready[key] == nil && s.failed[key] == nil {
                // Make room by dropping pictures nobody wants, the one shown
                // last first: when an album does not fit, the pictures kept
                // then stay and are shown without a decode on every pass,
                // where dropping the one shown longest ago would drop each
                // picture just before autoplay comes round to it again.
                while s.bytes + itemBytes > s.settings.budgetBytes,
                      let victim = s.ready.keys.filter({ !wantedSet.contains($0) })
                          .max(by: { (s.lastUse[$0] ?? 0) < (s.lastUse[$1] ?? 0) }) {
                    s.bytes -= s.ready.removeValue(forKey: victim)!.byteCount
                    s.lastUse[victim] = nil
                }
                // The first picture (on screen) is decoded whatever the budget;
                // the rest only while they fit.
                if rank > 0, s.bytes + itemBytes > s.settings.budgetBytes { break }
                s.inFlight = key
                s.inFlightForgotten = false
                return Job(key: key, settings: s.settings, generation: s.generation)
            }
            // The screen's pictures first; then the zoomed one, sharper.
            if s.zoomMissing, var want = s.zoomWant, s.wanted.allSatisfy({ s.ready[$0] != nil || s.failed[$0] != nil }) {
                let item = s.settings.itemSize
                let itemPixels = Double(item.width * item.height)
                var limit = (Double(s.settings.maxPixels) / itemPixels).squareRoot()
                limit = min(limit, Double(ImageDecoder.maxSide) / Double(max(item.width, item.height)))
                if s.settings.keepsUnwanted {
                    limit = min(limit, (Double(max(s.settings.budgetBytes - s.bytes, 0)) / (itemPixels * 4)).squareRoot())
                }
                // What is allowed is made once: the decode counts as meeting the factor asked.
                let asked = want.factor
                if want.factor > limit {
                    want.factor = limit
                    if limit <= 1.05 {
                        s.zoomHeld = (ZoomDecode(key: want.key, factor: asked), nil)
                        s.working = false
                        return nil
                    }
                }
                s.inFlight = want.key
                s.inFlightForgotten = false
                return Job(key: want.key, settings: s.settings, generation: s.generation,
                           zoom: ZoomDecode(key: want.key, factor: want.factor), zoomAsked: asked)
            }
            s.working = false
            return nil
        }
    }
}
