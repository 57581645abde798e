import CarouselCore

/// Autoplay slides on only to a picture that can be shown: at autoplay's
/// moment the model waits while the next page's picture is still being
/// decoded, one interval at most (`Carousel.setUpcomingReady`), instead of
/// sliding onto a blank page (a 4K picture under emulation, a 100 MP PNG on
/// a small board). This service tells the model whether that picture is
/// decoded, as the carousel comes to rest and as decodes finish.
final class AutoplayReadinessService: LoopService {
    let name = "autoplay readiness"
    private unowned let daemon: Daemon

    init(daemon: Daemon) {
        self.daemon = daemon
    }

    func observe(_ happening: LoopHappening, now: Int64) {
        switch happening {
        case .modelChanged, .decoded, .laidOut, .configured: update(now: now)
        default: break
        }
    }

    private func update(now: Int64) {
        let d = daemon
        var ready = true
        // A picture nobody asked the decoder for (a rewind to the first
        // page, far away) is not waited for: it would never come.
        if let item = d.model.upcomingAutoplayItem, let key = d.album.key(item) { ready = !d.cache.missing.contains(key) }
        // Only a change is told: the model's answer changes the model again,
        // which comes back here as `modelChanged`.
        guard ready != d.model.isUpcomingReady else { return }
        d.deliver(d.model.setUpcomingReady(ready, at: Timestamp(microseconds: now)))
    }
}
