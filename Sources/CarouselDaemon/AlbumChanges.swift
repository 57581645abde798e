import CarouselAlbum
import CarouselConfig
import CarouselCore
import CarouselDisplay
import CarouselImaging
import CarouselPlatform
import CarouselRender

/// The album changing under the carousel (files that fail to decode, the
/// folder's changes), and the picture on screen kept across restarts.
extension Daemon {
    /// Files that cannot be decoded are skipped: one log line each, and the
    /// carousel goes on without them.
    func skip(_ failures: [ItemCache.Failure]) {
        for f in failures { log(.warning, "skipping \(f.message)") }
        let now = Timestamp(microseconds: clock())
        let change = album.remove(Set(failures.map(\.path)), current: model.currentItemIndex(at: now))
        albumChanged(change)
    }

    /// The watched folder changed (its descriptor is readable): list it again.
    public func folderChanged() { services.first(FolderWatchService.self)?.drain() }

    /// What the watcher saw (events, or a look after a mount or unmount).
    func folderChanged(_ change: FolderWatcher.Change) { services.first(FolderWatchService.self)?.changed(change) }

    /// The images folder's watch, if there is one.
    var watcher: FolderWatcher? { services.first(FolderWatchService.self)?.watcher }

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
        log(.info, "images: \(album.count) now, showing \(album.path(change.index) ?? "nothing")")
        notifier.status(statusLine)
        needsFrame = true
        keepPosition()
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
            return listing.entries
        } catch {
            log(.warning, "\(error)")
            return []
        }
    }

    // MARK: - The position across restarts

    /// How the position file names item `index`: relative to the images
    /// folder, or as the `[images] files` list gives it.
    func positionName(_ index: Int) -> String? {
        guard album.entries.indices.contains(index) else { return nil }
        return config.images.files.isEmpty ? album.entries[index].name : album.entries[index].path
    }

    /// At start: shows the picture the position file names, if it is still
    /// in the album; else start_index, with one line saying why.
    func resumePosition() {
        guard var store = position else { return }
        defer { position = store }
        switch store.load() {
        case .missing:
            break
        case let .unusable(why):
            log(.warning, "position file \(store.path) unusable (\(why)); starting at start_index")
        case let .name(name):
            guard let index = album.entries.indices.first(where: { positionName($0) == name }) else {
                log(.info, "position: \(name) is no longer in \(config.albumSource); starting at start_index")
                return
            }
            _ = model.replaceItems(count: album.count, showing: index, at: Timestamp(microseconds: startTime))
            log(.info, "position: resuming at \(name)")
        }
    }

    /// Writes the picture on screen to the position file once it changed
    /// and the carousel is at rest: a fling across ten pictures is one
    /// write, not ten (each is an fsync on an SD card).
    func keepPosition() {
        guard config.images.resume, position != nil, !moving else { return }
        let index = model.currentItemIndex(at: Timestamp(microseconds: clock()))
        guard let name = positionName(index), name != position?.saved else { return }
        position?.save(name)
    }
}
