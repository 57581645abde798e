import CarouselLoop
import CarouselPlatform

/// The wall clock being set (NTP, by hand): the services that follow local
/// time (the schedule, the clock on screen) look again (`LoopAsk.wallClockSet`).
public final class WallClockService: LoopService {
    public let name = "wall clock"
    private let watch: any ClockChangeSource
    private let context: ServiceContext

    /// Nil, with one line, when the kernel does not say (the schedule may
    /// then run late after a clock change).
    public convenience init?(context: ServiceContext) {
        do {
            self.init(watch: try ClockChangeWatch(), context: context)
        } catch {
            log(.warning, "the wall clock's changes are not watched (\(error)): [power] schedule may run late after one")
            return nil
        }
    }

    /// `watch` says when the clock was set (tests give one of their own:
    /// stepping the machine's clock would wake every daemon of a full run).
    init(watch: any ClockChangeSource, context: ServiceContext) {
        self.watch = watch
        self.context = context
    }

    public var interests: [EpollInterest] { [EpollInterest(fd: watch.fd.raw)] }

    public func ready(_ fd: Int32, events: UInt32, now: Int64) {
        guard watch.clockWasSet() else { return }
        log(.info, "the wall clock was set: [power] schedule and [overlay] clock looked at again")
        context.ask(.wallClockSet(at: now))
    }
}

/// A descriptor that becomes readable when the wall clock may have been
/// set, and says whether it was (`ClockChangeWatch`: the kernel's timerfd).
protocol ClockChangeSource: AnyObject {
    var fd: FileDescriptor { get }
    func clockWasSet() -> Bool
}

extension ClockChangeWatch: ClockChangeSource {}
