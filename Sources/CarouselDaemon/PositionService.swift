import CarouselLoop
import CarouselCore
import CarouselPlatform

/// The picture on screen kept across restarts (`[images] resume`): read at
/// start (the carousel starts on it, if it is still in the album), written
/// when the carousel comes to rest on another one. No descriptor, no
/// deadline: it follows what the model did.
final class PositionService: LoopService {
    let name = "position"
    let subscriptions: LoopHappening.Kinds = .modelChanged
    private unowned let daemon: Daemon
    private var store: PositionStore

    /// Resumes at the kept picture when `[images] resume` says so.
    init(daemon: Daemon, directory: String) {
        self.daemon = daemon
        store = PositionStore(directory: directory)
        if daemon.config.images.resume { resume() }
    }

    /// How the position file names picture `index`: relative to the images
    /// folder, or as the `[images] files` list gives it.
    private func name(_ index: Int) -> String? {
        let album = daemon.album
        guard album.entries.indices.contains(index) else { return nil }
        return daemon.config.images.files.isEmpty ? album.entries[index].name : album.entries[index].path
    }

    /// How the position file names page `index`: by its first picture (a
    /// pair is found again from it: pairs depend on the order alone).
    private func name(page index: Int) -> String? {
        daemon.album.pages.indices.contains(index) ? name(daemon.album.pages[index].lowerBound) : nil
    }

    /// At start: shows the picture the position file names, if it is still
    /// in the album; else start_index, with one line saying why.
    private func resume() {
        switch store.load() {
        case .missing:
            break
        case let .unusable(why):
            log(.warning, "position file \(store.path) unusable (\(why)); starting at start_index")
        case let .name(kept):
            guard let index = daemon.album.entries.indices.first(where: { name($0) == kept }) else {
                log(.info, "position: \(kept) is no longer in \(daemon.config.albumSource); starting at start_index")
                return
            }
            daemon.startOn(daemon.album.page(ofPicture: index) ?? 0)
            log(.info, "position: resuming at \(kept)")
        }
    }

    /// Writes the picture on screen to the position file once it changed
    /// and the carousel is at rest: a fling across ten pictures is one
    /// write, not ten (each is an fsync on an SD card).
    func observe(_ happening: LoopHappening, now: Int64) {
        guard case .modelChanged = happening, daemon.config.images.resume, !daemon.frames.moving else { return }
        let index = daemon.model.currentItemIndex(at: Timestamp(microseconds: now))
        guard let kept = name(page: index), kept != store.saved else { return }
        store.save(kept)
    }
}
