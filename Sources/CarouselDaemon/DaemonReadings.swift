import CarouselControl
import CarouselCore
import CarouselLoop
import CarouselPlatform
import CarouselRender

/// What a harness reads of a running daemon (the tests' offscreen daemon,
/// the benchmarks), beside what its services read through `LoopView`: the
/// services on its loop by their type, the stamps the frame path shows,
/// what the last frame wrote, whether a page's picture is kept. Reading
/// changes nothing but the cache's notion of recent use. What a harness
/// does to it goes through the port as a service's would: `ask` with a
/// `LoopAsk`.
extension Daemon {
    /// Registers a service on the loop after the daemon's own (a harness's
    /// spy), made with its context as any service is.
    @discardableResult
    public func register<S: LoopService>(_ make: (ServiceContext) throws -> S?) rethrows -> S? {
        try services.register(make)
    }

    /// The service of type `S` on the loop, if one is registered.
    public func service<S: LoopService>(_ type: S.Type) -> S? { services.first(type) }

    /// The fields the services add to `status` (the capabilities' fields).
    public func servicesStatus(now: Int64) -> [String: JSONValue] {
        var fields: [String: JSONValue] = [:]
        services.status(now: now, into: &fields)
        return fields
    }

    /// The stamp the frame path shows in `slot` (the clock's, the pushed text's).
    public func stampShown(_ slot: StampSlot) -> SceneStamp? {
        switch slot {
        case .text: frames.textStamp
        case .clock: frames.clockStamp
        case .pairing: frames.pairingStamp
        }
    }

    /// Pixels written into the display's buffer by the last frame drawn.
    public var pixelsWritten: Int { frames.writer.pixelsWritten }

    /// Hands back on the loop what work off it completed (decodes, drawings,
    /// screenshots), as the loop does when its doorbell rings.
    public func collectCompleted() { executor.collect() }

    /// Whether the decode cache holds the picture of `key` now.
    public func keepsPicture(_ key: PageKey) -> Bool { cache.image(for: key) != nil }
}
