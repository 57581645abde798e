import CarouselCore
import CInputShim

/// What a key asks the carousel to do. Keyboards and IR remotes (which the
/// kernel presents as keyboards: `ir-keytable` maps their scancodes to
/// KEY_* codes) both end up here; the daemon turns these into its commands.
public enum KeyCommand: Sendable, Hashable, CaseIterable {
    /// One page back.
    case previous
    /// One page forward.
    case next
    /// Jump to the first item.
    case first
    /// Jump to the last item.
    case last
    /// Pause autoplay, or resume it when paused (a clip on the page: pause it, or play it on).
    case togglePause
    /// Lift a pause (a remote's play key).
    case play
    /// Pause autoplay and the clip (a remote's pause or stop key).
    case pause

    /// The command of a Linux key code (linux/input-event-codes.h), or nil
    /// for keys that mean nothing to the carousel. Up and Down move as Left
    /// and Right do, for vertical carousels and for remotes that have only a
    /// cross of arrows.
    public init?(keyCode: UInt32) {
        guard let command = KeyCommand.table[keyCode] else { return nil }
        self = command
    }

    /// The command of a key *press*; nil for releases and other events.
    public init?(_ event: InputEvent) {
        guard case let .key(code, pressed: true, _) = event else { return nil }
        self.init(keyCode: code)
    }

    /// The carousel command this key gives: the one place keys meet the
    /// model's vocabulary.
    public var command: CarouselCommand {
        switch self {
        case .previous: .previous
        case .next: .next
        case .first: .first
        case .last: .last
        case .togglePause: .togglePause
        case .play: .play
        case .pause: .pause
        }
    }

    /// Every key code carouseld reacts to.
    public static let table: [UInt32: KeyCommand] = {
        let pairs: [(Int32, KeyCommand)] = [
            (KEY_LEFT, .previous), (KEY_UP, .previous), (KEY_PAGEUP, .previous), (KEY_PREVIOUSSONG, .previous),
            (KEY_RIGHT, .next), (KEY_DOWN, .next), (KEY_PAGEDOWN, .next), (KEY_NEXTSONG, .next),
            (KEY_HOME, .first),
            (KEY_END, .last),
            (KEY_SPACE, .togglePause), (KEY_PLAYPAUSE, .togglePause),
            (KEY_PLAY, .play), (KEY_PAUSE, .pause), (KEY_STOPCD, .pause),
        ]
        return Dictionary(uniqueKeysWithValues: pairs.map { (UInt32($0.0), $0.1) })
    }()
}
