import CarouselControl
import CarouselPlatform
import Foundation

/// The Now page's live view: while at least one browser watches (a
/// WebSocket on /live), one subscription to the daemon's events (`subscribe
/// changes`: no per-frame ones) tells when the picture or the state
/// changed; each change, once the events have paused for `settle`, is one
/// `status` asked and sent to every browser, which then fetches the picture
/// again. The screenshot is taken once per change whoever asks
/// (`picture`), and nothing is asked of the daemon while nobody watches.
public actor LiveView {
    public let daemon: DaemonLink
    /// How long events must pause before a change is told (a motion's
    /// events come in a burst; its end is what the page shows).
    public let settle: Duration

    private var watchers: [UUID: AsyncStream<String>.Continuation] = [:]
    private var subscription: Subscription?
    private var generation = 0
    private var told = -1
    private var cached: (generation: Int, png: [UInt8])?
    private var pending: Task<Void, Never>?

    public init(daemon: DaemonLink, settle: Duration = .milliseconds(150)) {
        self.daemon = daemon
        self.settle = settle
    }

    /// A browser starts watching: the stream gives the state now, then one
    /// message a change, until `leave`.
    public func watch() async -> (UUID, AsyncStream<String>) {
        let id = UUID()
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(4))
        watchers[id] = continuation
        if subscription == nil { subscribe() }
        if let message = await stateMessage() { continuation.yield(message) }
        return (id, stream)
    }

    public func leave(_ id: UUID) {
        watchers.removeValue(forKey: id)?.finish()
        if watchers.isEmpty {
            subscription?.client.shutdown()
            subscription = nil
            cached = nil
        }
    }

    public var watching: Int { watchers.count }

    /// The number of the last change seen (the Now page is made with it).
    public var currentGeneration: Int { generation }

    /// The picture on screen as PNG: taken again only when something changed
    /// since the last one (while watched), else the same bytes.
    public func picture() async throws(DaemonError) -> [UInt8] {
        if subscription != nil, let cached, cached.generation == generation { return cached.png }
        let taken = generation
        let png = try await daemon.screenshot()
        if subscription != nil { cached = (taken, png) }
        return png
    }

    /// An event came from the daemon: told once they pause.
    func changed() {
        generation += 1
        pending?.cancel()
        let settle = self.settle
        pending = Task { [weak self] in
            try? await Task.sleep(for: settle)
            guard !Task.isCancelled else { return }
            await self?.tell()
        }
    }

    private func tell() async {
        guard generation != told, let message = await stateMessage() else { return }
        told = generation
        for continuation in watchers.values { continuation.yield(message) }
    }

    /// `{"index":..,"count":..,"playing":..,"generation":..}`, from `status`.
    private func stateMessage() async -> String? {
        guard case let .ok(fields)? = try? await daemon.ask(.status) else { return nil }
        var playing = false
        if case let .object(autoplay)? = fields["autoplay"] { playing = autoplay["running"]?.boolValue ?? false }
        var out = ""
        JSONValue.object([
            "index": fields["index"] ?? .null, "count": fields["count"] ?? .null, "playing": .bool(playing),
            "generation": .int(generation),
        ]).encode(into: &out)
        return out
    }

    /// One connection to the daemon, read by a thread of its own (a
    /// blocking client), each event line a `changed`. It ends when the last
    /// browser leaves (`shutdown`), or when the daemon goes away.
    private func subscribe() {
        guard let client = try? ControlClient(path: daemon.socketPath, timeoutSeconds: 0),
              case .ok? = (try? client.request(.subscribeChanges)).flatMap(ControlReply.init(line:))
        else { return }
        let held = Subscription(client)
        subscription = held
        let thread = Thread { [weak self] in
            while let line = try? held.client.readLine() {
                guard line.hasPrefix("{\"event\"") else { continue }
                Task { await self?.changed() }
            }
            Task { await self?.ended(held) }
        }
        thread.name = "carouseld-web live"
        thread.start()
    }

    private func ended(_ held: Subscription) {
        if subscription === held { subscription = nil }
        cached = nil
    }
}

/// The subscription's connection: read by its thread alone; the actor only
/// shuts it down (shutdown(2), safe from any thread), which ends the read.
final class Subscription: @unchecked Sendable {
    let client: ControlClient
    init(_ client: ControlClient) { self.client = client }
}
