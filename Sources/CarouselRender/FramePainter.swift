import CarouselCore
import CarouselImaging
import CarouselText

/// Draws whole frames of a carousel of image files for one-shot uses
/// (`carouseld render`, `simulate`'s `frame`, screenshots in tests): it waits
/// for the decodes a frame needs, which the live render loop never does.
public final class FramePainter {
    public let compositor: Compositor
    public let rotation: Rotation
    public let panel: PixelSize
    /// The pages, in order: item `i` shows `pages[i]`.
    public private(set) var pages: [PageKey]
    public let cache: ItemCache
    private let writer: ScreenWriter
    private let settings: CarouselSettings
    private let fit: FitMode
    private let maxPixels: Int
    /// The clock drawn over every frame (`[overlay] clock`), if any.
    public var stamp: SceneStamp?
    /// The pushed text drawn over every frame (`[overlay] text_file`), if any.
    public var textStamp: SceneStamp?

    /// `panel` is the output size; the carousel is laid out in the logical
    /// orientation `rotation` gives and written turned. `caption`: captions
    /// drawn into the pictures (`[overlay] caption`).
    public init(panel: PixelSize, rotation: Rotation, settings: CarouselSettings, style: RenderStyle,
                pages: [PageKey], maxPixels: Int, budgetBytes: Int, caption: Captioning? = nil, pairGap: Int = 0,
                clipMaxPixels: Int = 8_294_400, decodeBudget: Int = .max) {
        self.panel = panel
        self.rotation = rotation
        self.pages = pages
        pictures = pages.flatMap(\.paths)
        self.settings = settings
        fit = style.fit
        self.maxPixels = maxPixels
        let size = rotation.logicalSize(panelWidth: panel.width, panelHeight: panel.height)
        let geometry = Geometry(viewport: Viewport(width: Double(size.width), height: Double(size.height)), settings: settings)
        compositor = Compositor(geometry: geometry, style: style, rotation: rotation)
        writer = ScreenWriter(compositor: compositor)
        var cacheSettings = ItemCache.Settings(itemSize: compositor.itemPixelSize, fit: style.fit,
                                               background: style.background, maxPixels: maxPixels,
                                               budgetBytes: budgetBytes, rotation: rotation, blur: style.blur,
                                               caption: caption, pairGap: pairGap)
        cacheSettings.clipMaxPixels = clipMaxPixels
        cacheSettings.decodeBudget = decodeBudget
        cache = ItemCache(settings: cacheSettings)
    }

    /// `[images] pair_portraits`: consecutive portraits (as `isPortrait`
    /// says) share an item from now on (`PortraitPairs`). After
    /// `removeUndecodable`, as the running carousel pairs what shows.
    public func pairPortraits(_ isPortrait: @escaping (String) -> Bool) {
        pairing = isPortrait
        pages = PortraitPairs.keys(pictures, isPortrait: isPortrait)
    }

    /// `pairPortraits`' rule, and the pictures the pages show: a picture
    /// that fails later leaves, and the rest pair again as the daemon pairs them.
    private var pairing: ((String) -> Bool)?
    private var pictures: [String]

    /// Decodes every file once (at the item size, then lets the pixels go)
    /// and leaves out those that fail, in list order. After this, item `i`
    /// is the `i`-th picture that shows, as on the running carousel once it
    /// has met every file; before, an offset counted broken files it had
    /// not decoded yet (and `render` named only the broken files it met).
    public func removeUndecodable() -> [ItemCache.Failure] {
        var failures: [ItemCache.Failure] = []
        for path in pictures {
            do {
                // A clip shows its first frame, as on the running carousel.
                if ClipName.isClip(path) {
                    _ = try ItemCache.poster(path: path, settings: cache.settings)
                } else {
                    _ = try ImageDecoder.decode(path: path, targetSize: compositor.itemPixelSize, fit: fit, maxPixels: maxPixels,
                                                decodeBudget: cache.settings.decodeBudget)
                }
            } catch let failure as ItemCache.Failure {
                failures.append(failure)
            } catch {
                failures.append(ItemCache.Failure(key: PageKey(path), message: "\(error)"))
            }
        }
        remove(failures.map(\.file))
        return failures
    }

    /// Leaves the files `failed` out of the list (files that could not be
    /// decoded are skipped): with `pairPortraits`, the pictures left pair
    /// again; without, a page showing a failed file leaves.
    public func remove(_ failed: [String]) {
        let set = Set(failed)
        pictures.removeAll { set.contains($0) }
        if let pairing {
            pages = PortraitPairs.keys(pictures, isPortrait: pairing)
        } else {
            pages.removeAll { $0.paths.contains(where: set.contains) }
        }
    }

    /// The frame at `offset` (unwrapped items) with `count` items, of which
    /// item `i` shows `pages[i]` (items past the list are background).
    /// Returns the panel-oriented frame and the files that failed to decode.
    /// With `crossfade`, the frame of that crossfade (`offset` is then unused).
    /// `zoom`: the zoomed picture, drawn from a decode at the resolution
    /// its scale needs (as the running carousel does once that is ready).
    public func paint(offset: Double, count: Int, page: Int, pageCount: Int, crossfade: Crossfade? = nil,
                      zoom: ZoomView? = nil) -> (frame: Frame, failures: [ItemCache.Failure]) {
        let offsets = crossfade.map { [$0.from, $0.to] } ?? [offset]
        let placed = offsets.flatMap { compositor.placements(offset: $0, count: count, wrap: settings.wrap) }
        let wanted = placed.compactMap { $0.index < pages.count ? pages[$0.index] : nil }
        cache.want(wanted)
        let zoomPage = zoom.flatMap { $0.item < pages.count ? pages[$0.item] : nil }
        cache.wantZoom(zoomPage, scale: zoom?.scale ?? 1)
        cache.waitUntilIdle()
        let image = { (i: Int) in i < self.pages.count ? self.cache.image(for: self.pages[i]) : nil }
        let layer = zoom.map { ZoomLayer(view: $0, picture: zoomPage.flatMap(cache.zoomImage(for:))) }
        compositor.layOut(&writer.scene, offset: offsets[0], count: count, wrap: settings.wrap, page: page,
                          pageCount: pageCount, zoom: layer, image: image)
        writer.fade = crossfade?.fraction
        if let crossfade {
            compositor.layOut(&writer.incoming, offset: crossfade.to, count: count, wrap: settings.wrap, page: page,
                              pageCount: pageCount, image: image)
        }
        writer.scene.stamp = stamp
        writer.scene.textStamp = textStamp
        let out = Frame(width: panel.width, height: panel.height)
        writer.render(writer.scene, into: out)
        return (out, cache.drainFailures())
    }
}
