import CarouselConfig
import CarouselCore
import CarouselImaging
import CarouselLoop
import CarouselPlatform
import CarouselRender
import CarouselServices
import CarouselText

/// What the services read of the daemon: the one view through their port
/// (`ServiceContext.view`); they never see `Daemon` itself.
extension Daemon: LoopView {
    public var pageCount: Int { album.count }
    public func pageKey(_ page: Int) -> PageKey? { album.key(page) }
    public var framesPresented: Int { frames.pacer.framesPresented }
    public var pictureSettings: ItemCache.Settings { layout.cacheSettings(config) }
    public var screen: ScreenFacts { layout.screenFacts(config) }
    public func awaitsDecode(_ key: PageKey) -> Bool { cache.missing.contains(key) }
    public var now: Int64 { clock() }
    public var isMoving: Bool { frames.moving }
    public var framedFrameCost: Int64 { frames.framedFrameCost }
    public func pictureName(onPage page: Int) -> String? {
        album.pages.indices.contains(page) ? pictureName(album.pages[page].lowerBound) : nil
    }
    public func page(ofPictureNamed name: String) -> Int? {
        guard let index = album.entries.indices.first(where: { pictureName($0) == name }) else { return nil }
        return album.page(ofPicture: index) ?? 0
    }

    /// A picture as the position file names it: by its name in the folder,
    /// or its path when `[images] files` lists them.
    private func pictureName(_ index: Int) -> String? {
        guard album.entries.indices.contains(index) else { return nil }
        return config.images.files.isEmpty ? album.entries[index].name : album.entries[index].path
    }

    // MARK: - Input and the display

    // `rotation` is the layout's (Daemon.swift), `displayIsAway` DisplayPresence.swift's,
    // `screenPowerDeadline` DisplayPower.swift's.
    public var panelSize: PixelSize { backend.panelSize }
    public var displayDescriptor: (fd: Int32, generation: UInt64)? { backend.fileDescriptor.map { ($0, backendGeneration) } }
    public var displayHotplugDevice: UInt64? { backend.hotplugDevice }

    // MARK: - The control socket and MQTT

    // `status()` is the control socket's answer (ControlAnswers.swift).
    public var hasBacklight: Bool { backlight.device != nil }
}

extension Layout {
    /// The clock's look for `config` on this layout; nil: no clock.
    func clockLook(_ config: Configuration) -> ClockLook? {
        ClockLook(config, rotation: rotation, logical: size, panel: compositor.panel, textSize: textSize(config))
    }

    /// The clock of `config` showing `hour`:`minute`, as a frame of this
    /// layout draws it (`carouseld render`); nil without a clock or a font.
    public func clockStamp(_ config: Configuration, hour: Int, minute: Int) -> SceneStamp? {
        guard let look = clockLook(config) else { return nil }
        return ClockOverlay.draw(look.text(hour: hour, minute: minute), look)
    }

    /// The screen as a stamp over the pictures is placed on it, for `config`.
    func screenFacts(_ config: Configuration) -> ScreenFacts {
        var clock: (position: OverlayPosition, height: Int)?
        if let look = clockLook(config) {
            // The clock's sprite is as high whatever the minute (one line of digits).
            clock = (look.position, ClockOverlay.sprite(look.text(hour: 12, minute: 0), look)?.height ?? 0)
        }
        return ScreenFacts(rotation: rotation, logical: size, panel: compositor.panel, textSize: textSize(config), clock: clock)
    }
}
