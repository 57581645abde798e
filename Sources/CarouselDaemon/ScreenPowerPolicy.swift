import CarouselControl
import CarouselCore

/// Why the display was switched: said in the log and in the events.
public enum DisplayPowerCause: String, Sendable {
    /// `display ...` on the socket; `idle` is `[power] idle_off`, `schedule` `[power] schedule`.
    /// `presence`: `[power] presence`, someone came.
    case command, touch, key, idle, schedule, presence
}

/// The screen's power as one policy with no I/O and no clock (like
/// `FramePacer`): use of the frame (touches, keys, requests that change
/// something) and what the schedule says come in with their time; the next
/// deadline and the actions to carry out (off, on, dim, undim) come out.
/// The daemon switches the display and the backlight and reports back what
/// it did (`switched`, `refused`); tests drive it on a manual clock.
///
/// The rules (SPEC: screen power): `[power] idle_off` minutes after the last
/// use the display goes off, unless a finger rests on the screen (that is
/// use); `dim_after` minutes after it the backlight dims to `dim_level`,
/// lit again at the next use; outside the schedule's on-times it is off,
/// and a touch that wakes it there keeps it on for `idle_off` (or a few
/// minutes where idle_off is never). `display on|off` holds until `display
/// auto` or a waking touch or key gives it back to the rules. A presence
/// sensor wakes the display (no touch is swallowed: nobody touched) and
/// holds it on, undimmed; idle_off and dim_after count from when presence
/// ends; outside the on-times presence does nothing unless
/// `presence_at_night = wake`; it never overrides `display on|off`.
public struct ScreenPowerPolicy: Equatable, Sendable {
    /// The settings the rules read (`[power]`).
    public struct Rules: Equatable, Sendable {
        /// Minutes without use before the display goes off; 0: never.
        public var idleOffMinutes: Double = 0
        /// Minutes without use before the backlight dims; 0: never.
        public var dimAfterMinutes: Double = 0
        /// The dimmed level, percent.
        public var dimLevel = 10
        /// `[power] presence_at_night = wake`: presence wakes and holds the
        /// display outside the schedule's on-times too.
        public var presenceWakesAtNight = false
        public init(idleOffMinutes: Double = 0, dimAfterMinutes: Double = 0, dimLevel: Int = 10,
                    presenceWakesAtNight: Bool = false) {
            self.idleOffMinutes = idleOffMinutes
            self.dimAfterMinutes = dimAfterMinutes
            self.dimLevel = dimLevel
            self.presenceWakesAtNight = presenceWakesAtNight
        }
    }

    /// What the daemon is to do.
    public enum Action: Equatable, Sendable {
        case off(DisplayPowerCause)
        case on(DisplayPowerCause)
        /// The backlight to `dim_level`.
        case dim
        /// The backlight back to its lit level.
        case undim
    }

    /// How long a display woken by a touch outside the schedule's on-times
    /// stays on when `[power] idle_off` is 0 (never): without it the first
    /// touch of the night would light the room until the morning.
    public static let nightWakeMinutes = 5.0

    public var rules: Rules
    /// The display was switched off and not on again yet.
    public private(set) var isOff = false
    /// Who decides: the rules (`auto`), or `display on|off` until `display
    /// auto` (a waking touch or key gives it back to the rules).
    public private(set) var mode = DisplayPowerSetting.auto
    /// The last use (µs): the idle and dim rules count from it.
    public private(set) var lastActivity: Int64
    /// When the display went off (µs), for `[power] wake = next`.
    public private(set) var offSince: Int64?
    /// The backlight's lit level (percent), while one is driven; nil: none.
    public var litLevel: Int?
    /// Dimmed by `dim_after`.
    public private(set) var dimmed = false
    /// `[power] schedule` says off now, and when it next changes (µs).
    public private(set) var scheduledOff = false
    public private(set) var nextScheduleChange: Int64?
    /// The schedule was applied at least once (at start it is applied even
    /// when it says "on", which is what the display already is).
    public private(set) var scheduleApplied = false
    /// Fingers the model holds (down, not yet up or cancelled): going off
    /// cancels them, and while one rests the rules wait.
    public private(set) var fingersDown: Set<Int> = []
    /// A presence sensor says someone is there, and since when (µs) it said
    /// the last change (nil: no word from a sensor yet).
    public private(set) var present = false
    public private(set) var presenceChanged: Int64?
    /// Touch ids the model never sees: the touch that woke the display (and
    /// any finger that joined it). Removed on up or cancel.
    private var swallowed: Set<Int> = []

    public init(rules: Rules, at now: Int64) {
        self.rules = rules
        lastActivity = now
    }

    // MARK: Use

    /// A request or a key that changes something, at `now`.
    public mutating func used(at now: Int64) { lastActivity = now }

    /// What a touch does: goes to the model, is swallowed (the touch that
    /// wakes the display, from down to up: it neither pages nor selects), or
    /// wakes the display and is swallowed.
    public enum TouchVerdict: Equatable, Sendable { case model, swallowed, wakes }

    public mutating func touch(_ input: TouchInput, at time: Int64) -> TouchVerdict {
        lastActivity = max(lastActivity, time)
        let id = input.touchID
        if case .down = input, isOff || !swallowed.isEmpty {
            // A finger joining the waking touch belongs to it.
            swallowed.insert(id)
            return isOff ? .wakes : .swallowed
        }
        guard swallowed.contains(id) else { return .model }
        switch input {
        case .up, .cancel: swallowed.remove(id)
        case .down, .move: break
        }
        return .swallowed
    }

    /// A touch the model was given: the fingers it holds, which going off
    /// cancels and while one rests the rules wait.
    public mutating func modelSaw(_ input: TouchInput) {
        switch input {
        case .down(let id, _): fingersDown.insert(id)
        case .up(let id), .cancel(let id): fingersDown.remove(id)
        case .move: break
        }
    }

    /// A key at `now`: true when it wakes the display (and goes no further).
    public mutating func key(at now: Int64) -> Bool {
        lastActivity = now
        return isOff
    }

    // MARK: Presence

    /// Whether presence counts now: in the day, or at night with
    /// `presence_at_night = wake`.
    private var presenceCounts: Bool { !scheduledOff || rules.presenceWakesAtNight }

    /// Presence holds the display on (and lit): someone is there and it counts.
    public var heldByPresence: Bool { present && presenceCounts }

    /// A presence sensor's word at `now` (its edge's time): someone came
    /// (wakes a dark display while the rules decide and presence counts) or
    /// left (the idle and dim rules count from now). Returns the action to
    /// carry out, if any. Repeating the same word changes nothing.
    public mutating func presence(_ isPresent: Bool, at now: Int64) -> Action? {
        guard isPresent != present else { return nil }
        present = isPresent
        presenceChanged = now
        // Arriving and leaving are both use: the rules count from the later.
        lastActivity = max(lastActivity, now)
        guard isPresent, isOff, mode == .auto, presenceCounts else { return nil }
        return .on(.presence)
    }

    /// What presence asks now that the rules decide again (`display auto`,
    /// a new `presence_at_night`): someone there lights a dark display.
    public func presenceReasserted() -> Action? {
        heldByPresence && isOff && mode == .auto ? .on(.presence) : nil
    }

    /// No sensor any more (or a new one): nobody is taken to be there; the
    /// idle rule counts from `now`.
    public mutating func presenceRemoved(at now: Int64) {
        if present { lastActivity = max(lastActivity, now) }
        present = false
        presenceChanged = nil
    }

    // MARK: Deadlines

    /// When the idle rule switches the display off (µs), if it will: while
    /// the display is on and the rules decide.
    public var idleOffDeadline: Int64? {
        // Outside the schedule's on-times a woken display goes off again
        // after idle_off, or a few minutes where idle_off is never.
        let minutes = rules.idleOffMinutes > 0 ? rules.idleOffMinutes : scheduledOff ? Self.nightWakeMinutes : 0
        guard minutes > 0, !isOff, mode == .auto, !heldByPresence else { return nil }
        return lastActivity + Self.microseconds(minutes)
    }

    /// When the backlight dims (µs), if it will: while lit, undimmed and the rules decide.
    public var dimDeadline: Int64? {
        guard let lit = litLevel, !dimmed, rules.dimAfterMinutes > 0, rules.dimLevel < lit, !isOff, mode == .auto,
              !heldByPresence else { return nil }
        return lastActivity + Self.microseconds(rules.dimAfterMinutes)
    }

    /// Whether a dimmed backlight is to be lit again: used since it dimmed,
    /// a rule that no longer dims, or the display gone dark.
    private func undimDue(now: Int64) -> Bool {
        guard dimmed else { return false }
        return rules.dimAfterMinutes == 0 || now < lastActivity + Self.microseconds(rules.dimAfterMinutes)
            || mode != .auto || isOff || rules.dimLevel >= (litLevel ?? 0) || heldByPresence
    }

    /// The earliest instant the rules act by themselves (µs).
    public func deadline(now: Int64) -> Int64? {
        if undimDue(now: now) { return now }
        return [idleOffDeadline, dimDeadline, nextScheduleChange].compactMap { $0 }.min()
    }

    /// What the idle and dim rules do at `now`. While a finger rests on the
    /// screen they wait: that counts as use.
    public mutating func due(now: Int64) -> [Action] {
        var actions: [Action] = []
        if let due = idleOffDeadline, now >= due {
            // Off, the dim rule has nothing to do (the next look lights it again, dark).
            if fingersDown.isEmpty { return [.off(.idle)] }
            lastActivity = now
        }
        if undimDue(now: now) {
            dimmed = false
            actions.append(.undim)
        } else if let due = dimDeadline, now >= due {
            if fingersDown.isEmpty {
                dimmed = true
                actions.append(.dim)
            } else {
                lastActivity = now
            }
        }
        return actions
    }

    // MARK: The schedule

    /// Whether the schedule is to be looked at now: at its next change, the
    /// first time, or when asked (`recompute`: a reload, the wall clock set).
    public func scheduleDue(now: Int64, recompute: Bool) -> Bool {
        recompute || !scheduleApplied || nextScheduleChange.map { now >= $0 } ?? false
    }

    /// What the schedule says at `now` (off or on, and when it next changes).
    /// `reassert` (`display auto`) makes the display what it says even when
    /// that did not change.
    public mutating func schedule(off: Bool, nextChange: Int64?, now: Int64, reassert: Bool = false) -> Action? {
        let changed = off != scheduledOff || !scheduleApplied
        nextScheduleChange = nextChange
        scheduledOff = off
        scheduleApplied = true
        guard changed || reassert, mode == .auto else { return nil }
        if !off, isOff { lastActivity = now }  // the idle rule counts from the morning
        if off, present, rules.presenceWakesAtNight {
            // Someone is there as the night begins: the display stays on
            // until they leave and idle_off has passed.
            lastActivity = max(lastActivity, now)
            return isOff ? .on(.presence) : nil
        }
        return off ? .off(.schedule) : .on(.schedule)
    }

    /// No schedule any more: a display it switched off comes on.
    public mutating func scheduleRemoved() -> Action? {
        defer {
            scheduledOff = false
            nextScheduleChange = nil
        }
        return scheduledOff && mode == .auto && isOff ? .on(.schedule) : nil
    }

    // MARK: What the daemon did

    /// `display on|off|auto` at `now`: on and off hold until auto. Counts as use.
    public mutating func set(_ setting: DisplayPowerSetting, at now: Int64) {
        lastActivity = now
        mode = setting
    }

    /// The display was switched at `now`. A touch or a key that wakes it
    /// gives it back to the rules. Going off returns the fingers on the
    /// screen: the model is to see them cancelled (a finger must not drag,
    /// page or select in the dark).
    @discardableResult
    public mutating func switched(on: Bool, by cause: DisplayPowerCause, at now: Int64) -> [Int] {
        isOff = !on
        // Dark, a backlight is powered down, not dimmed; waking is use: never dimmed.
        dimmed = false
        if cause == .touch || cause == .key { mode = .auto }
        if on {
            offSince = nil
            return []
        }
        offSince = now
        return fingersDown.sorted()
    }

    /// The display refused to switch (logged): the rules try again after
    /// another idle spell, not on every pass of the loop.
    public mutating func refused(at now: Int64) { lastActivity = now }

    /// A backlight driven at `percent` from now on (opened, or `brightness
    /// N`), not dimmed; nil: none driven any more.
    public mutating func backlight(litAt percent: Int?) {
        litLevel = percent
        dimmed = false
    }

    static func microseconds(_ minutes: Double) -> Int64 { Int64((minutes * 60_000_000).rounded()) }
}

extension TouchInput {
    /// The finger (or pointer) this event belongs to.
    var touchID: Int {
        switch self {
        case .down(let id, _), .move(let id, _), .up(let id), .cancel(let id): id
        }
    }
}
