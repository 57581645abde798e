import CarouselLoop
import CarouselDisplay
import CarouselPlatform

/// The display's own descriptor, on backends whose frames reach the screen
/// later (DRM's page-flip events): a completed flip frees the pacer for the
/// next frame. Follows the backend the daemon holds now (one that went away
/// and came back is a new descriptor).
final class DisplayFlipService: LoopService {
    let name = "display"
    private unowned let daemon: Daemon

    init(daemon: Daemon) { self.daemon = daemon }

    var interests: [EpollInterest] {
        daemon.backend.fileDescriptor.map { [EpollInterest(fd: $0, serial: daemon.backendGeneration)] } ?? []
    }

    func ready(_ fd: Int32, events: UInt32, now: Int64) {
        do {
            if try daemon.backend.dispatch() { daemon.ask(.flipCompleted) }
        } catch {
            log(.error, "display: \(error)")
        }
    }
}
