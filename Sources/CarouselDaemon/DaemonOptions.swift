import CarouselConfig
import CarouselDisplay
import CarouselLoop
import CarouselRender
import CarouselServices

extension Daemon {
    /// What the daemon opens besides the display. Tests on the offscreen
    /// display turn off what needs a seat, a socket path or signals.
    public struct Options: Sendable {
        /// libinput on `[input] seat`.
        public var input = true
        /// The control socket at `[control] socket` (or systemd's).
        public var controlSocket = true
        /// SIGTERM, SIGINT and SIGHUP through a signalfd (blocked for the
        /// calling thread and the threads it starts).
        public var signals = true
        /// udev's display hotplug events, for a display that names its
        /// device (`DisplayBackend.hotplugDevice`).
        public var hotplug = true
        /// Opens the display again after its device went away and a card
        /// appeared (`displayMayBeBack`); nil: a display that went away
        /// stays away (`carouseld run` passes the DRM display the
        /// configuration names).
        public var reopenDisplay: (@Sendable (Configuration) throws -> DisplayBackend)?
        /// Local time for `[power] schedule`; nil: the system's.
        public var localClock: LocalClock?
        /// CLOCK_MONOTONIC when the process started (µs), for the
        /// "first frame ... ms after start" lines.
        public var startedAt: Int64?
        /// CLOCK_MONOTONIC when `run` began (µs): how much of the start
        /// went before it is said once, with the first picture.
        public var enteredMain: Int64?
        /// Where the picture on screen is kept across restarts (`[images]
        /// resume`); nil keeps none. `carouseld run` passes systemd's
        /// `$STATE_DIRECTORY` or /var/lib/carouseld (`stateDirectory(environment:)`).
        public var stateDirectory: String?
        /// Reads, decodes and scales a picture for the cache; nil: the real
        /// one (`ItemCache.prepare`). A seam for tests that hold a decode in flight.
        public var prepare: ItemCache.Prepare?
        /// The board's memory in bytes, of which `cache_mb = auto` keeps
        /// pictures in a share (`Configuration.keepBytes`); nil: the
        /// board's own (`PixelMemory.boardBytes`). Tests fix it, so that a
        /// verdict does not hang on the host's memory.
        public var boardMemory: Int?
        /// Where the kernel lists backlights (`carouseld run`:
        /// /sys/class/backlight); nil drives none.
        public var backlightRoot: String?
        /// The daemon's clock is the monotonic clock (`carouseld run`);
        /// false for a manual one (tests): a clip's thread then judges
        /// lateness by the loop's readings alone, never by time passing.
        public var realTime = true
        public init() {}

        /// `$STATE_DIRECTORY`'s first path, else /var/lib/carouseld.
        public static func stateDirectory(environment value: String?) -> String {
            PositionStore.directory(environment: value)
        }
    }
}
