import CarouselControl
import CarouselPlatform

/// One source on the daemon's loop: the descriptors it wants watched, its
/// next deadline, what it does when one is ready or the deadline comes, the
/// happenings it subscribes to, and how it stops. The loop knows kinds of
/// source, never features (systemd's sd-event: every source is one
/// `sd_event_source` with a handler; wayland's `wl_event_loop`).
///
/// A service never sees the daemon: it reads what it may through its
/// `ServiceContext` (`context.view`: the configuration, the model, the pages,
/// the layout) and asks for what it wants done through `context.ask` (a
/// frame, a model command, a stamp, an event, the display's power, work off
/// the loop). The loop carries the asks out after the service returns
/// (sd-event's deferred sources), never from inside it: no service calls
/// another, and the loop never calls a service from inside a service.
///
/// A new source is one room (or file) with a type conforming to this, and
/// one registration line in the daemon's `registerServices`.
public protocol LoopService: AnyObject {
    /// What it is, for log lines about the loop itself.
    var name: String { get }
    /// The happenings it is told of (`observe`); nothing else is told to it.
    /// Read once, at registration.
    var subscriptions: LoopHappening.Kinds { get }
    /// The descriptors to watch now, and for what. Asked again after the
    /// service ran (a descriptor, its deadline, a happening, a request, work
    /// it handed off coming back) or the loop changed what it reads; the loop
    /// adds, modifies and forgets registrations to match
    /// (`EpollRegistrations`), so a service only says what it wants.
    var interests: [EpollInterest] { get }
    /// Whether `fd`, no longer in `interests`, is still open (it must then
    /// be taken out of the epoll set by hand). Default: no, a descriptor a
    /// service stops listing was closed.
    func keepsOpen(_ fd: Int32) -> Bool
    /// When it must run by itself (µs of the loop's clock), if it must: an
    /// instant, never the clock's reading when asked (a pass compares with
    /// the instant it began, which a running clock has already left); what
    /// is due at once is due at `.min`. Asked when `interests` is.
    var deadline: Int64? { get }
    /// Whether its deadline depends on more than what it does itself (the
    /// screen's power: the daemon's policy and schedule): it is then asked
    /// for before every sleep. Read once, at registration.
    var deadlineIsVolatile: Bool { get }
    /// A descriptor from `interests` is ready (`events`: epoll's bits).
    func ready(_ fd: Int32, events: UInt32, now: Int64)
    /// Its deadline came (or passed) at `now`.
    func due(now: Int64)
    /// A happening it subscribed to.
    func observe(_ happening: LoopHappening, now: Int64)
    /// The daemon stops: say goodbye and close.
    func stop()
    /// Whether it ever takes event lines (read once, at registration): only
    /// those that do are asked `wantsEvents`.
    var takesEvents: Bool { get }
    /// Whether it takes the event lines the daemon publishes now (the per-frame
    /// ones, `didScroll` and `didZoom`, only when `perFrame`): a line nobody
    /// takes is never built.
    func wantsEvents(perFrame: Bool) -> Bool
    /// An event line (the control socket's JSON), for a service that wants them.
    func publish(eventLine: String)
    /// The same, saying whether it is a per-frame one (`didScroll`,
    /// `didZoom`); by default `publish(eventLine:)`.
    func publish(eventLine: String, perFrame: Bool)
    /// Carries out a request addressed to the capability it serves
    /// (`overlay text`), or nil when the request is not its. Asked after the
    /// request's grant was checked.
    func handle(_ request: ControlRequest, now: Int64) -> RequestOutcome?
    /// Its fields of `status` (`"video"`, `"overlay"`), read when a status is made.
    func status(now: Int64) -> [String: JSONValue]
}

extension LoopService {
    public var subscriptions: LoopHappening.Kinds { [] }
    public var interests: [EpollInterest] { [] }
    public func keepsOpen(_ fd: Int32) -> Bool { false }
    public var deadline: Int64? { nil }
    public var deadlineIsVolatile: Bool { false }
    public func ready(_ fd: Int32, events: UInt32, now: Int64) {}
    public func due(now: Int64) {}
    public func observe(_ happening: LoopHappening, now: Int64) {}
    public func stop() {}
    public var takesEvents: Bool { false }
    public func wantsEvents(perFrame: Bool) -> Bool { false }
    public func publish(eventLine: String) {}
    public func publish(eventLine: String, perFrame: Bool) { publish(eventLine: eventLine) }
    public func handle(_ request: ControlRequest, now: Int64) -> RequestOutcome? { nil }
    public func status(now: Int64) -> [String: JSONValue] { [:] }
}

/// What a service made of a request it serves.
public enum RequestOutcome: Equatable {
    /// Done: the reply is the status, as for the model's requests.
    case done
    /// Refused or failed: the error reply's text.
    case failed(String)
    /// Done, and the reply is these fields (not the status).
    case answered([String: JSONValue])
}
