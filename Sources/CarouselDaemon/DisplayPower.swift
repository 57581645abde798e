import CarouselControl
import CarouselCore
import CarouselDisplay
import CarouselPlatform

/// The display's power as the daemon keeps it: off, nothing is drawn or
/// presented, autoplay is paused (the model's `display` pause source) and
/// the loop wakes only for input, commands and what it must (systemd's
/// watchdog, idle control clients).
struct DisplayPowerState {
    /// The display was switched off and not on again yet.
    var isOff = false
    /// Touch ids whose events the model never sees: the touch that woke the
    /// display (and any finger that joined it), and fingers on the screen
    /// when it went off (the model had them cancelled). Removed on up or cancel.
    var swallowed: Set<Int> = []
    /// Fingers the model holds (down, not yet up or cancelled).
    var fingersDown: Set<Int> = []
    /// When the display was woken (µs, the waking input's own time stamp),
    /// and by what, until the first frame after it is on screen.
    var wokeAt: Int64?
    var wokenBy = ""
    /// Who decides: the idle rule (`auto`), or `display on|off` until
    /// `display auto` (a waking touch or key gives it back to the rule).
    var mode = DisplayPowerSetting.auto
    /// The last touch, key or command (µs): the idle rule counts from it.
    var lastActivity: Int64 = 0
    /// When the display went off (µs), for `[power] wake = next`.
    var offSince: Int64?
    /// `[power] schedule` says off now, and when it next changes (µs).
    var scheduledOff = false
    var nextScheduleChange: Int64?
    /// The schedule was applied at least once (at start it is applied even
    /// when it says "on", which is what the display already is).
    var scheduleApplied = false
}

/// Why the display was switched: said in the log and in the events.
public enum DisplayPowerCause: String, Sendable {
    /// `display ...` on the socket; `idle` is `[power] idle_off`, `schedule` `[power] schedule`.
    case command, touch, key, idle, schedule
}

extension Daemon {
    /// Whether the display is switched off (`display off`).
    public var displayIsOff: Bool { power.isOff }

    /// Switches the display off or on (`display off|on`, a waking touch or
    /// key). Off: the display goes dark, fingers on it are cancelled, no
    /// frame is drawn. On: the display is lit, looked at again (a monitor
    /// may have dropped off while in standby), and a whole frame of what
    /// the model shows is drawn. Asking for the state it is in does nothing.
    /// Returns the display's refusal; the carousel runs on either way, in
    /// the state it was in.
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
        power.isOff = !on
        backlightFollowsDisplay(on: on)
        // A touch or a key that wakes the display gives it back to the rule.
        if cause == .touch || cause == .key { power.mode = .auto }
        if on {
            power.wokeAt = time ?? now
            power.wokenBy = cause.rawValue
            log(.info, "display on (\(cause.rawValue))")
            wakeOnTheNextPicture(now: now)
            power.offSince = nil
            // The buffers' contents may be lost while dark: a whole new frame.
            displayWasRemodeset()
            displayChanged()
        } else {
            power.wokeAt = nil
            power.offSince = now
            // A finger on the screen now must not drag, page or select in the dark.
            for id in power.fingersDown.sorted() { feed(.cancel(id: id), at: now) }
            power.swallowed.formUnion(power.fingersDown)
            log(.info, "display off (\(cause.rawValue))")
        }
        deliver(model.setDisplayOff(!on, at: Timestamp(microseconds: now)))
        publishEvent(on ? "displayOn" : "displayOff", ["t": .int(Int(uptimeMilliseconds(now))), "by": .string(cause.rawValue)])
        return nil
    }

    /// `[power] wake = next`: a display that was off for at least autoplay's
    /// interval, with autoplay running but for the display, wakes on the next
    /// picture (a jump, as a frame that had stayed on would have moved on).
    /// Without wrap, the last picture stays.
    private func wakeOnTheNextPicture(now: Int64) {
        guard config.power.wake == .next, config.autoplay.enabled, album.count > 1,
              let since = power.offSince, now - since >= Int64(config.autoplay.interval * 1_000_000) else { return }
        let snap = model.snapshot(at: Timestamp(microseconds: now))
        guard snap.autoplay.pausedBy.allSatisfy({ $0 == .display }) else { return }
        var next = snap.index + travel
        if config.carousel.wrap {
            next = (next % album.count + album.count) % album.count
        } else if !(0..<album.count).contains(next) {
            return
        }
        if case .success(let events) = model.perform(.goto(index: next, duration: 0), at: Timestamp(microseconds: now)) {
            deliver(events)
        }
    }

    /// `display on|off|auto` from the socket. `on` and `off` hold until
    /// `auto`; `auto` switches nothing itself: the idle rule counts from now.
    public func setDisplayPower(_ setting: DisplayPowerSetting) -> DisplayError? {
        let now = clock()
        power.lastActivity = now
        if setting != .auto, let error = setDisplayPower(on: setting == .on, by: .command, at: now) { return error }
        power.mode = setting
        // Back to the rules: the schedule's word holds at once.
        if setting == .auto { applySchedule(now: now, reassert: true) }
        return nil
    }

    /// When the idle rule switches the display off (µs), if it will:
    /// `[power] idle_off` after the last touch, key or command, while the
    /// display is on and the rule decides.
    var idleOffDeadline: Int64? {
        // Outside the schedule's on-times a woken display goes off again
        // after idle_off, or a few minutes where idle_off is never.
        let minutes = config.power.idleOff > 0 ? config.power.idleOff : power.scheduledOff ? Self.nightWakeMinutes : 0
        guard minutes > 0, !power.isOff, power.mode == .auto else { return nil }
        return power.lastActivity + Int64((minutes * 60_000_000).rounded())
    }

    /// The idle rule at `now`: off once its deadline passed, unless a
    /// finger is still on the screen (that counts as use).
    func applyIdleRule(now: Int64) {
        guard let due = idleOffDeadline, now >= due else { return }
        if !power.fingersDown.isEmpty {
            power.lastActivity = now
            return
        }
        if setDisplayPower(on: false, by: .idle, at: now) != nil {
            // Refused (logged): try again after another idle spell, not on
            // every pass of the loop (the deadline has passed: it would spin).
            power.lastActivity = now
        }
    }

    /// A request that changes something counts as use for the idle rule;
    /// reading (`status`, `list`, a screenshot, events) does not, or a
    /// monitoring script would keep the display on for ever.
    func noteRequest(_ request: ControlRequest) {
        switch request {
        case .next, .prev, .goto, .pause, .resume, .reload, .set, .brightness, .zoom: power.lastActivity = clock()
        case .display: break  // setDisplayPower(_:) notes it
        case .status, .list, .screenshot, .subscribe, .version, .help: break
        }
    }

    /// Input while the display is off, and the rest of the touch that woke
    /// it: a touch or a key wakes the display and is swallowed, the whole
    /// touch from down to up (it neither pages nor selects). Returns `true`
    /// when `routed` was taken here and goes no further.
    func takenByDisplayPower(_ routed: RoutedInput) -> Bool {
        switch routed {
        case let .touch(input, time):
            power.lastActivity = max(power.lastActivity, time)
            let id = input.touchID
            if case .down = input, power.isOff || !power.swallowed.isEmpty {
                // A finger joining the waking touch belongs to it.
                if power.isOff { setDisplayPower(on: true, by: .touch, at: time) }
                power.swallowed.insert(id)
                return true
            }
            guard power.swallowed.contains(id) else { return false }
            switch input {
            case .up, .cancel: power.swallowed.remove(id)
            case .down, .move: break
            }
            return true
        case .command:
            power.lastActivity = clock()
            guard power.isOff else { return false }
            setDisplayPower(on: true, by: .key)
            return true
        case .touchscreenAdded, .touchscreenRemoved, .note:
            return false
        }
    }

    /// Keeps the fingers the model holds, which going off cancels.
    func noteFinger(_ input: TouchInput) {
        switch input {
        case .down(let id, _): power.fingersDown.insert(id)
        case .up(let id), .cancel(let id): power.fingersDown.remove(id)
        case .move: break
        }
    }

    /// A frame reached the screen: the first after waking says how long the
    /// wake took, from the waking input's time stamp.
    func noteFrameAfterWake() {
        guard let woke = power.wokeAt else { return }
        power.wokeAt = nil
        log(.info, "display: picture back on screen \((clock() - woke) / 1000) ms after the waking \(power.wokenBy)")
    }
}

extension TouchInput {
    /// The finger (or pointer) this event belongs to.
    var touchID: Int {
        switch self {
        case .down(let id, _), .move(let id, _), .up(let id), .cancel(let id): id
        }
    }
}
