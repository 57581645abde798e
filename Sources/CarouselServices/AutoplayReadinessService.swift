import CarouselCore
import CarouselLoop

/// Autoplay slides on only to a picture that can be shown: at autoplay's
/// moment the model waits while the next page's picture is still being
/// decoded, one interval at most (`Carousel.setUpcomingReady`), instead of
/// sliding onto a blank page (a 4K picture under emulation, a 100 MP PNG on
/// a small board). This service tells the model whether that picture is
/// decoded, as the carousel comes to rest and as decodes finish.
public final class AutoplayReadinessService: LoopService {
    public let name = "autoplay readiness"
    public let subscriptions: LoopHappening.Kinds = [.modelChanged, .decoded, .laidOut, .configured]
    private let context: ServiceContext

    public init(context: ServiceContext) {
        self.context = context
    }

    public func observe(_ happening: LoopHappening, now: Int64) {
        let view = context.view
        let model = view.model
        var ready = true
        // A picture nobody asked the decoder for (a rewind to the first
        // page, far away) is not waited for: it would never come.
        if let item = model.upcomingAutoplayItem, let key = view.pageKey(item) { ready = !view.awaitsDecode(key) }
        // Only a change is told: the model's answer changes the model again,
        // which comes back here as `modelChanged`.
        guard ready != model.isUpcomingReady else { return }
        context.ask(.model(.upcomingReady(ready)))
    }
}
