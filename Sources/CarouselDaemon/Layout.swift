import CarouselAlbum
import CarouselClipsWords
import CarouselConfig
import CarouselCore
import CarouselDisplay
import CarouselImaging
import CarouselInput
import CarouselRender
import CarouselText

// Where rooms meet: configuration values become the types the renderer,
// the album and the model take.

extension PixelColor {
    /// The colour as it shows over a black screen: nothing lies behind the
    /// background, so its alpha darkens it, the same in gaps and letterbox.
    public var opaqueOverBlack: PixelColor {
        func scale(_ c: UInt8) -> UInt8 { UInt8((Int(c) * Int(alpha) + 127) / 255) }
        return PixelColor(red: scale(red), green: scale(green), blue: scale(blue))
    }
}

extension Configuration {
    public var renderStyle: RenderStyle {
        var style = RenderStyle()
        style.background = display.background.opaqueOverBlack
        style.fit = images.fit
        style.blur = BlurStyle(radius: images.blurRadius, dim: images.dim)
        style.indicator = indicator
        return style
    }

    public var rotation: Rotation { Rotation(rawValue: display.rotation) ?? .none }

    /// The decode cache's budget for a layout of `screen` pixels on a
    /// board of `boardMemory` bytes: `[images] cache_mb`, or with `auto`
    /// room for exactly the pictures the carousel can want at once
    /// (`AlbumState.wantedLimit`) at the item size, and `keepBytes` more
    /// for pictures paged past.
    public func cacheBytes(screen: PixelSize, boardMemory: Int) -> Int {
        if let mb = images.cacheMB { return mb * 1024 * 1024 }
        let geometry = Geometry(viewport: Viewport(width: Double(screen.width), height: Double(screen.height)),
                                settings: carousel)
        let item = Compositor(geometry: geometry, style: renderStyle).itemPixelSize
        return AlbumState.wantedLimit(geometry: geometry, paging: carousel.paging) * ItemCache.keptBytes(item)
            + keepBytes(boardMemory: boardMemory)
    }

    /// What one decode may hold on a board of `boardMemory` bytes: `[images]
    /// decode_mb`, or with `auto` half of the board's memory (a board whose
    /// memory is not known, 0, gets no budget). Half leaves the rest of the
    /// board (the kernel, the daemon with its decode cache, the display's
    /// buffers where they are in system memory) the other half.
    public func decodeBytes(boardMemory: Int) -> Int {
        if let mb = images.decodeMB { return mb << 20 }
        return boardMemory > 0 ? boardMemory / 2 : .max
    }

    /// With `cache_mb = auto`, the memory for pictures paged past, kept so
    /// that the next pass shows them without decoding them again: 1/64 of
    /// the board's (16 MiB on a 1 GB board, room for two 1920x1080
    /// pictures besides those the screen needs, so an album of five cycles
    /// on decodes of the first pass; 64 MiB on a 4 GB one). Nothing with
    /// an explicit `cache_mb`, which is the whole budget.
    public func keepBytes(boardMemory: Int) -> Int {
        images.cacheMB == nil ? min(max(boardMemory, 0), 1 << 40) / 64 : 0
    }

    /// `[images] order` for the album. The random order's seed is fixed, so a
    /// restart shows the same sequence (and files added later slot in without
    /// reshuffling the rest).
    public var albumOrder: Album.Order {
        switch images.order {
        case .name: .name
        case .mtime: .mtime
        case .random: .random(seed: 0x6361_726f_7573_656c)  // "carousel"
        // Listed by name; the daemon shuffles the album itself (AlbumState.reshuffle).
        case .shuffle: .name
        }
    }

    /// The album as `[images]` says: the folder's pictures, or the files list.
    /// Throws when the folder cannot be listed at all.
    public func albumListing() throws(AlbumError) -> AlbumListing {
        var listing = images.files.isEmpty
            ? try Album.scanListing(folder: images.path, order: albumOrder, recursive: images.recursive)
            : Album.explicit(files: images.files)
        if !self[VideoSettings.self].enabled { listing.entries.removeAll { ClipName.isClip($0.path) } }
        return listing
    }

    /// The image files to show, and one log line per file left out.
    /// Throws when the folder cannot be listed at all.
    public func imageListing() throws(AlbumError) -> (paths: [String], skipped: [String]) {
        let listing = try albumListing()
        return (listing.entries.map(\.path), listing.skipped.map(\.description))
    }

    /// Where the pictures come from, for log lines.

    /// The display mode `[display] mode` asks for, as the display room takes it.
    public var displayModeRequest: DisplayModeRequest? { display.mode.map(\.displayModeRequest) }
}

extension ModeRequest {
    /// The display room's request for the mode a configuration (or a command line) names.
    public var displayModeRequest: DisplayModeRequest {
        DisplayModeRequest(width: width, height: height, refresh: refresh)
    }
}

extension PanelOrientation {
    /// The turn that shows a picture upright on a panel mounted this way
    /// (as wlroots maps the property: left side up needs a quarter turn back).
    public var rotation: Rotation {
        switch self {
        case .normal: .none
        case .upsideDown: .upsideDown
        case .leftSideUp: .clockwise270
        case .rightSideUp: .clockwise90
        }
    }
}

/// Where the touch slop's density comes from: the touchscreen's own size
/// (libinput's millimetres) where it reports one, else the display's (EDID).
public enum TouchDensitySource: Equatable, Sendable, CustomStringConvertible {
    /// `id`: the input device's, so that its removal can be told.
    case touchscreen(id: Int, name: String, size: InputPhysicalSize)
    case display(PhysicalSize)

    /// Panel pixels per millimetre across the width: the touchscreen covers
    /// the panel, so its width in mm spans the panel's width in pixels.
    var millimetresAcross: Double {
        switch self {
        case let .touchscreen(_, _, size): size.width
        case let .display(size): Double(size.widthMillimetres)
        }
    }

    public var description: String {
        switch self {
        case let .touchscreen(_, name, size): "touchscreen \(name), \(size.width.formatted)x\(size.height.formatted) mm"
        case let .display(size): "display \(size)"
        }
    }
}

/// What the configuration and the panel make of the screen: the turn, the
/// layout's size, the model's settings (the touch slop scaled to the
/// panel's density) and the compositor. Computed at start, after a reload,
/// after a display change and when a touchscreen reports its size.
public struct Layout: Sendable {
    public let rotation: Rotation
    public let size: PixelSize
    public let viewport: Viewport
    public let settings: CarouselSettings
    public let compositor: Compositor
    /// The slop factor for the panel's density, when its size is known.
    public let slopScale: Double?
    public let density: TouchDensitySource?
    /// The touchscreen that reported its size, if one did: the next layout is made with it too.
    public let touchscreen: TouchDensitySource?
    /// The board's memory in bytes, for `cache_mb = auto` (`Configuration.keepBytes`).
    public let boardMemory: Int

    /// `touchscreen`: the size a touchscreen reports, preferred over the
    /// display's for the slop (it is the surface the finger moves on).
    public init(config: Configuration, backend: DisplayBackend, touchscreen: TouchDensitySource? = nil,
                boardMemory: Int = 0) {
        self.boardMemory = boardMemory
        // The panel's own mounting (DRM "panel orientation") and the configured turn add up.
        rotation = config.rotation.combined(with: backend.panelRotation.rotation)
        let panel = backend.panelSize
        let logical = rotation.logicalSize(panelWidth: panel.width, panelHeight: panel.height)
        size = PixelSize(width: logical.width, height: logical.height)
        viewport = Viewport(width: Double(size.width), height: Double(size.height))
        self.touchscreen = touchscreen
        density = touchscreen ?? backend.physicalSize.map(TouchDensitySource.display)
        slopScale = density.flatMap { source in
            // Touch coordinates are panel pixels across the panel's own width.
            let mm = source.millimetresAcross
            return mm > 0 ? TouchDensity.slopScale(pixels: panel.width, millimetres: Int(mm.rounded())) : nil
        }
        var settings = config.carousel
        if let slopScale { settings.touchSlop *= slopScale }
        self.settings = settings
        compositor = Compositor(geometry: Geometry(viewport: viewport, settings: settings), style: config.renderStyle,
                                rotation: rotation)
    }

    public func cacheSettings(_ config: Configuration) -> ItemCache.Settings {
        var settings = ItemCache.Settings(itemSize: compositor.itemPixelSize, fit: config.renderStyle.fit,
                                          background: config.renderStyle.background, maxPixels: config.images.maxPixels,
                                          budgetBytes: config.cacheBytes(screen: size, boardMemory: boardMemory),
                                          rotation: rotation,
                                          keepsUnwanted: config.images.cacheMB != nil
                                              || config.keepBytes(boardMemory: boardMemory) >= ItemCache.keptBytes(compositor.itemPixelSize),
                                          blur: config.renderStyle.blur,
                                          caption: captioning(config), pairGap: pairGap)
        settings.clipMaxPixels = config[VideoSettings.self].maxPixels
        settings.decodeBudget = config.decodeBytes(boardMemory: boardMemory)
        return settings
    }

    /// `[images] pair_portraits`, where pages are wider than tall (a pair
    /// of portraits on a portrait page would each be smaller than alone).
    public func pairsPortraits(_ config: Configuration) -> Bool {
        let item = compositor.itemPixelSize
        return config.images.pairPortraits && item.width > item.height
    }

    /// Pixels between the two pictures of a pair: the layout's own gap between pages.
    var pairGap: Int { max(0, Int(settings.spacing.rounded())) }

    /// What tells the album which pictures are portraits, when it pairs them
    /// (`pairsPortraits`): the upright size in the file's header.
    public func portraitProbe(_ config: Configuration) -> (@Sendable (AlbumEntry) -> Bool)? {
        guard pairsPortraits(config) else { return nil }
        return { entry in Layout.isPortrait(path: entry.path) }
    }

    /// Whether the picture at `path` shows taller than wide, by its header;
    /// a header that cannot be read is no portrait (the decode will say why).
    public static func isPortrait(path: String) -> Bool {
        ImageShape.uprightSize(path: path).map { $0.height > $0.width } ?? false
    }

    /// How captions are drawn on this screen (`[overlay]`); nil: none.
    public func captioning(_ config: Configuration) -> Captioning? {
        let overlay = config.overlay
        guard overlay.caption != .none else { return nil }
        return Captioning(kind: overlay.caption, position: overlay.position, style: overlay.text,
                          size: textSize(config))
    }

    /// The overlay's em size in pixels on this screen.
    public func textSize(_ config: Configuration) -> Int {
        config.overlay.text.pixelSize(shorterSide: min(size.width, size.height))
    }

    /// One log line about the decode budget: what `cache_mb` came to here.
    public func cacheLine(_ config: Configuration) -> String {
        let settings = cacheSettings(config)
        let item = settings.itemSize
        let each = max(ItemCache.keptBytes(item), 1)
        let pictures = settings.budgetBytes / each
        func mib(_ bytes: Int) -> String { (Double(bytes) / 1_048_576).formatted }
        let line = "decode cache: \(mib(settings.budgetBytes)) MiB, \(pictures) picture\(pictures == 1 ? "" : "s") of "
            + "\(item.width)x\(item.height) at 3 bytes a pixel"
        guard config.images.cacheMB == nil else { return line }
        let kept = config.keepBytes(boardMemory: boardMemory)
        return line + " (cache_mb = auto: what the screen needs, and \(kept / each) more paged past, "
            + "in \(mib(kept)) MiB, 1/64 of the board's \(mib(boardMemory)) MiB)"
    }

    /// One log line about the decode budget: what `decode_mb` came to here.
    public func decodeLine(_ config: Configuration) -> String {
        let bytes = config.decodeBytes(boardMemory: boardMemory)
        func mib(_ bytes: Int) -> String { (Double(bytes) / 1_048_576).formatted }
        guard bytes < .max else { return "decode budget: none (decode_mb = auto, and the board's memory is not known)" }
        let line = "decode budget: \(mib(bytes)) MiB a picture"
        guard config.images.decodeMB == nil else { return line }
        return line + " (decode_mb = auto: half of the board's \(mib(boardMemory)) MiB)"
    }

    /// One log line about the slop, when it was scaled.
    public func slopLine(configured: Double) -> String? {
        guard let slopScale, let density else { return nil }
        let dpi = (slopScale * TouchDensity.referenceDPI).rounded()
        return "touch slop \(configured.formatted) px at 160 dpi is \(settings.touchSlop.formatted) px on this "
            + "\(Int(dpi)) dpi panel (\(density.description))"
    }
}
