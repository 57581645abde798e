import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselDisplay
import CarouselInput
import CarouselLoop
import CarouselPlatform
import CarouselPresence
import CarouselPresenceWords

/// The screen's power as the daemon keeps it: `ScreenPowerPolicy` (its
/// rules over time), the backlight it dims, and a wake being timed. What the
/// policy decides (off, on, dim, undim) the daemon carries out through its
/// display and backlight; its deadline is on the loop through
/// `ScreenPowerService` (CarouselDisplayServices), which reads it through the
/// view (`screenPowerDeadline`) and asks for it when it comes
/// (`LoopAsk.screenPowerDue`). Off, nothing is drawn or presented, autoplay
/// is paused (the model's `display` pause source) and the loop wakes only
/// for input, commands and what it must.
struct ScreenPower {
    var policy: ScreenPowerPolicy
    /// The panel's backlight, if there is one to drive (BacklightControl.swift):
    /// the policy dims what it lights.
    var backlight = BacklightState() {
        didSet { policy.backlight(litAt: backlight.device == nil ? nil : backlight.lit) }
    }
    /// When the display was woken (µs, the waking input's own time stamp),
    /// and by what, until the first frame after it is on screen.
    var wokeAt: Int64?
    var wokenBy = ""

    init(_ config: Configuration, at now: Int64) {
        policy = ScreenPowerPolicy(rules: ScreenPowerPolicy.Rules(config), at: now)
    }
}

extension ScreenPowerPolicy.Rules {
    /// The rules `config`'s `[power]` section sets.
    init(_ config: Configuration) {
        self.init(idleOffMinutes: config.power.idleOff, dimAfterMinutes: config.power.dimAfter,
                  dimLevel: config.power.dimLevel, presenceWakesAtNight: config[PresenceSettings.self].atNight == .wake)
    }
}

extension Daemon {
    /// The screen's power policy. Its deadline, and what others read of it
    /// (the clock shows only on a lit screen), are asked for again after a change.
    var power: ScreenPowerPolicy {
        get { screenPower.policy }
        set {
            screenPower.policy = newValue
            services.invalidate()
        }
    }

    /// The panel's backlight (kept with the policy, which dims it).
    var backlight: BacklightState {
        get { screenPower.backlight }
        set { screenPower.backlight = newValue }
    }

    /// Whether the display is switched off (`display off`).
    public var displayIsOff: Bool { power.isOff }
    public var secretOnScreen: Bool { frames.secretMeant || frames.pairingStamp != nil }

    /// When the idle rule switches the display off (µs), if it will.
    var idleOffDeadline: Int64? { power.idleOffDeadline }

    /// When the backlight dims (µs), if it will.
    var dimDeadline: Int64? { power.dimDeadline }

    /// When the screen's power must be looked at next (the view's
    /// `screenPowerDeadline`): the rules' deadline or the schedule's first
    /// word, whichever comes first. What is due at once is due at `.min`,
    /// not at the clock's reading now: the loop compares deadlines with the
    /// instant its pass began, which a running clock has already left behind.
    public var screenPowerDeadline: Int64? {
        let now = clock()
        // In place, not through `power`'s copy: this is read before every sleep.
        var due = screenPower.policy.deadline(now: now)
        if let first = scheduleFirstDue(now: now) { due = min(due ?? first, first) }
        return due.map { $0 <= now ? .min : $0 }
    }

    /// The screen power's deadline came (`LoopAsk.screenPowerDue`): the
    /// schedule's word, then what the idle and dim rules decide at `now`.
    func screenPowerDue(now: Int64) {
        applySchedule(now: now)
        for action in power.due(now: now) { carryOut(action, at: now) }
    }

    /// A new configuration (`apply`, before the services are told of it):
    /// the rules read `[power]` again, a changed schedule is looked at
    /// again, and presence that holds the display holds it under the new rules.
    func screenPowerFollows(_ old: Configuration, now: Int64) {
        power.rules = ScreenPowerPolicy.Rules(config)
        if config.power.schedule != old.power.schedule { applySchedule(now: now, recompute: true) }
        if let action = power.presenceReasserted() { carryOut(action, at: now) }
    }

    /// Carries out what the policy decided.
    func carryOut(_ action: ScreenPowerPolicy.Action, at now: Int64) {
        switch action {
        case let .off(cause), let .on(cause):
            let on = if case .on = action { true } else { false }
            // Refused (logged): the rules try again after another idle spell,
            // not on every pass of the loop (the deadline has passed: it would spin).
            if setDisplayPower(on: on, by: cause, at: now) != nil { power.refused(at: now) }
        case .dim:
            backlightDims()
        case .undim:
            backlightUndims()
        }
    }

    /// Switches the display off or on (`display off|on`, a waking touch or
    /// key, the rules). Off: the display goes dark, fingers on it are
    /// cancelled, no frame is drawn. On: the display is lit, looked at again
    /// (a monitor may have dropped off while in standby), and a whole frame
    /// of what the model shows is drawn. Asking for the state it is in does
    /// nothing. Returns the display's refusal; the carousel runs on either
    /// way, in the state it was in.
    @discardableResult
    public func setDisplayPower(on: Bool, by cause: DisplayPowerCause, at time: Int64? = nil) -> DisplayError? {
        guard on == power.isOff else { return nil }
        let now = clock()
        do {
            try backend.setPower(on: on)
        } catch {
            log(.error, "display: cannot switch \(backend.summary) \(on ? "on" : "off") (\(cause.rawValue)): \(error);"
                + " it stays \(on ? "off" : "on") and the carousel runs on")
            return error
        }
        let offSince = power.offSince
        let cancelled = power.switched(on: on, by: cause, at: now)
        backlightFollowsDisplay(on: on)
        if on {
            screenPower.wokeAt = time ?? now
            screenPower.wokenBy = cause.rawValue
            log(.info, "display on (\(cause.rawValue))")
            wakeOnTheNextPicture(offSince: offSince, now: now)
            // The buffers' contents may be lost while dark: a whole new frame.
            displayWasRemodeset()
            displayChanged()
        } else {
            screenPower.wokeAt = nil
            // A finger on the screen now must not drag, page or select in the dark.
            for id in cancelled { feed(.cancel(id: id), at: now) }
            log(.info, "display off (\(cause.rawValue))")
        }
        deliver(model.setDisplayOff(!on, at: Timestamp(microseconds: now)))
        publishEvent(on ? .displayOn : .displayOff, ["t": .int(Int(uptimeMilliseconds(now))), "by": .string(cause.rawValue)])
        return nil
    }

    /// `[power] wake = next`: a display that was off for at least autoplay's
    /// interval, with autoplay running but for the display, wakes on the next
    /// picture (a jump, as a frame that had stayed on would have moved on).
    private func wakeOnTheNextPicture(offSince: Int64?, now: Int64) {
        guard config.power.wake == .next, let since = offSince,
              now - since >= Int64(config.autoplay.interval * 1_000_000) else { return }
        deliver(model.advanceAfterDark(direction: frames.travel, at: Timestamp(microseconds: now)))
    }

    /// `display on|off|auto` from the socket. `on` and `off` hold until
    /// `auto`; `auto` switches nothing itself: the idle rule counts from now.
    public func setDisplayPower(_ setting: DisplayPowerSetting) -> DisplayError? {
        let now = clock()
        power.used(at: now)
        if setting != .auto, let error = setDisplayPower(on: setting == .on, by: .command, at: now) { return error }
        power.set(setting, at: now)
        // Back to the rules: the schedule's word holds at once.
        if setting == .auto {
            applySchedule(now: now, reassert: true)
            if let action = power.presenceReasserted() { carryOut(action, at: now) }
        }
        return nil
    }

    /// A presence sensor's word at `time` (its edge's own time stamp, µs,
    /// CLOCK_MONOTONIC): logged and published when it changes; someone
    /// coming may wake the display (no touch to swallow: nobody touched).
    func sensePresence(_ present: Bool, at time: Int64) {
        guard present != power.present else { return }
        let action = power.presence(present, at: time)
        log(.info, present ? "presence: someone is there" : "presence: nobody is there")
        publishEvent(present ? .didDetectPresence : .didLosePresence, ["t": .int(Int(uptimeMilliseconds(time)))])
        if let action { carryOut(action, at: time) }
    }

    /// The sensor went or changed: nobody is taken to be there.
    func presenceSensorGone() {
        let wasPresent = power.present
        power.presenceRemoved(at: clock())
        if wasPresent { publishEvent(.didLosePresence, ["t": .int(Int(uptimeMilliseconds(clock())))]) }
    }

    /// A request that changes something counts as use for the idle rule;
    /// reading (`status`, `list`, a screenshot, events) does not, or a
    /// monitoring script would keep the display on for ever.
    func noteRequest(_ request: ControlRequest) {
        switch request {
        case .next, .prev, .goto, .pause, .play, .resume, .reload, .set, .keep, .forget, .hide, .unhide, .brightness, .zoom:
            power.used(at: clock())
        case .display: break  // setDisplayPower(_:) notes it
        case .status, .list, .screenshot, .screenshotPixels, .subscribe, .subscribeChanges, .version, .help: break
        // A capability's request (the house pushing the weather) is not someone at the frame.
        case .declared: break
        }
    }

    /// Input while the display is off, and the rest of the touch that woke
    /// it: a touch or a key wakes the display and is swallowed, the whole
    /// touch from down to up (it neither pages nor selects). Returns `true`
    /// when `routed` was taken here and goes no further.
    func takenByDisplayPower(_ routed: RoutedInput) -> Bool {
        switch routed {
        case let .touch(input, time):
            switch power.touch(input, at: time) {
            case .model: return false
            case .swallowed: return true
            case .wakes:
                setDisplayPower(on: true, by: .touch, at: time)
                return true
            }
        case .command:
            guard power.key(at: clock()) else { return false }
            setDisplayPower(on: true, by: .key)
            return true
        case .touchscreenAdded, .touchscreenRemoved, .note, .presence:
            return false
        }
    }

    /// A frame reached the screen: the first after waking says how long the
    /// wake took, from the waking input's time stamp.
    func noteFrameAfterWake() {
        guard let woke = screenPower.wokeAt else { return }
        screenPower.wokeAt = nil
        log(.info, "display: picture back on screen \((clock() - woke) / 1000) ms after the waking \(screenPower.wokenBy)")
    }
}

extension LoopEvent.Name {
    /// The display was switched on or off (`by`: what did it).
    static let displayOn = LoopEvent.Name("displayOn")
    static let displayOff = LoopEvent.Name("displayOff")
}
