import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselImaging
import CarouselInput
import CarouselPlatform
import CarouselRender

/// What a service asks of the loop (`ServiceContext.ask`), carried out in
/// order once the service has returned.
public enum LoopAsk {
    /// What is on screen is stale: draw one frame.
    case frame
    /// Stop the loop (SIGTERM, SIGINT), with the reason for the log.
    case stop(reason: String)
    /// Read the configuration file again (SIGHUP).
    case reload
    /// List the album again (the folder changed).
    case rescanAlbum
    /// The display's device went away (why, for the log).
    case displayGone(why: String)
    /// A device appeared while the display was away: try to open it again.
    case displayMayBeBack
    /// The display was plugged or unplugged: look at it again.
    case displayChanged
    /// A command for the model (its events are carried out as any others).
    case model(ModelAsk)
    /// An event line for the socket's subscribers and MQTT's event topic.
    case event(LoopEvent)
    /// Something `status` shows changed (MQTT's state topic follows).
    case stateChanged
    /// A stamp that stays put over the pictures (nil: take it away).
    case stamp(StampSlot, SceneStamp?)
    /// A secret (a pairing code) is meant for the screen from now on (false:
    /// no longer). `LoopView.secretOnScreen` holds from this ask, not only
    /// once its stamp is drawn (off the loop, a moment later): a screenshot
    /// asked in between would otherwise be taken.
    case secret(Bool)
    /// The picture to show for the page `key` instead of its decoded one
    /// (a playing clip's frame); nil: the decoded one again.
    case picture(key: PageKey, DecodedImage?)
    /// How the picture of page `key` is framed: a part of it scaled over its
    /// whole box (Ken Burns), or nil for the whole picture again. The house
    /// draws it through its zoom path, from a decode of the picture sharp
    /// enough for `largestScale` (the most the framing will magnify it) once
    /// one is ready. A pinch zoom of the same page wins over it.
    case framing(key: PageKey, Framing?, largestScale: Double)
    /// A presence sensor's word at `time` (µs, CLOCK_MONOTONIC: its edge's own stamp).
    case presence(Bool, at: Int64)
    /// The presence sensor went or changed: nobody is taken to be there.
    case presenceSensorGone
    /// Start on page `page` instead of `start_index` (before the first frame).
    case startOn(page: Int)

    // MARK: - The loop's own services
    /// The wall clock was set at loop time `at` (NTP, by hand).
    case wallClockSet(at: Int64)

    // MARK: - Input and the display

    /// What an input device said, routed: a touch, a key's command, the
    /// presence key, a touchscreen coming or going (the daemon carries it
    /// out: the screen's power first, which may swallow it, then the model).
    case input(RoutedInput)
    /// The display's descriptor is readable: the backend reads its events
    /// (a completed flip frees the pacer for the next frame).
    case displayEvents
    /// The screen power's deadline came (`at`: the pass's instant): the
    /// schedule's word, then what the idle and dim rules decide.
    case screenPowerDue(at: Int64)

    // MARK: - The control socket and MQTT

    /// A request from a way in holding `grant` (a socket client, an MQTT
    /// command): the daemon answers it as the grant allows, and the loop
    /// hands the reply to `reply` (through `ServiceContext.request`, which
    /// marks the asking service as run).
    case request(ControlRequest, grant: Grant, reply: (ControlReply) -> Void)
    /// What is on screen, composed again and written as a PNG to
    /// `destination` off the loop; the outcome goes to `then` on the loop
    /// (through `ServiceContext.screenshot`).
    case screenshot(ScreenshotDestination, then: (Result<ScreenshotOutcome, ScreenshotFailure>) -> Void)
}

/// The model commands a service may ask for (`Carousel`'s, at the loop's time).
public enum ModelAsk: Equatable {
    /// Whether the page shows a clip, and whether it plays (autoplay waits while one does).
    case video(VideoPresence)
    /// The clip on the page ended: autoplay may move on.
    case videoEnded
    /// Whether the picture autoplay slides to next is ready to be shown.
    case upcomingReady(Bool)
}

/// Where a stamp goes over the pictures.
public enum StampSlot: Sendable {
    /// `[overlay] clock`.
    case clock
    /// Pushed text: `[overlay] text_file`, `overlay text`.
    case text
    /// A pairing code: shown in pushed text's place while it lasts (the
    /// pushed text comes back after).
    case pairing
}

/// An event's name: one vocabulary for the model's events and those the
/// services add (each capability declares its own, as `static let`s on
/// this type in its room: `LoopEvent.Name.didStartVideo`).
public struct LoopEvent: Sendable {
    public struct Name: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }
    }
    public var name: Name
    /// Its fields besides `event` (a `t` in uptime milliseconds, an index...).
    public var fields: [String: JSONValue]
    public init(_ name: Name, _ fields: [String: JSONValue]) {
        self.name = name
        self.fields = fields
    }
}

/// What happened on the loop, told to the services that subscribe to its kind.
public enum LoopHappening {
    /// A reload or `set` applied a new configuration (`old`: the one before).
    case configured(old: Configuration)
    /// The carousel was laid out again (a new configuration, panel or touchscreen).
    case laidOut
    /// The first frame since start was handed to the display.
    case firstFramePresented
    /// The wall clock was set (NTP, by hand).
    case wallClockSet
    /// Something that may show in `status` changed (an event, a request).
    case stateChanged
    /// The model changed beyond a frame of a motion in flight (a page
    /// reached, a motion started or ended, a command, the album changed):
    /// the picture on screen may be another one, or the carousel at rest.
    case modelChanged
    /// The decoder finished pictures (or found some broken).
    case decoded

    /// The kinds a service subscribes to.
    public struct Kinds: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let configured = Kinds(rawValue: 1 << 0)
        public static let laidOut = Kinds(rawValue: 1 << 1)
        public static let firstFramePresented = Kinds(rawValue: 1 << 2)
        public static let wallClockSet = Kinds(rawValue: 1 << 3)
        public static let stateChanged = Kinds(rawValue: 1 << 4)
        public static let modelChanged = Kinds(rawValue: 1 << 5)
        public static let decoded = Kinds(rawValue: 1 << 6)
        static let all: [Kinds] = [.configured, .laidOut, .firstFramePresented, .wallClockSet, .stateChanged, .modelChanged, .decoded]
    }

    public var kind: Kinds {
        switch self {
        case .configured: .configured
        case .laidOut: .laidOut
        case .firstFramePresented: .firstFramePresented
        case .wallClockSet: .wallClockSet
        case .stateChanged: .stateChanged
        case .modelChanged: .modelChanged
        case .decoded: .decoded
        }
    }
}
