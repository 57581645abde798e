import CarouselLoop
import CarouselAlbum
import CarouselConfig
import CarouselPlatform

/// The images folder followed with inotify (not an explicit file list):
/// files that come, go or change, the folder moved, re-created or mounted
/// over. What it sees goes to the daemon, which lists the album again.
public final class FolderWatchService: LoopService {
    public let name = "folder watch"
    public let subscriptions: LoopHappening.Kinds = .configured
    private let context: ServiceContext
    public private(set) var watcher: FolderWatcher?
    /// Bumped for every watcher, so that a new one's descriptors are told
    /// from the old one's that reused their numbers.
    private var generation: UInt64 = 0
    private var watched: (path: String, recursive: Bool)?

    public init(context: ServiceContext) {
        self.context = context
        watch(context.view.config)
    }

    /// Watches the folder `config` names (a new watcher, whatever there was),
    /// or nothing for an `[images] files` list. A folder that cannot be
    /// watched is one line; the album is shown as listed.
    func watch(_ config: Configuration) {
        watcher?.close()
        watcher = nil
        watched = nil
        generation += 1
        guard config.images.files.isEmpty else { return }
        watched = (config.images.path, config.images.recursive)
        do {
            let w = try FolderWatcher(folder: config.images.path, recursive: config.images.recursive)
            watcher = w
            if let failure = w.takeNewWatchFailure() { log(.warning, "not watching for changes: \(failure)") }
        } catch {
            log(.warning, "not watching \(config.images.path) for changes: \(error)")
        }
    }

    public var interests: [EpollInterest] {
        guard let w = watcher else { return [] }
        var wanted = [EpollInterest(fd: w.fileDescriptor, serial: generation)]
        // Without it a file system mounted on the folder later goes unseen; not fatal.
        if w.mountsDescriptor >= 0 {
            wanted.append(EpollInterest(fd: w.mountsDescriptor, events: EpollInterest.priority, serial: generation))
        }
        return wanted
    }

    public func ready(_ fd: Int32, events: UInt32, now: Int64) {
        guard let w = watcher else { return }
        if fd == w.mountsDescriptor {
            changed(w.mountsChanged())
        } else {
            drain()
        }
    }

    /// Takes what the watcher saw since the last time (its descriptor is readable).
    func drain() {
        guard let w = watcher else { return }
        do {
            changed(try w.drain())
        } catch {
            log(.warning, "watching \(context.view.config.images.path): \(error)")
        }
    }

    /// What the watcher saw (events, or a look after a mount or unmount).
    func changed(_ change: FolderWatcher.Change) {
        let path = context.view.config.images.path
        if change.folderReplaced {
            log(.info, "\(path) is another folder now (re-created, moved in, or a file system mounted"
                + " or unmounted there); watching it")
        } else if change.folderVanished {
            log(.warning, "\(path) was removed or unmounted; showing nothing until it is back")
        }
        if let failure = watcher?.takeNewWatchFailure() { log(.warning, "not watching for changes: \(failure)") }
        guard !change.isEmpty else { return }
        context.ask(.rescanAlbum)
    }

    public func observe(_ happening: LoopHappening, now: Int64) {
        guard case .configured = happening else { return }
        let config = context.view.config
        let wanted: (path: String, recursive: Bool)? = config.images.files.isEmpty ? (config.images.path, config.images.recursive) : nil
        if wanted?.path != watched?.path || wanted?.recursive != watched?.recursive || (wanted == nil) != (watcher == nil) {
            watch(config)
        }
    }

    public func stop() {
        watcher?.close()
        watcher = nil
    }
}
