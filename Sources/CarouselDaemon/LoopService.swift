import CarouselConfig
import CarouselPlatform

/// One source on the daemon's loop: the descriptors it wants watched, its
/// next deadline, what it does when one is ready or the deadline comes,
/// how it takes what happened elsewhere on the loop (a new configuration, a
/// new layout, the display's power), and how it stops. The loop knows kinds
/// of source, never features (systemd's sd-event: every source is one
/// `sd_event_source` with a handler; wayland's `wl_event_loop`).
///
/// What a service asks of the daemon (a frame, a command for the model, an
/// input, a change of the display's power, an event to publish, a reload,
/// to stop) it asks through `Daemon`'s interpreter (`Daemon.ask`, in Daemon.swift),
/// from inside one of these calls: they all run on the loop's thread.
///
/// A new source is one file: a type conforming to this, and one line in
/// `Daemon.registerServices`.
protocol LoopService: AnyObject {
    /// What it is, for log lines about the loop itself.
    var name: String { get }
    /// The descriptors to watch now, and for what. Asked before every sleep;
    /// the loop adds, modifies and forgets registrations to match
    /// (`EpollRegistrations`), so a service only says what it wants.
    var interests: [EpollInterest] { get }
    /// Whether `fd`, no longer in `interests`, is still open (it must then
    /// be taken out of the epoll set by hand). Default: no, a descriptor a
    /// service stops listing was closed.
    func keepsOpen(_ fd: Int32) -> Bool
    /// When it must run by itself (µs of the loop's clock), if it must: an
    /// instant, never the clock's reading when asked (a pass compares with
    /// the instant it began, which a running clock has already left); what
    /// is due at once is due at `.min`.
    var deadline: Int64? { get }
    /// A descriptor from `interests` is ready (`events`: epoll's bits).
    func ready(_ fd: Int32, events: UInt32, now: Int64)
    /// Its deadline came (or passed) at `now`.
    func due(now: Int64)
    /// Something happened on the loop that a service may follow.
    func observe(_ happening: LoopHappening, now: Int64)
    /// The daemon stops: say goodbye and close.
    func stop()
    /// Whether it takes the event lines the daemon publishes now (the per-frame
    /// ones, `didScroll` and `didZoom`, only when `perFrame`): a line nobody
    /// takes is never built.
    func wantsEvents(perFrame: Bool) -> Bool
    /// An event line (the control socket's JSON), for a service that wants them.
    func publish(eventLine: String)
}

extension LoopService {
    var interests: [EpollInterest] { [] }
    func keepsOpen(_ fd: Int32) -> Bool { false }
    var deadline: Int64? { nil }
    func ready(_ fd: Int32, events: UInt32, now: Int64) {}
    func due(now: Int64) {}
    func observe(_ happening: LoopHappening, now: Int64) {}
    func stop() {}
    func wantsEvents(perFrame: Bool) -> Bool { false }
    func publish(eventLine: String) {}
}

/// What a service asks of the daemon beyond a call it answers at once
/// (`Daemon.ask`, the interpreter in Daemon.swift).
enum LoopAsk {
    /// What is on screen is stale: draw one frame.
    case frame
    /// Stop the loop (SIGTERM, SIGINT), with the reason for the log.
    case stop(reason: String)
    /// Read the configuration file again (SIGHUP).
    case reload
    /// List the album again (the folder changed).
    case rescanAlbum
    /// A presented frame reached the screen.
    case flipCompleted
    /// The display's device went away (why, for the log).
    case displayGone(why: String)
    /// A device appeared while the display was away: try to open it again.
    case displayMayBeBack
    /// The display was plugged or unplugged: look at it again.
    case displayChanged
}

/// What happened on the loop, told to every service (`Daemon.tell`).
enum LoopHappening {
    /// A reload or `set` applied a new configuration (`old`: the one before).
    case configured(old: Configuration)
    /// The carousel was laid out again (a new configuration, panel or touchscreen).
    case laidOut
    /// The first frame since start was handed to the display.
    case firstFramePresented
    /// The wall clock was set (NTP, by hand).
    case wallClockSet
    /// Something that may show in `status` changed (an event, a request).
    case stateChanged
    /// The model's effects were carried out, or the album changed: the
    /// picture on screen may be another one, or the carousel at rest.
    case modelChanged
    /// The decoder finished pictures (or found some broken).
    case decoded
}

/// The services on one loop: each has a slot, and its descriptors' epoll
/// tokens carry the slot above the descriptor's number, so a ready
/// descriptor goes to its service without a table of features.
final class LoopServices {
    private struct Slot {
        let service: LoopService
        var registrations = EpollRegistrations()
        /// The last failure to watch one of its descriptors, said once.
        var failure: String?
    }
    private var slots: [Slot] = []
    private let epoll: Epoll
    /// The token of a descriptor that belongs to no service (the loop's timer).
    static let loopToken: UInt64 = 0

    init(epoll: Epoll) { self.epoll = epoll }

    /// Adds `service`; it is asked for its interests before the next sleep.
    func register(_ service: LoopService) {
        slots.append(Slot(service: service))
    }

    /// The first service of type `T`, if one is registered.
    func first<T: LoopService>(_ type: T.Type) -> T? {
        for slot in slots { if let s = slot.service as? T { return s } }
        return nil
    }

    private static func token(slot: Int, fd: Int32) -> UInt64 {
        UInt64(slot + 1) << 32 | UInt64(UInt32(bitPattern: fd))
    }

    /// Brings the epoll set in line with every service's interests. A
    /// service whose descriptor cannot be watched is said once per failure,
    /// and the loop runs on without it.
    func synchronize() {
        for i in slots.indices {
            let service = slots[i].service
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
            }
        }
    }

    /// Hands a ready token to its service; false when it is not a service's.
    func dispatch(token: UInt64, events: UInt32, now: Int64) -> Bool {
        let slot = Int(token >> 32) - 1
        guard slots.indices.contains(slot) else { return false }
        slots[slot].service.ready(Int32(bitPattern: UInt32(truncatingIfNeeded: token)), events: events, now: now)
        return true
    }

    /// Runs the services whose deadline is `now` or past, in registration order.
    func runDue(now: Int64) {
        for slot in slots {
            if let due = slot.service.deadline, now >= due { slot.service.due(now: now) }
        }
    }

    /// The earliest deadline of all services.
    var earliestDeadline: Int64? {
        var wake: Int64?
        for slot in slots { if let due = slot.service.deadline { wake = min(wake ?? due, due) } }
        return wake
    }

    func tell(_ happening: LoopHappening, now: Int64) {
        for slot in slots { slot.service.observe(happening, now: now) }
    }

    /// Hands an event line to every service that takes it; `line` is built
    /// only when one does.
    func publish(perFrame: Bool, _ line: () -> String) {
        var built: String?
        for slot in slots where slot.service.wantsEvents(perFrame: perFrame) {
            if built == nil { built = line() }
            slot.service.publish(eventLine: built!)
        }
    }

    /// Stops every service, the last registered first, and takes what they
    /// keep open out of the epoll set.
    func stopAll() {
        for i in slots.indices.reversed() {
            let service = slots[i].service
            service.stop()
            slots[i].registrations.removeAll(from: epoll, stillOpen: { service.keepsOpen($0) })
        }
    }
}
