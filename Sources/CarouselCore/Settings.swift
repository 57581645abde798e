/// Where an item sits in the viewport when the carousel rests on it
/// (SwipeViewAlignment).
public enum Alignment: String, Sendable, CaseIterable {
    /// The item is centred on the viewport: neighbours peek in on both sides.
    case center
    /// The item starts at the leading edge of the viewport.
    case edge
}

/// The extent of one item along the scroll axis.
public enum ItemSize: Equatable, Sendable {
    /// A fraction (0, 1] of the viewport's extent along the axis.
    case fraction(Double)
    /// An absolute extent in layout pixels.
    case pixels(Double)

    /// The largest item in pixels: as large as the largest screen.
    public static let maximumPixels = Viewport.maximumSide

    /// The INI form: a value up to 1.0 is a fraction of the screen, above it
    /// pixels (at most `maximumPixels`).
    public init?(configValue value: Double) {
        guard value.isFinite, value > 0, value <= Self.maximumPixels else { return nil }
        self = value <= 1.0 ? .fraction(value) : .pixels(value)
    }
}

/// The carousel's layout and scrolling behaviour (SPEC.md section 2).
public struct CarouselSettings: Equatable, Sendable {
    /// Infinite loop: offsets are taken modulo the item count.
    public var wrap = true
    /// The scroll axis is vertical instead of horizontal.
    public var vertical = false
    /// Stop on page boundaries.
    public var paging = true
    /// Items moved by one page.
    public var itemsPerPage = 1
    /// With paging and no wrap, the last page ends at the last item (no blank space).
    public var truncateFinalPage = false
    public var alignment = Alignment.center
    public var itemSize = ItemSize.fraction(1.0)
    /// Gap between items, layout pixels.
    public var spacing = 0.0
    /// Rubber-band past the ends when not wrapping.
    public var bounces = true
    /// The user can drag; programmatic scrolling works either way.
    public var scrollEnabled = true
    /// Momentum decay per millisecond when not paging (UIScrollView: 0.998 normal, 0.99 fast).
    public var decelerationRate = 0.998
    /// Constant drift in items per second (SwipeView.autoscroll); 0 is off.
    public var autoscroll = 0.0
    /// The item shown at start.
    public var startIndex = 0
    /// Seconds after the last interaction (touch, key or command) when the
    /// carousel goes back to `startIndex`; 0 never does.
    public var idleReturn = 0.0
    /// Distance in layout pixels a finger must travel before a drag starts.
    public var touchSlop = 10.0

    public init() {}
}

public enum AutoplayDirection: String, Sendable, CaseIterable {
    case forward, backward
}

/// What autoplay does at the last page when the carousel does not wrap.
public enum AutoplayAtEnd: String, Sendable, CaseIterable {
    /// Animate back to the first page.
    case rewind
    /// Stay on the last page.
    case stop
}

/// How automatic and commanded changes of picture look (the `[autoplay]
/// effect` key). A finger always slides the pictures.
public enum TransitionEffect: String, Sendable, CaseIterable {
    /// The pictures move along the axis (SwipeView's animated scroll).
    case slide
    /// The next picture fades in over the one on screen, neither moving.
    case crossfade
    /// The next picture replaces the one on screen at once.
    case cut
}

/// Automatic advancing (SPEC.md section 4). Durations are in seconds.
public struct AutoplaySettings: Equatable, Sendable {
    public var enabled = true
    /// Seconds between advances, counted from rest.
    public var interval = 3.0
    /// Duration of one automatic advance.
    public var transition = 0.5
    /// How long the first image stays; `nil` means `interval`.
    public var startDelay: Double? = nil
    /// Delay after a user interaction ends (the carousel is at rest) before autoplay resumes.
    public var resumeDelay = 2.0
    public var direction = AutoplayDirection.forward
    public var atEnd = AutoplayAtEnd.rewind
    /// How automatic and commanded changes look; drags always slide.
    public var effect = TransitionEffect.slide

    public init() {}

    /// The delay before the first advance.
    public var effectiveStartDelay: Double { startDelay ?? interval }
}

/// The viewport in layout (logical, after rotation) pixels.
public struct Viewport: Equatable, Sendable {
    /// The largest screen side carouseld lays out, pixels: what KMS drives
    /// (the display modes and offscreen sizes accepted), and well inside what
    /// the decoder and pixman can scale to (32767).
    public static let maximumSide = 16384.0

    public var width: Double
    public var height: Double
    public init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }
}

/// A position in layout pixels, origin at the top-left corner.
public struct Point: Equatable, Sendable {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}
