import CarouselLoop
import CarouselPlatform

/// The display's own descriptor, on backends whose frames reach the screen
/// later (DRM's page-flip events): when it is readable the loop has the
/// backend read its events (`LoopAsk.displayEvents`), and a completed flip
/// frees the pacer for the next frame. Follows the display the daemon holds
/// now (one that went away and came back is a new descriptor, told apart by
/// its generation even when the number is the old one's).
public final class DisplayFlipService: LoopService {
    public let name = "display"
    private let context: ServiceContext

    public init(context: ServiceContext) { self.context = context }

    public var interests: [EpollInterest] {
        context.view.displayDescriptor.map { [EpollInterest(fd: $0.fd, serial: $0.generation)] } ?? []
    }

    public func ready(_ fd: Int32, events: UInt32, now: Int64) { context.ask(.displayEvents) }
}
