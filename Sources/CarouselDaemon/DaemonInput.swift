import CarouselCore
import CarouselInput
import CarouselInputService
import CarouselPlatform

/// Input and commands into the model: a routed input event (touch, a key's
/// command, a touchscreen coming or going), a touch at its own time stamp,
/// a command now.
extension Daemon {
    /// Carries out one routed input event (what the input service asks:
    /// `LoopAsk.input`).
    public func carryOut(_ routed: RoutedInput) {
        if takenByDisplayPower(routed) { return }
        switch routed {
        case let .touch(input, time):
            feed(input, at: time)
        case let .command(command):
            if let error = perform(command) { log(.info, "key ignored: \(error)") }
        case let .presence(present, time):
            sensePresence(present, at: time)
        case let .touchscreenAdded(info, size):
            log(.info, InputRouter.added(info))
            relayout(touchscreen: .touchscreen(id: info.id, name: info.name, size: size))
        case let .touchscreenRemoved(info):
            log(.info, InputRouter.removed(info))
            model.forget(device: info.id)
            if case .touchscreen(info.id, _, _)? = layout.touchscreen { relayout(touchscreen: .some(nil)) }
        case let .note(line):
            log(.info, line)
        }
    }

    /// Feeds a touch (layout pixels) at its own time stamp (µs).
    public func feed(_ input: TouchInput, at time: Int64) {
        power.modelSaw(input)
        if case .move = input { frames.pacer.fingerMoved(at: time) }
        deliver(model.handle(input, at: Timestamp(microseconds: time), device: device(of: input)))
    }

    /// The key under which the gesture stage learns a panel's sample rate and
    /// noise: the pointer apart from the touchscreen (its input ids are the
    /// seat's slots, which do not say which device; the layout follows one
    /// touchscreen, the latest added).
    private func device(of input: TouchInput) -> Int {
        if input.touchID == InputRouter.pointerID { return -1 }
        if case .touchscreen(let device, _, _)? = layout.touchscreen { return device }
        return 0
    }

    /// Carries out a command now; the model's refusal, if it refused.
    public func perform(_ command: CarouselCommand) -> CommandError? {
        let now = Timestamp(microseconds: clock())
        // What happened up to now is delivered first, also when the command
        // is refused (a refusal returns no events).
        deliver(model.advance(to: now))
        switch model.perform(command, at: now) {
        case .success(let events):
            deliver(events)
            return nil
        case .failure(let error):
            return error
        }
    }
}
