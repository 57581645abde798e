import CarouselClipsWords
import CarouselConfig
import CarouselCore
import CarouselDisplay
import CarouselImaging
import CarouselKenBurns
import CarouselKenBurnsWords
import CarouselPlatform
import CarouselPushedText
import CarouselRender

/// Frames painted without a display or a loop, as the daemon would show
/// them: `carouseld render` (one frame at an offset) and `carouseld
/// simulate`'s `frame` steps.
extension Layout {
    /// A painter of `pages` of `config`'s pictures on a panel of `panel`
    /// pixels, with its layout, style, cache budget and captions.
    public static func stillPainter(_ config: Configuration, panel: PixelSize, pages: [PageKey]) -> FramePainter {
        stillPainter(config, layout: Layout(config: config, backend: OffscreenBackend(size: panel)), pages: pages)
    }

    private static func stillPainter(_ config: Configuration, layout: Layout, pages: [PageKey]) -> FramePainter {
        let panel = layout.compositor.panel
        let logical = config.rotation.logicalSize(panelWidth: panel.width, panelHeight: panel.height)
        return FramePainter(panel: panel, rotation: config.rotation, settings: config.carousel, style: config.renderStyle,
                            pages: pages, maxPixels: config.images.maxPixels,
                            // Nothing kept for pages paged past: a still is one frame.
                            budgetBytes: config.cacheBytes(screen: PixelSize(width: logical.width, height: logical.height),
                                                           boardMemory: 0),
                            caption: layout.captioning(config), pairGap: layout.pairGap,
                            clipMaxPixels: config[VideoSettings.self].maxPixels,
                            // As the daemon on this board would decode them.
                            decodeBudget: config.decodeBytes(boardMemory: PixelMemory.boardBytes))
    }

    /// The frame `config` shows on a `panel` at `offset` (items), with the
    /// clock at `time`, a zoom (its item is the one at the offset), a
    /// crossfade to the next picture, or the picture at the offset
    /// `kenBurns` seconds into its rest, moved as `[ken_burns]` moves it
    /// (`KenBurnsPlan`: the move it makes when it came to rest as autoplay
    /// brings it). Every file is tried first: the offset counts pictures
    /// that show, and every broken file is named once (one warning line
    /// each), whether on screen or not.
    public static func still(_ config: Configuration, panel: PixelSize, paths: [String], offset: Double,
                             clock time: (hour: Int, minute: Int), zoom: ZoomView?, crossfade: Double?,
                             kenBurns: Double? = nil) -> Frame {
        let layout = Layout(config: config, backend: OffscreenBackend(size: panel))
        let painter = stillPainter(config, layout: layout, pages: paths.map(PageKey.init))
        painter.stamp = layout.clockStamp(config, hour: time.hour, minute: time.minute)
        painter.textStamp = PushedTextService.fileStamp(config, on: layout.screenFacts(config))
        if paths.isEmpty { log(.info, "no images to show in \(config.images.path)") }
        for failure in painter.removeUndecodable() { log(.warning, "skipping \(failure.message)") }
        if layout.pairsPortraits(config) { painter.pairPortraits(Layout.isPortrait(path:)) }
        // A file that changed since (or fails only at the frame's size) is
        // skipped as met: paint again until every item on screen decoded.
        while true {
            let count = painter.pages.count
            let lattice = PageLattice(count: count, settings: config.carousel)
            let page = lattice.cyclePage(lattice.nearestPage(to: offset))
            var zoomed = zoom.map { view -> ZoomView in
                var v = view
                v.item = lattice.itemIndex(at: offset)
                return v
            }
            if let seconds = kenBurns, count > 0 {
                zoomed = kenBurnsView(config, layout: layout, page: painter.pages[lattice.itemIndex(at: offset)],
                                      item: lattice.itemIndex(at: offset), seconds: seconds)
            }
            let fade = crossfade.map { Crossfade(from: offset, to: offset + 1, fraction: $0) }
            let (frame, failures) = painter.paint(offset: offset, count: count, page: page, pageCount: lattice.pageCount,
                                                  crossfade: fade, zoom: zoomed)
            if failures.isEmpty { return frame }
            for failure in failures { log(.warning, "skipping \(failure.message)") }
            painter.remove(failures.map(\.file))
        }
    }

    /// The framing of page `key` `seconds` into its rest, as a zoom of item
    /// `item`; nil (the picture as it rests) when `[ken_burns]` is off or
    /// does not move this picture.
    private static func kenBurnsView(_ config: Configuration, layout: Layout, page key: PageKey, item: Int,
                                     seconds: Double) -> ZoomView? {
        let settings = config[KenBurnsSettings.self]
        guard settings.enabled else {
            log(.warning, "[ken_burns] enabled is false: the picture rests still")
            return nil
        }
        let picture = layout.cacheSettings(config)
        guard let move = KenBurnsPlan.move(for: key, facts: PictureFacts.read(key), settings: settings,
                                           box: picture.itemSize, fit: picture.fit) else { return nil }
        let rest = config.autoplay.enabled ? config.autoplay.interval : nil
        let framing = move.framing(at: KenBurnsPlan.progress(at: seconds, duration: rest))
        return framing.zoomView(item: item, width: Double(picture.itemSize.width), height: Double(picture.itemSize.height))
    }
}
