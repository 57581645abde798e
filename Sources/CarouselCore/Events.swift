/// A delegate-style event of the carousel (SPEC.md section 2), named as
/// SwipeView/UIScrollView name them.
public enum CarouselEventKind: Equatable, Sendable {
    /// The visible offset changed; `offset` is the displayed offset (wrapped into `0..<count`).
    case didScroll(offset: Double)
    case currentItemIndexDidChange(index: Int)
    case willBeginDragging
    case didEndDragging(willDecelerate: Bool)
    case willBeginDecelerating
    case didEndDecelerating
    case didEndScrollingAnimation
    case didSelectItem(index: Int)
    case longPress(index: Int)
    /// The zoomed picture's scale changed (UIScrollView's `scrollViewDidZoom`).
    case didZoom(scale: Double)
    /// A pinch, double tap or `zoom` request came to rest at `scale`
    /// (`scrollViewDidEndZooming(_:with:atScale:)`), or the zoom was reset
    /// to 1 because another picture came.
    case didEndZooming(scale: Double)

    /// The event's name as written in SPEC.md.
    public var name: String {
        switch self {
        case .didScroll: "didScroll"
        case .currentItemIndexDidChange: "currentItemIndexDidChange"
        case .willBeginDragging: "willBeginDragging"
        case .didEndDragging: "didEndDragging"
        case .willBeginDecelerating: "willBeginDecelerating"
        case .didEndDecelerating: "didEndDecelerating"
        case .didEndScrollingAnimation: "didEndScrollingAnimation"
        case .didSelectItem: "didSelectItem"
        case .longPress: "longPress"
        case .didZoom: "didZoom"
        case .didEndZooming: "didEndZooming"
        }
    }

    /// The item index the event carries, if any.
    public var index: Int? {
        switch self {
        case .currentItemIndexDidChange(let i), .didSelectItem(let i), .longPress(let i): i
        default: nil
        }
    }

    /// Whether the event comes every frame of a motion (`didScroll` while
    /// the pages move, `didZoom` while a pinch or a zoom animation runs):
    /// the socket's subscribers get it, the log and MQTT do not.
    public var isPerFrame: Bool {
        switch self {
        case .didScroll, .didZoom: true
        default: false
        }
    }
}

/// An event and the instant it happened on the model's clock.
public struct CarouselEvent: Equatable, Sendable {
    public var time: Timestamp
    public var kind: CarouselEventKind
    public init(time: Timestamp, kind: CarouselEventKind) {
        self.time = time
        self.kind = kind
    }
}

/// Touch (or pointer-with-button) input in layout pixels. `id` tells fingers
/// apart: the first finger down owns the gesture, the others are ignored.
public enum TouchInput: Equatable, Sendable {
    case down(id: Int, at: Point)
    case move(id: Int, to: Point)
    case up(id: Int)
    /// The touch was cancelled (libinput cancel, device removed): settle as
    /// if lifted with zero velocity, never a tap.
    case cancel(id: Int)
}

/// A command from the control socket, the keyboard or a script.
public enum CarouselCommand: Equatable, Sendable {
    case next
    case previous
    case first
    case last
    /// Go to item `index`; `duration` in seconds, `nil` for the autoplay transition duration, 0 to jump.
    case goto(index: Int, duration: Double?)
    /// Autoplay off until `resume`, whatever `[autoplay] enabled` says.
    case pause
    /// Autoplay on: lifts a `pause`, and starts autoplay that `[autoplay]
    /// enabled = false` keeps off (until `pause`, or a new `enabled`).
    case resume
    /// Lifts a `pause` (the clip on screen plays again, autoplay is as
    /// `[autoplay] enabled` and the last `resume` left it).
    case play
    /// `pause` while autoplay is on, `resume` while it is off (Space,
    /// play/pause); with a clip on the page, `pause` or `play` for the clip.
    case togglePause
    /// Zoom the current picture to `scale` about its centre (clamped to
    /// `1...max_scale`); 1 resets it.
    case zoom(scale: Double)
}

/// Why a command was refused.
public enum CommandError: Error, Equatable, Sendable, CustomStringConvertible {
    case touchInProgress
    case noItems
    case indexOutOfRange(index: Int, count: Int)
    case zoomDisabled
    case carouselMoving

    public var description: String {
        switch self {
        case .touchInProgress: "the carousel is being touched; try again when the finger is lifted"
        case .noItems: "there are no images to scroll through"
        case .indexOutOfRange(let i, let n): "index \(i) is out of range: there are \(n) images (0...\(max(n - 1, 0)))"
        case .zoomDisabled: "zoom is off ([zoom] enabled = false)"
        case .carouselMoving: "the carousel is moving; try again when it rests"
        }
    }
}

/// Why autoplay does not run. Each source sets and clears on its own.
public enum PauseReason: String, Sendable, CaseIterable {
    /// A finger (or a pointer button) is on the screen.
    case touch
    /// `pause` from the control socket or the keyboard.
    case command
    /// The carousel is zoomed in.
    case zoom
    /// There is nothing to show.
    case noImages = "no_images"
    /// `autoscroll` drifts the carousel instead.
    case autoscroll
    /// The display is switched off: nothing would be seen.
    case display
    /// A clip on the current page plays: autoplay waits for its end.
    case video
}

/// The gesture and motion state, as `carouseld simulate` and `status` report it.
public enum MotionState: String, Sendable {
    case idle, tracking, dragging, decelerating, settling, animating
}

public struct AutoplayStatus: Equatable, Sendable {
    /// Autoplay is on: `[autoplay] enabled` as `pause` and `resume` last
    /// changed it. What a user switches; it runs when nothing holds it too.
    public var enabled: Bool
    public var running: Bool
    public var pausedBy: [PauseReason]
    /// When the next automatic advance starts; `nil` while none is scheduled
    /// (paused, moving, stopped at the end, or fewer than two pages).
    public var next: Timestamp?

    public init(enabled: Bool, running: Bool, pausedBy: [PauseReason], next: Timestamp?) {
        self.enabled = enabled
        self.running = running
        self.pausedBy = pausedBy
        self.next = next
    }
}

/// The model's observable state at an instant.
public struct CarouselSnapshot: Equatable, Sendable {
    /// The displayed offset in items (wrapped into `0..<count` with wrap).
    public var offset: Double
    public var index: Int
    public var page: Int
    public var state: MotionState
    public var autoplay: AutoplayStatus
    /// The zoomed picture's scale (1: nothing zoomed).
    public var zoom: Double

    public init(offset: Double, index: Int, page: Int, state: MotionState, autoplay: AutoplayStatus, zoom: Double = 1) {
        self.offset = offset
        self.index = index
        self.page = page
        self.state = state
        self.autoplay = autoplay
        self.zoom = zoom
    }
}

/// What the daemon must do after the model changed, as `Carousel.takeEffects()`
/// reports it (STYLE.md: results go out as effects). Each field describes the
/// changes since the previous `takeEffects()`.
///
/// How a display loop carries them out, after every call into the model
/// (input, command, timer, new items, reload):
///
/// 1. `let e = model.takeEffects()`;
/// 2. start decoding `e.prefetch` (not on the loop);
/// 3. `e.moving == true`: draw every vblank until an update says
///    `moving == false`; `e.needsFrame`: draw one frame (it is also set when
///    motion starts or stops, so the last frame shows where it stopped);
/// 4. report `indexChanged`, `selected`, `longPressed` where they go (the
///    events carry the same, with their exact times, for subscribers);
/// 5. arm the timer for `model.nextDeadline` and call `advance(to:)` when
///    it fires, then take effects again.
public struct CarouselEffects: Equatable, Sendable {
    /// What is on screen is stale: the shown offset changed, the items or the
    /// layout changed, or motion started or stopped. Draw a frame.
    public var needsFrame = false
    /// `true` when the offset started changing with time (a settle,
    /// momentum, bounce, programmatic animation or drift is in flight: keep
    /// drawing frames), `false` when it stopped, `nil` when neither happened
    /// since the last take.
    public var moving: Bool?
    /// The current item index, when it changed since the last take (the
    /// index of the latest `currentItemIndexDidChange`).
    public var indexChanged: Int?
    /// The item a tap selected (the latest `didSelectItem`), if any.
    public var selected: Int?
    /// The item a long press landed on (the latest `longPress`), if any.
    public var longPressed: Int?
    /// The items visible where a motion that started is heading (the target
    /// page of a settle or an animation, where momentum or a bounce comes to
    /// rest), leading first: decode them ahead. Empty when no motion started.
    public var prefetch: [Int] = []
    /// Which way the content last moved, when that changed since the last
    /// take: +1 forward (towards higher offsets), -1 back; with wrap the
    /// shorter way round. Only motion and dragging count (a carousel coming
    /// to rest past the wrap seam folds its offset back, which is no
    /// motion). Decoding ahead looks that way.
    public var heading: Int?

    public init(needsFrame: Bool = false, moving: Bool? = nil, indexChanged: Int? = nil, selected: Int? = nil,
                longPressed: Int? = nil, prefetch: [Int] = [], heading: Int? = nil) {
        self.needsFrame = needsFrame
        self.moving = moving
        self.indexChanged = indexChanged
        self.selected = selected
        self.longPressed = longPressed
        self.prefetch = prefetch
        self.heading = heading
    }
}

/// A crossfade on screen (`Carousel.crossfade(at:)`): the frame is the one
/// at `from` with the one at `to` over it at opacity `fraction`.
public struct Crossfade: Equatable, Sendable {
    /// Unwrapped offsets, items.
    public var from: Double
    public var to: Double
    /// How much of `to` shows, 0 to 1.
    public var fraction: Double

    public init(from: Double, to: Double, fraction: Double) {
        self.from = from
        self.to = to
        self.fraction = fraction
    }
}
