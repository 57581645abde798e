import CarouselLoop
import CarouselPlatform

/// Services behind the port on a loop of their own, without a daemon: what
/// they ask is handed to `onAsk` once they return, as the daemon's
/// interpreter would be (tests of one service at a time).
final class PortHarness {
    let loop: LoopServices

    init(onAsk: @escaping (LoopAsk) -> Void) throws {
        loop = LoopServices(epoll: try Epoll(), executor: try LoopExecutor())
        loop.carryOut = onAsk
    }

    /// `fd` of `service` is ready, as the loop says it: then what it asked is carried out.
    func ready(_ service: LoopService, _ fd: Int32, events: UInt32, now: Int64 = 0) {
        service.ready(fd, events: events, now: now)
        loop.flush()
    }
}
