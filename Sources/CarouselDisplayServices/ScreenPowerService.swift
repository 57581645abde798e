import CarouselLoop

/// The screen's power on the loop: its timer. The policy (idle off, dim,
/// presence, `display on|off|auto`), the schedule and the backlight are the
/// daemon's model of the screen; this service's deadline is theirs, read
/// through the view, and when it comes the loop has the daemon apply them
/// (`LoopAsk.screenPowerDue`).
public final class ScreenPowerService: LoopService {
    public let name = "screen power"
    /// The policy's and the schedule's deadlines change with what the daemon does.
    public let deadlineIsVolatile = true
    private let context: ServiceContext

    public init(context: ServiceContext) { self.context = context }

    public var deadline: Int64? { context.view.screenPowerDeadline }

    public func due(now: Int64) { context.ask(.screenPowerDue(at: now)) }
}
