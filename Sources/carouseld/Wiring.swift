import CarouselAlbum
import CarouselConfig
import CarouselCore
import CarouselDisplay
import CarouselDRM
import CarouselImaging
import CarouselRender

// The one place where rooms meet: configuration values become the types the
// renderer, the album and the model take.

extension Color {
    var pixel: PixelColor { PixelColor(red: red, green: green, blue: blue, alpha: alpha) }

    /// The colour as it shows over a black screen: nothing lies behind the
    /// background, so its alpha darkens it, the same in gaps and letterbox.
    var opaqueOverBlack: PixelColor {
        func scale(_ c: UInt8) -> UInt8 { UInt8((Int(c) * Int(alpha) + 127) / 255) }
        return PixelColor(red: scale(red), green: scale(green), blue: scale(blue))
    }
}

extension Configuration {
    var renderStyle: RenderStyle {
        var style = RenderStyle()
        style.background = display.background.opaqueOverBlack
        style.fit = FitMode(rawValue: images.fit.rawValue)!
        var dots = IndicatorStyle()
        dots.enabled = indicator.enabled
        dots.position = IndicatorStyle.Position(rawValue: indicator.position.rawValue)!
        dots.color = indicator.color.pixel
        dots.currentColor = indicator.currentColor.pixel
        dots.size = indicator.size
        dots.spacing = indicator.spacing
        dots.margin = indicator.margin
        dots.hidesForSinglePage = indicator.hidesForSinglePage
        style.indicator = dots
        return style
    }

    var rotation: Rotation { Rotation(rawValue: display.rotation) ?? .none }

    var cacheBytes: Int { images.cacheMB * 1024 * 1024 }

    /// `[images] order` for the album. The random order's seed is fixed, so a
    /// restart shows the same sequence (and files added later slot in without
    /// reshuffling the rest).
    var albumOrder: Album.Order {
        switch images.order {
        case .name: .name
        case .mtime: .mtime
        case .random: .random(seed: 0x6361_726f_7573_656c)  // "carousel"
        }
    }

    /// The image files to show, and one log line per file left out.
    /// Throws when the folder cannot be listed at all.
    func imageListing() throws(AlbumError) -> (paths: [String], skipped: [String]) {
        let listing = images.files.isEmpty
            ? try Album.scanListing(folder: images.path, order: albumOrder)
            : Album.explicit(files: images.files)
        return (listing.entries.map(\.path), listing.skipped.map(\.description))
    }
}

extension PanelOrientation {
    /// The turn that shows a picture upright on a panel mounted this way
    /// (as wlroots maps the property: left side up needs a quarter turn back).
    var rotation: Rotation {
        switch self {
        case .normal: .none
        case .upsideDown: .upsideDown
        case .leftSideUp: .clockwise270
        case .rightSideUp: .clockwise90
        }
    }
}

/// What the configuration and the panel make of the screen: the turn, the
/// layout's size, the model's settings (the touch slop scaled to the
/// panel's density) and the compositor. Computed at start, after a reload
/// and after a display change.
struct Layout {
    let rotation: Rotation
    let size: PixelSize
    let viewport: Viewport
    let settings: CarouselSettings
    let compositor: Compositor
    /// The slop factor for the panel's density, when its size is known.
    let slopScale: Double?
    let physicalSize: PhysicalSize?

    init(config: Configuration, backend: DisplayBackend) {
        // The panel's own mounting (DRM "panel orientation") and the configured turn add up.
        rotation = config.rotation.combined(with: backend.panelRotation.rotation)
        let panel = backend.panelSize
        let logical = rotation.logicalSize(panelWidth: panel.width, panelHeight: panel.height)
        size = PixelSize(width: logical.width, height: logical.height)
        viewport = Viewport(width: Double(size.width), height: Double(size.height))
        physicalSize = backend.physicalSize
        slopScale = physicalSize.flatMap {
            TouchDensity.slopScale(pixels: panel.width, millimetres: $0.widthMillimetres)
        }
        var settings = config.carousel
        if let slopScale { settings.touchSlop *= slopScale }
        self.settings = settings
        compositor = Compositor(geometry: Geometry(viewport: viewport, settings: settings), style: config.renderStyle)
    }

    func cacheSettings(_ config: Configuration) -> ItemCache.Settings {
        ItemCache.Settings(itemSize: compositor.itemPixelSize, fit: config.renderStyle.fit,
                           background: config.renderStyle.background, maxPixels: config.images.maxPixels,
                           budgetBytes: config.cacheBytes)
    }

    /// One log line about the slop, when it was scaled.
    func slopLine(configured: Double) -> String? {
        guard let slopScale, let physicalSize else { return nil }
        let dpi = (slopScale * TouchDensity.referenceDPI).rounded()
        return "touch slop \(configured.formatted) px at 160 dpi is \(settings.touchSlop.formatted) px on this "
            + "\(Int(dpi)) dpi panel (\(physicalSize))"
    }
}

extension Double {
    /// At most one decimal, no trailing ".0".
    var formatted: String {
        let tenths = (self * 10).rounded() / 10
        return tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
    }
}

extension DRMModeRequest {
    /// The DRM room's request for a mode the configuration (or a command line) names.
    init(_ request: ModeRequest) {
        self.init(width: request.width, height: request.height, refresh: request.refresh)
    }
}
