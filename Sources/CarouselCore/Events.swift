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
        }
    }

    /// The item index the event carries, if any.
    public var index: Int? {
        switch self {
        case .currentItemIndexDidChange(let i), .didSelectItem(let i), .longPress(let i): i
        default: nil
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
    case pause
    case resume
    case togglePause
}

/// Why a command was refused.
public enum CommandError: Error, Equatable, Sendable, CustomStringConvertible {
    case touchInProgress
    case noItems
    case indexOutOfRange(index: Int, count: Int)

    public var description: String {
        switch self {
        case .touchInProgress: "the carousel is being touched; try again when the finger is lifted"
        case .noItems: "there are no images to scroll through"
        case .indexOutOfRange(let i, let n): "index \(i) is out of range: there are \(n) images (0...\(max(n - 1, 0)))"
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
}

/// The gesture and motion state, as `carouseld simulate` and `status` report it.
public enum MotionState: String, Sendable {
    case idle, tracking, dragging, decelerating, settling, animating
}

public struct AutoplayStatus: Equatable, Sendable {
    public var running: Bool
    public var pausedBy: [PauseReason]
    /// When the next automatic advance starts; `nil` while none is scheduled
    /// (paused, moving, stopped at the end, or fewer than two pages).
    public var next: Timestamp?

    public init(running: Bool, pausedBy: [PauseReason], next: Timestamp?) {
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

    public init(offset: Double, index: Int, page: Int, state: MotionState, autoplay: AutoplayStatus) {
        self.offset = offset
        self.index = index
        self.page = page
        self.state = state
        self.autoplay = autoplay
    }
}
