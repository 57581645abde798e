import CarouselCore
import CarouselLoop
import CarouselPlatform

/// The picture on screen kept across restarts (`[images] resume`): read at
/// start (the carousel starts on it, if it is still in the album), written
/// when the carousel comes to rest on another one. No descriptor, no
/// deadline: it follows what the model did. The write is a small file and
/// its fsync, on the loop, once per picture come to rest.
public final class PositionService: LoopService {
    public let name = "position"
    public let subscriptions: LoopHappening.Kinds = .modelChanged
    private let context: ServiceContext
    private var store: PositionStore

    /// Resumes at the kept picture when `[images] resume` says so.
    public init(context: ServiceContext, directory: String) {
        self.context = context
        store = PositionStore(directory: directory)
        if context.view.config.images.resume { resume() }
    }

    private func resume() {
        let view = context.view
        switch store.load() {
        case .missing:
            break
        case let .unusable(why):
            log(.warning, "position file \(store.path) unusable (\(why)); starting at start_index")
        case let .name(kept):
            guard let page = view.page(ofPictureNamed: kept) else {
                log(.info, "position: \(kept) is no longer in \(view.config.albumSource); starting at start_index")
                return
            }
            context.ask(.startOn(page: page))
            log(.info, "position: resuming at \(kept)")
        }
    }

    public func observe(_ happening: LoopHappening, now: Int64) {
        let view = context.view
        guard view.config.images.resume, !view.isMoving else { return }
        let index = view.model.currentItemIndex(at: Timestamp(microseconds: now))
        guard let kept = view.pictureName(onPage: index), kept != store.saved else { return }
        store.save(kept)
    }
}
