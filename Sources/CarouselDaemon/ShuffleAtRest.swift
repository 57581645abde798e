import CarouselAlbum
import CarouselCore
import CarouselRender

extension Daemon {
    /// order = shuffle applies to the folder's pictures; an `[images] files`
    /// list is shown in the order given, whatever `order` says (as with the
    /// other orders).
    var shuffles: Bool { config.images.order == .shuffle && config.images.files.isEmpty }

    /// order = shuffle: each time the carousel comes to rest on an item it was
    /// not reshuffled at, the album is reshuffled around it (`Shuffle`): the
    /// pictures on screen and next to them keep their places, so nothing the
    /// viewer sees (or the decoder has ready) changes; the rest get a new order.
    func reshuffleAtRest() {
        guard shuffles, !frames.moving, album.count > 1 else { return }
        let now = Timestamp(microseconds: clock())
        let current = model.currentItemIndex(at: now)
        guard current != album.shuffledAt else { return }
        let wrap = config.carousel.wrap
        var onScreen: [Compositor.Placement] = []
        layout.compositor.placements(offset: model.offset(at: now), count: album.count, wrap: wrap, into: &onScreen)
        let fixed = Shuffle.neighbourhood(of: onScreen.map(\.index) + [current], count: album.count, wrap: wrap)
        album.reshuffleAtRest(current: current, fixed: fixed)
    }

    /// The item the album was last reshuffled at (its state is the album's).
    var shuffledAt: Int? {
        get { album.shuffledAt }
        set { album.shuffledAt = newValue }
    }
}
