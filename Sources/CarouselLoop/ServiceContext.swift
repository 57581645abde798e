import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselImaging
import CarouselPlatform
import CarouselRender
import Dispatch

/// What a service may read of the running carousel: a read-only view the
/// daemon provides (swift-nio's `ChannelHandlerContext`: a handler sees a
/// context, never the pipeline's owner).
public protocol LoopView: AnyObject {
    /// The configuration running now (after reloads and `set` requests).
    var config: Configuration { get }
    /// The carousel model (a value: reading it changes nothing).
    var model: Carousel { get }
    /// How many pages the album makes, and the key of page `page` (its
    /// picture's path; the decode cache's name for it).
    var pageCount: Int { get }
    func pageKey(_ page: Int) -> PageKey?
    /// The display is switched off (`display off`, the idle rule, the schedule).
    var displayIsOff: Bool { get }
    /// A secret is on the screen (a pairing code): no screenshot for a way in
    /// that may not configure the frame (MQTT).
    var secretOnScreen: Bool { get }
    /// Frames handed to the display since start.
    var framesPresented: Int { get }
    /// How a picture of a page is made for this layout (its size, fit,
    /// fill, caption and the panel's turn).
    var pictureSettings: ItemCache.Settings { get }
    /// The screen's geometry as a stamp over the pictures needs it.
    var screen: ScreenFacts { get }
    /// Whether the loop's clock is the monotonic clock (false: a test's manual clock).
    var realTime: Bool { get }
    /// Whether the decoder still owes the picture of `key` it was asked for.
    func awaitsDecode(_ key: PageKey) -> Bool
    /// The loop's clock now (µs).
    var now: Int64 { get }
    /// Milliseconds since the daemon started: the clock of `uptime_ms` and event `t`.
    func uptimeMilliseconds(_ microseconds: Int64) -> Int64

    // MARK: - The loop's own services
    /// Frames can be shown now: the display is there and on.
    var screenIsShowing: Bool { get }
    /// Local wall-clock time (`[overlay] clock`, `[power] schedule`).
    var localClock: LocalClock { get }
    /// The content moves (a slide, a drag, momentum): not at rest.
    var isMoving: Bool { get }
    /// How long a frame that draws framings (`LoopAsk.framing` at rest)
    /// takes on this board (µs, smoothed; 0 on a manual clock): what a
    /// service that asks for such frames spends of the loop's time.
    var framedFrameCost: Int64 { get }
    /// The picture the position file names for page `page` (its first):
    /// its name in the folder, or its path when `[images] files` lists them.
    func pictureName(onPage page: Int) -> String?
    /// The page showing the picture the position file names `name`.
    func page(ofPictureNamed name: String) -> Int?

    // MARK: - Input and the display

    /// The turn from the panel to the layout, and the panel's size in
    /// pixels (what libinput's transformed coordinates span).
    var rotation: Rotation { get }
    var panelSize: PixelSize { get }
    /// The display's descriptor for its events (DRM's page flips), and
    /// which display it is (a new one's may reuse the old one's number);
    /// nil on a display whose frames are on screen as they are presented.
    var displayDescriptor: (fd: Int32, generation: UInt64)? { get }
    /// The device number (`st_rdev`) of the display's card, which udev's
    /// events name; nil for a display that names none.
    var displayHotplugDevice: UInt64? { get }
    /// The display's device is away (it went; the daemon waits for it).
    var displayIsAway: Bool { get }
    /// When the screen's power must be looked at next (the idle and dim
    /// rules, the schedule), µs; `.min` when at once. It changes with what
    /// the daemon does (use, the schedule, the first picture), not only
    /// when a service ran.
    var screenPowerDeadline: Int64? { get }

    // MARK: - The control socket and MQTT

    /// What `status` answers now, the services' fields included (MQTT's state topic).
    func status() -> [String: JSONValue]
    /// Whether the display has a backlight the daemon drives (MQTT
    /// discovery then announces a brightness number).
    var hasBacklight: Bool { get }
}

/// The screen as a stamp over the pictures is placed on it.
public struct ScreenFacts: Equatable, Sendable {
    public var rotation: Rotation
    /// The layout's (upright) size and the panel's.
    public var logical: PixelSize
    public var panel: PixelSize
    /// The text size of `[overlay]` on this screen (pixels).
    public var textSize: Int
    /// Where the clock stands and how high it is (pixels), if `[overlay] clock` shows one.
    public var clock: (position: OverlayPosition, height: Int)?

    public init(rotation: Rotation, logical: PixelSize, panel: PixelSize, textSize: Int,
                clock: (position: OverlayPosition, height: Int)?) {
        self.rotation = rotation
        self.logical = logical
        self.panel = panel
        self.textSize = textSize
        self.clock = clock
    }

    public static func == (a: ScreenFacts, b: ScreenFacts) -> Bool {
        a.rotation == b.rotation && a.logical == b.logical && a.panel == b.panel && a.textSize == b.textSize
            && a.clock?.position == b.clock?.position && a.clock?.height == b.clock?.height
    }
}

/// A service's port to the loop: what it may read (`view`), its outbox
/// (`ask`), and the one way work leaves the loop and comes back (`run`,
/// `doorbell`). Made by `LoopServices.register` for one service.
public final class ServiceContext {
    private unowned let loop: LoopServices
    private let slot: Int

    init(loop: LoopServices, slot: Int) {
        self.loop = loop
        self.slot = slot
    }

    /// What the service may read.
    public var view: any LoopView { loop.view! }

    /// The loop's clock now (µs).
    public var now: Int64 { loop.view!.now }

    /// Asks the loop for `ask`, carried out after the service returns.
    public func ask(_ ask: LoopAsk) { loop.enqueue(ask) }

    /// Runs `work` on `queue`, then `completion` with its result on the loop
    /// (whose asks are carried out after it returns). A completion still
    /// waiting when the daemon stops is not called.
    public func run<Result: Sendable>(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Result,
                                      then completion: @escaping (Result) -> Void) {
        let slot = self.slot
        loop.executor.run(on: queue, work, then: { [unowned loop] result in
            completion(result)
            loop.ran(slot)
        }, thenAll: false)
    }

    /// A bell a worker thread rings to have `handler` called on the loop,
    /// once per wake-up however often it rang.
    public func doorbell(_ handler: @escaping () -> Void) -> LoopExecutor.Doorbell {
        let bell = loop.executor.doorbell()
        let slot = self.slot
        loop.executor.answer(bell) { [unowned loop] in
            handler()
            loop.ran(slot)
        }
        return bell
    }

    // MARK: - The control socket and MQTT

    /// Asks the daemon to answer `request` as `grant` allows; `reply` gets
    /// the answer on the loop, after the service returned (its asks are
    /// carried out after `reply` returns).
    public func request(_ request: ControlRequest, grant: Grant, reply: @escaping (ControlReply) -> Void) {
        let slot = self.slot
        ask(.request(request, grant: grant, reply: { [unowned loop] answer in
            reply(answer)
            loop.ran(slot)
        }))
    }

    /// Asks for what is on screen as a PNG written to `destination` off the
    /// loop; `completion` gets the outcome on the loop.
    public func screenshot(to destination: ScreenshotDestination,
                           then completion: @escaping (Result<ScreenshotOutcome, ScreenshotFailure>) -> Void) {
        let slot = self.slot
        ask(.screenshot(destination, then: { [unowned loop] outcome in
            completion(outcome)
            loop.ran(slot)
        }))
    }
}
