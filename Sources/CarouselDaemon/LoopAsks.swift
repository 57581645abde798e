import CarouselControl
import CarouselCore
import CarouselLoop
import CarouselPlatform

/// The interpreter of what services ask through their port: each `LoopAsk`
/// is carried out here, once the service that asked has returned
/// (`LoopServices.flush`).
extension Daemon {
    /// Carries out what a service asks (the interpreter of `LoopAsk`), once
    /// the service that asked has returned (`LoopServices.flush`).
    public func ask(_ ask: LoopAsk) {
        let now = clock()
        switch ask {
        case .frame:
            frames.needsFrame = true
            return
        case let .model(command):
            perform(command, now: now)
        case let .event(event):
            publishEvent(event.name, event.fields)
        case .stateChanged:
            tell(.stateChanged)
        case let .stamp(slot, stamp):
            // What the frame path shows: no service reads it.
            frames.setStamp(slot, stamp)
            return
        case let .secret(meant):
            frames.secretMeant = meant
            return
        case let .picture(key, picture):
            frames.framed = picture.map { (key, $0) }
            frames.needsFrame = true
            return
        case let .framing(key, framing, largestScale):
            frames.setFraming(key, framing, largestScale: largestScale)
            return
        case let .presence(present, time):
            sensePresence(present, at: time)
        case .presenceSensorGone:
            presenceSensorGone()
        case let .startOn(page):
            startOn(page)
        case let .wallClockSet(at):
            wallClockWasSet(now: at)
        case let .stop(reason):
            log(.info, "\(reason), stopping")
            running = false
        case .reload:
            _ = reload()
        case .rescanAlbum:
            rescanAlbum()
        case let .displayGone(why):
            displayWentAway(why)
        case .displayMayBeBack:
            displayMayBeBack()
        case .displayChanged:
            displayChanged()
        case let .input(routed):
            carryOut(routed)
        case .displayEvents:
            do {
                // Nothing completed: nothing anyone reads changed.
                guard try backend.dispatch() else { return }
            } catch {
                log(.error, "display: \(error)")
                return
            }
            // A flip a frame: what it changes that services read (the first
            // frame on screen) is told, and tells invalidate.
            frames.flipCompleted()
            return
        case let .screenPowerDue(at):
            screenPowerDue(now: at)

        // MARK: - The control socket and MQTT

        case let .request(request, grant, reply):
            reply(answer(request, grant: grant))
        case let .screenshot(destination, completion):
            screenshot(to: destination, then: completion)
        }
        // What services read may have changed with it: their deadlines and
        // descriptors are asked for again.
        services.invalidate()
    }

    private func perform(_ command: ModelAsk, now: Int64) {
        let at = Timestamp(microseconds: now)
        switch command {
        case let .video(presence):
            guard model.video != presence else { return }
            deliver(model.setVideo(presence, at: at))
        case .videoEnded:
            deliver(model.videoEnded(at: at))
        case let .upcomingReady(ready):
            guard ready != model.isUpcomingReady else { return }
            deliver(model.setUpcomingReady(ready, at: at))
        }
    }
}
