import CarouselConfig
import CarouselCore
import CarouselImaging
import CarouselInput
import CarouselLoop
import CarouselPlatform
import CarouselPresenceWords

/// The seat's devices through libinput, and the router for what they say.
/// A missing seat or a permission problem is logged by the input service,
/// and the carousel runs on without input (autoplay, commands) rather than
/// not at all.
final class InputSource {
    let context: InputContext
    var router: InputRouter
    private var calibration: [Double]?

    init(config: InputConfig, rotation: Rotation, panel: PixelSize) throws {
        router = InputRouter(rotation: rotation, panelWidth: panel.width, panelHeight: panel.height, input: config)
        context = try InputContext(seat: config.seat,
                                   panelSize: InputPanelSize(width: UInt32(panel.width), height: UInt32(panel.height)),
                                   log: InputLog.write)
        if let matrix = config.calibration { try context.setCalibration(matrix.map { Float($0) }) }
        calibration = config.calibration
    }

    /// The configuration or the panel changed: a new panel size for
    /// libinput's transformed coordinates, a new calibration matrix if any.
    func reconfigure(config: InputConfig, rotation: Rotation, panel: PixelSize) {
        router.reconfigure(rotation: rotation, panelWidth: panel.width, panelHeight: panel.height, input: config)
        context.panelSize = InputPanelSize(width: UInt32(panel.width), height: UInt32(panel.height))
        guard config.calibration != calibration else { return }
        do {
            try context.setCalibration(config.calibration?.map { Float($0) })
            calibration = config.calibration
            log(.info, "input: calibration \(calibration.map { $0.map(\.formatted).joined(separator: " ") } ?? "none")")
        } catch {
            log(.warning, "input: cannot apply the calibration: \(error)")
        }
    }

    /// Everything libinput has, routed; called when its descriptor is readable.
    func read() -> [RoutedInput] {
        let events: [InputEvent]
        do {
            events = try context.dispatch()
        } catch {
            log(.error, "input: \(error)")
            return []
        }
        return events.compactMap { router.route($0) }
    }
}

/// Input on the loop: the seat's devices opened once the first frame is
/// handed to the display (or at `deadline`, if no frame comes: the display
/// off by the schedule at start). Opening them (udev enumeration, libinput's
/// quirks files) took a third of the CPU between main and the first picture
/// on a one-core board, and on one core every bit of that delays the start
/// picture's decode. libinput itself is opened (dlopen) by that first
/// context, so its cost comes after the first picture too. A missing seat,
/// a permission problem or libinput not installed is one line (the service
/// opens once, never again), and the carousel runs on (autoplay, commands)
/// rather than not at all.
///
/// What the devices say, routed (`InputRouter`), the loop carries out
/// (`LoopAsk.input`): the model, the screen's power and the layout are the
/// daemon's.
public final class InputService: LoopService {
    public let name = "input"
    public let subscriptions: LoopHappening.Kinds = [.firstFramePresented, .configured, .laidOut]
    private let context: ServiceContext
    private(set) var source: InputSource?
    public private(set) var deadline: Int64?

    public init(context: ServiceContext, openBy: Int64) {
        self.context = context
        deadline = openBy
    }

    private func open() {
        deadline = nil
        let view = context.view
        let config = view.config
        do {
            source = try InputSource(config: config.input, rotation: view.rotation, panel: view.panelSize)
            source?.router.presenceKey = Self.presenceKey(config)
        } catch {
            log(.warning, "no input: \(error)")
        }
    }

    /// The key of `[power] presence = key:NAME`, if that is the sensor.
    static func presenceKey(_ config: Configuration) -> UInt32? {
        if case let .key(code, _)? = config[PresenceSettings.self].source { return code }
        return nil
    }

    public var interests: [EpollInterest] { source.map { [EpollInterest(fd: $0.context.fileDescriptor)] } ?? [] }

    public func due(now: Int64) { open() }

    public func ready(_ fd: Int32, events: UInt32, now: Int64) {
        for routed in source?.read() ?? [] { context.ask(.input(routed)) }
    }

    public func observe(_ happening: LoopHappening, now: Int64) {
        switch happening {
        case .firstFramePresented:
            // Right after the first frame is handed to the display, while it
            // flips: "first frame on screen" (and READY=1), logged when the
            // flip is seen, then means touch works too.
            if deadline != nil { open() }
        case .configured:
            source?.router.presenceKey = Self.presenceKey(context.view.config)
        case .laidOut:
            let view = context.view
            source?.reconfigure(config: view.config.input, rotation: view.rotation, panel: view.panelSize)
        default:
            break
        }
    }
}
