import CarouselAlbum
import CarouselConfig
import CarouselCore
import CarouselDisplay
import CarouselImaging
import CarouselPlatform
import CarouselRender
import CarouselServices

/// The album changing under the carousel (files that fail to decode, the
/// folder's changes).
extension Daemon {
    /// Files that cannot be decoded are skipped: one log line each, and the
    /// carousel goes on without them.
    func skip(_ failures: [ItemCache.Failure]) {
        for f in failures { log(.warning, "skipping \(f.message)") }
        let now = Timestamp(microseconds: clock())
        let change = album.remove(Set(failures.map(\.file)), current: model.currentItemIndex(at: now), keepingOrder: shuffles)
        albumChanged(change)
    }

    /// The watched folder changed: what its descriptor says is taken now, as
    /// the loop takes it when it wakes (tests on a manual clock).
    public func folderChanged() { try? dispatchDescriptors(timeoutMilliseconds: 0) }

    /// Lists the album again and shows the new list, keeping the picture on
    /// screen where it still exists.
    public func rescanAlbum() {
        let now = Timestamp(microseconds: clock())
        let listed = listAlbum()
        let change = album.replace(with: listed, current: model.currentItemIndex(at: now),
                                   keepingOrder: shuffles)
        cache.forget(change.stale)
        albumChanged(change)
    }

    private func albumChanged(_ change: AlbumState.Change) {
        let now = Timestamp(microseconds: clock())
        deliver(model.replaceItems(count: album.count, showing: change.index, at: now))
        log(.info, "images: \(album.pictureCount) now\(album.portraitProbe == nil ? "" : " on \(album.count) pages"), showing \(album.pageName(change.index))")
        notifier.status(statusLine)
        frames.needsFrame = true
        tell(.modelChanged)
        tell(.stateChanged)
    }

    /// The album as the configuration says; problems are logged (once per
    /// file for the life of the daemon), never fatal (an empty carousel shows
    /// the empty-folder picture and waits).
    func listAlbum() -> [AlbumEntry] { Self.listAlbum(config, noting: &album) }

    static func listAlbum(_ config: Configuration, noting album: inout AlbumState) -> [AlbumEntry] {
        do {
            let listing = try config.albumListing()
            for line in album.unreportedSkips(listing.skipped.map(\.description)) { log(.warning, "skipping \(line)") }
            return album.hidden.isEmpty ? listing.entries : listing.entries.filter { !album.hidden.contains($0.path) }
        } catch {
            log(.warning, "\(error)")
            return []
        }
    }

    /// Shows item `index` from the start (a kept position), before the first frame.
    func startOn(_ index: Int) {
        _ = model.replaceItems(count: album.count, showing: index, at: Timestamp(microseconds: startTime))
    }
}
