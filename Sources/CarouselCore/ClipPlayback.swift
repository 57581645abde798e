/// Whether the carousel's current page is a clip, and whether it plays:
/// what the model needs to know of video (autoplay waits while one plays).
public enum VideoPresence: String, Sendable {
    /// The page is a picture (or nothing).
    case none
    /// A clip that does not play now: paused, ended, or not started.
    case stopped
    /// A clip that plays: autoplay waits for its end (`PauseReason.video`).
    case playing
}

/// When the clip on the carousel's page plays: a value with no I/O and no
/// clock (time comes in as an argument), like `ScreenPowerPolicy`. The
/// daemon tells it what the carousel shows (`View`) whenever that may have
/// changed and when the player reaches a clip's end; it answers with what
/// the player must do (`Action`).
///
/// * Resting on a clip, it plays from its start; a drag or any motion
///   pauses it (the frame on screen moves with the finger), and coming to
///   rest on it again plays on from there. Resting on another page ends it.
/// * `pause` pauses it; `play` plays on.
/// * The display switched off stops it: it starts again from its start
///   when the display is back.
/// * At its end: autoplay, if it runs, moves on (`finish`); otherwise the
///   clip starts again with `loop`, or its last frame stays.
/// * Autoplay waits at most `maxSeconds` of playing (pauses not counted).
public struct ClipPlayback: Sendable {
    public struct Settings: Equatable, Sendable {
        /// Start again at the end while autoplay is off.
        public var loop: Bool
        /// Autoplay waits at most this many seconds of playing.
        public var maxSeconds: Double

        public init(loop: Bool = false, maxSeconds: Double = 120) {
            self.loop = loop
            self.maxSeconds = maxSeconds
        }
    }

    /// What the carousel shows, as far as the player cares.
    public struct View: Equatable, Sendable {
        /// The item of the current page, when it is a clip.
        public var clip: Int?
        /// The carousel rests: no finger on it, nothing moves, no zoom.
        public var resting: Bool
        /// The display shows.
        public var displayOn: Bool
        /// A `pause` holds (autoplay's and the clip's).
        public var paused: Bool
        /// Autoplay would move on now but for the clip (on, and paused by nothing else).
        public var autoplayRuns: Bool

        public init(clip: Int?, resting: Bool, displayOn: Bool = true, paused: Bool = false, autoplayRuns: Bool = false) {
            self.clip = clip
            self.resting = resting
            self.displayOn = displayOn
            self.paused = paused
            self.autoplayRuns = autoplayRuns
        }

        /// The view of `carousel` at `time`, `isClip` saying which items are clips.
        public init(of carousel: Carousel, at time: Timestamp, displayOn: Bool, isClip: (Int) -> Bool) {
            let index = carousel.currentItemIndex(at: time)
            let status = carousel.autoplayStatus
            self.init(clip: carousel.lattice.count > 0 && isClip(index) ? index : nil,
                      resting: carousel.motionState == .idle && carousel.zoomScale(at: time) == 1,
                      displayOn: displayOn, paused: carousel.pausedBy.contains(.command),
                      autoplayRuns: status.enabled && status.pausedBy.allSatisfy { $0 == .video })
        }
    }

    public enum State: Equatable, Sendable {
        /// No clip (or the display is off).
        case idle
        /// Clip `item` plays.
        case playing(item: Int)
        /// Clip `item` holds its frame, and plays on from there.
        case paused(item: Int)
        /// Clip `item` came to its end; its last frame stays.
        case ended(item: Int)

        public var item: Int? {
            switch self {
            case .idle: nil
            case .playing(let i), .paused(let i), .ended(let i): i
            }
        }
    }

    /// What the player must do.
    public enum Action: Equatable, Sendable {
        /// Play clip `item` from its start.
        case start(item: Int)
        /// Hold the frame on screen.
        case pause
        /// Play on from the frame on screen.
        case resume
        /// Let the clip go (its first frame stands for it again).
        case stop
        /// Back to the start, playing (`loop`).
        case restart
        /// The clip is over: hold its last frame and let autoplay move on.
        case finish
    }

    public var settings: Settings
    public private(set) var state = State.idle
    /// Seconds played in this session before `since` (pauses not counted).
    private var played = 0.0
    /// When the current stretch of playing began.
    private var since: Timestamp?
    /// Whether autoplay waits for this clip (the cap applies).
    private var capped = false
    /// The end was handed to autoplay (`finish` while it ran): once per end.
    private var handedOver = false

    public init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// Seconds played in this session at `now`.
    public func playedSeconds(at now: Timestamp) -> Double {
        played + (since.map { max(0, now.seconds(since: $0)) } ?? 0)
    }

    /// When autoplay stops waiting (`maxSeconds` of playing), if it waits.
    public var deadline: Timestamp? {
        guard capped, let since else { return nil }
        return since.adding(seconds: max(0, settings.maxSeconds - played))
    }

    /// What the carousel shows now: what the player must do about it.
    public mutating func update(_ view: View, at now: Timestamp) -> [Action] {
        var actions: [Action] = []
        capped = view.autoplayRuns
        if !view.displayOn {
            if state != .idle { end(&actions) }
            return actions
        }
        // Resting elsewhere ends the session; moving keeps it (paused).
        if let item = state.item, view.resting, view.clip != item { end(&actions) }
        guard let clip = view.clip, view.resting else {
            if case .playing = state { pause(at: now, &actions) }
            return actions
        }
        switch state {
        case .idle:
            state = view.paused ? .paused(item: clip) : .playing(item: clip)
            played = 0
            since = view.paused ? nil : now
            actions.append(.start(item: clip))
            if view.paused { actions.append(.pause) }
        case .playing:
            if view.paused { pause(at: now, &actions) }
        case .paused:
            if !view.paused {
                state = .playing(item: clip)
                since = now
                actions.append(.resume)
            }
        case .ended:
            // Autoplay turned on after the end: it moves on now (once).
            if view.autoplayRuns, !view.paused, !handedOver {
                handedOver = true
                actions.append(.finish)
            }
        }
        if case .playing = state, let deadline, deadline <= now { finish(at: now, &actions) }
        return actions
    }

    /// The player showed the clip's last frame: autoplay moves on, or it
    /// plays again (`loop`), or its last frame stays.
    public mutating func clipEnded(_ view: View, at now: Timestamp) -> [Action] {
        guard case .playing = state else { return [] }
        var actions: [Action] = []
        capped = view.autoplayRuns
        if !view.autoplayRuns, settings.loop {
            played = 0
            since = now
            actions.append(.restart)
        } else {
            finish(at: now, &actions)
        }
        return actions
    }

    /// The clip cannot play on (a stream that errors midway): it is over,
    /// as at its end, but never started again (`loop` would fail again).
    public mutating func clipFailed(_ view: View, at now: Timestamp) -> [Action] {
        guard state.item != nil, state != .ended(item: state.item!) else { return [] }
        var actions: [Action] = []
        capped = view.autoplayRuns
        finish(at: now, &actions)
        return actions
    }

    /// The deadline came (`maxSeconds` of playing while autoplay waits).
    public mutating func fire(at now: Timestamp) -> [Action] {
        guard case .playing = state, let deadline, deadline <= now else { return [] }
        var actions: [Action] = []
        finish(at: now, &actions)
        return actions
    }

    private mutating func pause(at now: Timestamp, _ actions: inout [Action]) {
        guard case .playing(let item) = state else { return }
        played = playedSeconds(at: now)
        since = nil
        state = .paused(item: item)
        actions.append(.pause)
    }

    private mutating func finish(at now: Timestamp, _ actions: inout [Action]) {
        guard let item = state.item else { return }
        played = playedSeconds(at: now)
        since = nil
        state = .ended(item: item)
        handedOver = capped
        actions.append(.finish)
    }

    private mutating func end(_ actions: inout [Action]) {
        state = .idle
        handedOver = false
        played = 0
        since = nil
        actions.append(.stop)
    }

    /// The clip is the same but its item's index changed (files came or
    /// left before it): the session goes on under the new index.
    public mutating func renumber(to item: Int) {
        switch state {
        case .idle: break
        case .playing: state = .playing(item: item)
        case .paused: state = .paused(item: item)
        case .ended: state = .ended(item: item)
        }
    }

    /// Lets the session go without a word (the item is another file now, or
    /// the frames are made anew): the next look starts afresh.
    public mutating func forget() {
        state = .idle
        played = 0
        since = nil
        handedOver = false
    }

    /// What the model needs to know (`Carousel.setVideo`).
    public func presence(clipOnPage: Bool) -> VideoPresence {
        guard clipOnPage else { return .none }
        if case .playing = state { return .playing }
        return .stopped
    }
}
