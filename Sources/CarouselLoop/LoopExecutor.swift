import CarouselPlatform
import Dispatch
import Synchronization

/// The one way work leaves the loop and comes back: `run` does the work on
/// a queue of its own and hands the result to the completion on the loop
/// (swift-nio's `NIOThreadPool.runIfActive`, then the event loop); a
/// `doorbell` lets a long-lived worker (the decoder) say from its thread
/// that it has results, which the loop then collects itself. Both wake the
/// loop through one eventfd.
public final class LoopExecutor: LoopService {
    public let name = "off-loop work"
    private let wakeup: Wakeup
    /// Results handed back by workers, and the doorbells rung: shared with their threads.
    fileprivate final class Handoff: Sendable {
        let finished = Mutex<[(job: UInt64, result: any Sendable)]>([])
        let rung = Mutex<Set<Int>>([])
        let wakeup: Wakeup
        init(_ wakeup: Wakeup) { self.wakeup = wakeup }
    }
    private let handoff: Handoff
    /// On the loop only: what to do with each job's result, and each doorbell's handler.
    private var completions: [UInt64: (any Sendable) -> Void] = [:]
    private var nextJob: UInt64 = 1
    private var bells: [() -> Void] = []

    public init() throws(SystemCallError) {
        wakeup = try Wakeup()
        handoff = Handoff(wakeup)
    }

    public var interests: [EpollInterest] { [EpollInterest(fd: wakeup.fd.raw)] }

    /// Called after a completion of `run` (`LoopServices` asks every
    /// service for its descriptors again: a completion may have changed any).
    var afterCompletion: () -> Void = {}

    /// Runs `work` on `queue`, then `completion` with its result on the loop.
    /// A completion still waiting when the daemon stops is not called.
    public func run<Result: Sendable>(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Result,
                               then completion: @escaping (Result) -> Void) {
        run(on: queue, work, then: completion, thenAll: true)
    }

    /// `run`, the completion told to `afterCompletion` or not (a service's
    /// context marks only its own service).
    func run<Result: Sendable>(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Result,
                               then completion: @escaping (Result) -> Void, thenAll: Bool) {
        let job = nextJob
        nextJob += 1
        completions[job] = { [unowned self] in
            completion($0 as! Result)
            if thenAll { afterCompletion() }
        }
        let handoff = handoff
        queue.async {
            let result = work()
            handoff.finished.withLock { $0.append((job, result)) }
            handoff.wakeup.signal()
        }
    }

    /// A bell a worker thread rings (any number of times) to have a handler
    /// called on the loop, once per wake-up however often it rang.
    public struct Doorbell: Sendable {
        fileprivate let index: Int
        private let handoff: Handoff
        fileprivate init(index: Int, handoff: Handoff) {
            self.index = index
            self.handoff = handoff
        }
        /// Safe from any thread.
        public func ring() {
            handoff.rung.withLock { _ = $0.insert(index) }
            handoff.wakeup.signal()
        }
    }

    /// A new bell; `answer(_:with:)` says what it does on the loop (until
    /// then a ring does nothing).
    public func doorbell() -> Doorbell {
        bells.append({})
        return Doorbell(index: bells.count - 1, handoff: handoff)
    }

    public func answer(_ bell: Doorbell, with handler: @escaping () -> Void) { bells[bell.index] = handler }

    public func ready(_ fd: Int32, events: UInt32, now: Int64) {
        wakeup.acknowledge()
        let rung = handoff.rung.withLock { all in
            defer { all = [] }
            return all
        }
        for bell in rung.sorted() { bells[bell]() }
        let finished = handoff.finished.withLock { all in
            defer { all = [] }
            return all
        }
        for (job, result) in finished { completions.removeValue(forKey: job)?(result) }
    }

    /// Calls what workers handed back so far, as a wake-up would (tests, `render`).
    public func collect() { ready(wakeup.fd.raw, events: EpollInterest.readable, now: 0) }

    public func stop() { completions = [:] }
}
