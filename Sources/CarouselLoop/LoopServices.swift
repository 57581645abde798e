import CarouselControl
import CarouselPlatform

/// The services on one loop, and the loop's side of their port: each has a
/// slot, and its descriptors' epoll tokens carry the slot above the
/// descriptor's number, so a ready descriptor goes to its service without a
/// table of features. A happening goes only to the services that subscribe
/// to its kind (wayland's `wl_signal`: one list of listeners per kind). What
/// services ask waits in one outbox and is carried out (`carryOut`, the
/// daemon's interpreter) once the service that asked has returned.
///
/// A service's descriptors and deadline are asked for again only after it
/// ran (or the daemon said what it reads changed: `invalidate`), not before
/// every sleep: a slide frame touches no service that does not take part.
public final class LoopServices {
    private struct Slot {
        let service: LoopService
        var registrations = EpollRegistrations()
        /// The last failure to watch one of its descriptors, said once.
        var failure: String?
        /// It ran since its interests and deadline were last asked for.
        var dirty = true
        var deadline: Int64?
        /// Its deadline is asked for before every sleep (`deadlineIsVolatile`).
        let volatile: Bool
    }
    private var slots: [Slot] = []
    /// The slots subscribed to each kind of happening, in registration order.
    private var listeners: [[Int]] = Array(repeating: [], count: 8)
    /// The slots that take event lines.
    private var eventTakers: [Int] = []
    private var outbox: [LoopAsk] = []
    /// The earliest of the deadlines asked for at the last `synchronize`,
    /// while no service ran since (`earliestDeadline` without a look at each).
    private var earliestKnown: Int64??
    private var flushing = false
    private let epoll: Epoll
    /// The one way off the loop and back (the first service).
    public let executor: LoopExecutor
    /// What services read (the daemon, once it is whole).
    public weak var view: (any LoopView)?
    /// Carries out one ask (the daemon's interpreter).
    public var carryOut: (LoopAsk) -> Void = { _ in }
    /// The token of a descriptor that belongs to no service (the loop's timer).
    public static let loopToken: UInt64 = 0

    public init(epoll: Epoll, executor: LoopExecutor) {
        self.epoll = epoll
        self.executor = executor
        slots.append(Slot(service: executor, volatile: false))
        executor.afterCompletion = { [unowned self] in invalidate() }
    }

    /// Adds the service `make` builds with its context (none when it
    /// returns nil: a source this board does not have). It is asked for its
    /// interests before the next sleep.
    @discardableResult
    public func register<S: LoopService>(_ make: (ServiceContext) throws -> S?) rethrows -> S? {
        let slot = slots.count
        guard let service = try make(ServiceContext(loop: self, slot: slot)) else { return nil }
        slots.append(Slot(service: service, volatile: service.deadlineIsVolatile))
        let kinds = service.subscriptions
        for (bit, kind) in LoopHappening.Kinds.all.enumerated() where kinds.contains(kind) { listeners[bit].append(slot) }
        if service.takesEvents { eventTakers.append(slot) }
        return service
    }

    /// The first service of type `T`, if one is registered.
    public func first<T: LoopService>(_ type: T.Type) -> T? {
        for slot in slots { if let s = slot.service as? T { return s } }
        return nil
    }

    private static func token(slot: Int, fd: Int32) -> UInt64 {
        UInt64(slot + 1) << 32 | UInt64(UInt32(bitPattern: fd))
    }

    /// `slot`'s service ran: its interests and deadline are asked for again.
    func ran(_ slot: Int) { markRan(slot) }

    private func markRan(_ slot: Int) {
        slots[slot].dirty = true
        earliestKnown = nil
    }

    /// What every service reads may have changed (a new display, a
    /// configuration, the screen's power): all are asked again.
    public func invalidate() {
        for i in slots.indices { slots[i].dirty = true }
        earliestKnown = nil
    }

    /// Brings the epoll set and the deadlines in line with the services
    /// that ran. A service whose descriptor cannot be watched is said once
    /// per failure, and the loop runs on without it.
    public func synchronize() {
        var earliest: Int64?
        var failed = false
        // Known until a service runs, unless one is still to be asked again.
        defer { earliestKnown = failed ? nil : .some(earliest) }
        for i in slots.indices {
            defer { if let due = slots[i].deadline { earliest = min(earliest ?? due, due) } }
            guard slots[i].dirty || slots[i].volatile else { continue }
            let service = slots[i].service
            guard slots[i].dirty else {
                slots[i].deadline = service.deadline
                continue
            }
            slots[i].dirty = false
            slots[i].deadline = service.deadline
            do {
                try slots[i].registrations.synchronize(service.interests, with: epoll,
                                                       token: { Self.token(slot: i, fd: $0) },
                                                       stillOpen: { service.keepsOpen($0) })
                slots[i].failure = nil
            } catch {
                // Tried again before every sleep; said again only when the reason changes.
                let line = "\(service.name): cannot watch its descriptor: \(error); it runs on its deadlines only"
                if line != slots[i].failure { log(.error, line) }
                slots[i].failure = line
                slots[i].dirty = true
                failed = true
            }
        }
    }

    private func deadline(_ i: Int) -> Int64? { slots[i].dirty ? slots[i].service.deadline : slots[i].deadline }

    /// Hands a ready token to its service; false when it is not a service's.
    public func dispatch(token: UInt64, events: UInt32, now: Int64) -> Bool {
        let slot = Int(token >> 32) - 1
        guard slots.indices.contains(slot) else { return false }
        markRan(slot)
        slots[slot].service.ready(Int32(bitPattern: UInt32(truncatingIfNeeded: token)), events: events, now: now)
        flush()
        return true
    }

    /// Runs the services whose deadline is `now` or past, in registration order.
    public func runDue(now: Int64) {
        for i in slots.indices {
            guard let due = deadline(i), now >= due else { continue }
            markRan(i)
            slots[i].service.due(now: now)
            flush()
        }
    }

    /// The earliest deadline of all services.
    public var earliestDeadline: Int64? {
        if let known = earliestKnown { return known }
        var wake: Int64?
        for i in slots.indices { if let due = deadline(i) { wake = min(wake ?? due, due) } }
        return wake
    }

    /// Tells the subscribers of `happening`'s kind, then carries out what they asked.
    public func tell(_ happening: LoopHappening, now: Int64) {
        for slot in listeners[happening.kind.rawValue.trailingZeroBitCount] {
            markRan(slot)
            slots[slot].service.observe(happening, now: now)
        }
        flush()
    }

    /// Hands an event line to every service that takes it; `line` is built
    /// only when one does.
    public func publish(perFrame: Bool, _ line: () -> String) {
        var built: String?
        for slot in eventTakers where slots[slot].service.wantsEvents(perFrame: perFrame) {
            if built == nil { built = line() }
            markRan(slot)
            slots[slot].service.publish(eventLine: built!, perFrame: perFrame)
        }
    }

    /// What the service that serves `request` made of it (nil: no service
    /// serves it), with what it asked carried out after.
    public func handle(_ request: ControlRequest, now: Int64) -> RequestOutcome? {
        for i in slots.indices {
            guard let outcome = slots[i].service.handle(request, now: now) else { continue }
            markRan(i)
            flush()
            return outcome
        }
        return nil
    }

    /// Every service's fields of `status`.
    public func status(now: Int64, into fields: inout [String: JSONValue]) {
        for slot in slots {
            for (key, value) in slot.service.status(now: now) { fields[key] = value }
        }
    }

    /// Queues what a service asked; carried out once it has returned.
    func enqueue(_ ask: LoopAsk) { outbox.append(ask) }

    /// Carries out the outbox in order, what carrying it out makes services
    /// ask included. Outside any service: never from inside one.
    public func flush() {
        guard !flushing else { return }
        flushing = true
        defer { flushing = false }
        var next = 0
        while next < outbox.count {
            let ask = outbox[next]
            next += 1
            carryOut(ask)
        }
        outbox.removeAll(keepingCapacity: true)
    }

    /// Stops every service, the last registered first, and takes what they
    /// keep open out of the epoll set.
    public func stopAll() {
        for i in slots.indices.reversed() {
            let service = slots[i].service
            service.stop()
            slots[i].registrations.removeAll(from: epoll, stillOpen: { service.keepsOpen($0) })
        }
        outbox.removeAll()
    }
}
