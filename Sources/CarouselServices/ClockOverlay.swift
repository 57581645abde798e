import CarouselConfig
import CarouselCore
import CarouselImaging
import CarouselLoop
import CarouselPlatform
import CarouselRender
import CarouselText
import Dispatch

/// How the clock looks on this screen: what a drawn clock depends on
/// besides its text (a reload or a display change makes a new one).
public struct ClockLook: Equatable, Sendable {
    public var format: ClockFormat
    public var position: OverlayPosition
    public var style: TextStyle
    public var size: Int
    public var rotation: Rotation
    /// The layout's (upright) size and the panel's.
    public var logical: PixelSize
    public var panel: PixelSize
}

extension ClockLook {
    /// The clock's look for `config` on a screen of these facts; nil: no clock.
    public init?(_ config: Configuration, rotation: Rotation, logical: PixelSize, panel: PixelSize, textSize: Int) {
        guard let format = config.overlay.clock else { return nil }
        self.init(format: format, position: config.overlay.clockPosition, style: config.overlay.text, size: textSize,
                  rotation: rotation, logical: logical, panel: panel)
    }

    /// The clock's look for `config` on `screen`; nil: no clock.
    init?(_ config: Configuration, on screen: ScreenFacts) {
        self.init(config, rotation: screen.rotation, logical: screen.logical, panel: screen.panel, textSize: screen.textSize)
    }

    /// The text of the minute `hour`:`minute`.
    public func text(hour: Int, minute: Int) -> String { format.text(hour: hour, minute: minute) }
}

/// The clock of `[overlay] clock`: its text for the minute on the wall
/// clock, drawn as a stamp that stays put on the screen, and the loop time
/// of the next minute, the one deadline it adds. The next minute's stamp is
/// drawn ahead off the loop (through the daemon's `LoopExecutor`, which
/// hands it back), so that the loop only hands it to the writer when the
/// minute comes (after a start, a reload or a clock step the loop draws the
/// first one itself: a few glyphs, well under a millisecond).
public final class ClockOverlay {
    public private(set) var look: ClockLook?
    /// The loop time at which the wall clock shows the next minute.
    public private(set) var nextTick: Int64?
    public private(set) var text: String?
    public private(set) var stamp: SceneStamp?
    /// The next minute's stamp, drawn off the loop and handed back.
    public private(set) var ahead: (look: ClockLook, text: String, stamp: SceneStamp?)?
    /// Stamps the loop drew itself (none was drawn ahead for the minute).
    public private(set) var drawnOnTheLoop = 0
    /// The stamp being drawn off the loop now, so that it is asked for once.
    private var drawing: (look: ClockLook, text: String)?
    private let context: ServiceContext
    /// A stamp was handed to the frame path (and must be taken away when there is none).
    private var stampShown = false

    public init(context: ServiceContext) {
        self.context = context
        reconfigure(ClockLook(context.view.config, on: context.view.screen))
    }
    private static let worker = DispatchQueue(label: "carouseld.clock", qos: .utility)

    /// Takes a new look (nil: no clock); the next `tick` draws it anew.
    func reconfigure(_ look: ClockLook?) {
        guard look != self.look else { return }
        self.look = look
        nextTick = nil
        text = nil
        stamp = nil
    }

    /// Forgets when the next minute comes (the wall clock was set): the next `tick` aligns again.
    func realign() { nextTick = nil }

    /// At the minute (or when not aligned yet): the text for the wall
    /// clock's minute at `now` and the loop time of the next one. Returns
    /// whether the stamp changed (a frame is due).
    func tick(now: Int64, clock: LocalClock) -> Bool {
        guard let look else { return false }
        if let due = nextTick, now < due { return false }
        let minute = clock.weekMinute(now) % 1440
        let current = look.format.text(hour: minute / 60, minute: minute % 60)
        nextTick = clock.instant(1, now)
        let next = (minute + 1) % 1440
        let upcoming = look.format.text(hour: next / 60, minute: next % 60)
        guard current != text || stamp == nil else {
            prepare(upcoming, look)
            return false
        }
        text = current
        if let made = ahead, made.look == look, made.text == current {
            stamp = made.stamp
        } else {
            stamp = Self.draw(current, look)
            drawnOnTheLoop += 1
        }
        prepare(upcoming, look)
        return true
    }

    /// Draws the next minute's stamp off the loop; the loop keeps it for the minute.
    private func prepare(_ text: String, _ look: ClockLook) {
        if let made = ahead, made.look == look, made.text == text { return }
        if let drawing, drawing.look == look, drawing.text == text { return }
        drawing = (look, text)
        context.run(on: Self.worker, { Self.draw(text, look) }, then: { [weak self] stamp in
            guard let self else { return }
            self.ahead = (look, text, stamp)
            if let drawing = self.drawing, drawing.look == look, drawing.text == text { self.drawing = nil }
        })
    }

    /// The stamp of `text`: the sprite turned to the panel, placed at the
    /// look's position; nil when there is no font (logged once).
    public static func draw(_ text: String, _ look: ClockLook) -> SceneStamp? {
        guard let sprite = Self.sprite(text, look), let turned = try? sprite.turned(look.rotation) else { return nil }
        let o = TextSprite.origin(of: sprite.size, in: look.logical, at: look.position, margin: TextSprite.margin(size: look.size))
        // The logical rectangle's corners on the panel.
        let p = look.rotation.panel(x: o.x, y: o.y, panelWidth: look.panel.width, panelHeight: look.panel.height)
        let q = look.rotation.panel(x: o.x + sprite.width - 1, y: o.y + sprite.height - 1,
                                    panelWidth: look.panel.width, panelHeight: look.panel.height)
        return SceneStamp(image: turned, x: min(p.x, q.x), y: min(p.y, q.y))
    }

    /// The sprite of `text` upright (not yet turned to the panel); nil when
    /// there is no font (logged once).
    public static func sprite(_ text: String, _ look: ClockLook) -> DecodedImage? {
        let (result, isNew) = TextRenderer.shared(pattern: look.style.font, pixelSize: look.size)
        guard case let .success(renderer) = result else {
            if isNew, case let .failure(error) = result { log(.warning, "overlay: \(error); captions, the clock and pushed text are not drawn") }
            return nil
        }
        guard let mask = renderer.render(lines: [text], alignment: look.position.horizontal) else { return nil }
        return try? TextSprite.make(mask, style: look.style, size: look.size)
    }
}

/// The clock on the loop: its one deadline is the next minute, while
/// there is a screen to show it on (off, the first pass after waking draws
/// the minute it is then); a new minute asks for a frame, in which only the
/// clock's rectangle changes.
extension ClockOverlay: LoopService {
    public var name: String { "clock overlay" }
    public var subscriptions: LoopHappening.Kinds { [.laidOut, .wallClockSet] }

    public var deadline: Int64? {
        guard look != nil, context.view.screenIsShowing else { return nil }
        return nextTick ?? .min
    }

    public func due(now: Int64) { tick(now: now) }

    private func tick(now: Int64) {
        let changed = tick(now: now, clock: context.view.localClock)
        // A new minute, or the clock taken away (a reload without it).
        if changed || (stamp == nil && stampShown) {
            stampShown = stamp != nil
            context.ask(.stamp(.clock, stamp))
            context.ask(.frame)
        }
    }

    public func observe(_ happening: LoopHappening, now: Int64) {
        switch happening {
        case .laidOut:
            reconfigure(ClockLook(context.view.config, on: context.view.screen))
            tick(now: now)
        case .wallClockSet:
            realign()
            tick(now: now)
        default:
            break
        }
    }
}
