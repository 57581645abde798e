import CarouselImaging

/// The stand-in for a display whose device went away while carouseld ran
/// (its driver unbound or unloaded, a USB display unplugged): it keeps the
/// last panel's size and name, so that the layout, `status` and the model
/// carry on unchanged, and draws nothing (`acquire` returns `nil`). The
/// daemon swaps the real display back in when the device returns.
///
/// It holds nothing of the old device: dropping the old backend closes the
/// card's descriptor, which lets the kernel free the unplugged device (and
/// give its returning card the same name).
public final class AbsentDisplay: DisplayBackend {
    public let panelSize: PixelSize
    public let panelRotation: PanelOrientation
    public let physicalSize: PhysicalSize?
    public let connectorName: String
    public let modeName: String
    public let framePeriodMicroseconds: Int64
    public let pixelFormat = PixelFormat.xrgb8888
    public let presentsAsynchronously = false
    public let fileDescriptor: Int32? = nil
    public let isPresent = false
    /// What went away ("drm /dev/dri/card0 Virtual-1 1280x800@60 (atomic)").
    public let was: String
    public var summary: String { "none: \(was) went away; waiting for it" }

    /// Takes `gone`'s description; keeps no reference to it.
    public init(replacing gone: DisplayBackend) {
        panelSize = gone.panelSize
        panelRotation = gone.panelRotation
        physicalSize = gone.physicalSize
        connectorName = gone.connectorName
        modeName = gone.modeName
        framePeriodMicroseconds = gone.framePeriodMicroseconds
        was = gone.summary
    }

    public func acquire() -> ScanoutBuffer? { nil }
    /// Nothing to switch: the state is kept for the daemon, which switches
    /// the display that comes back to match.
    public private(set) var isPoweredOn = true
    public func setPower(on: Bool) throws(DisplayError) { isPoweredOn = on }
    public func reserveWindowRoom(_ room: Int, along axis: ScanoutAxis) -> Int { 0 }
    public func present(_ buffer: ScanoutBuffer, window: PixelPoint) throws(DisplayError) {
        throw DisplayError("no display: \(was) went away", hint: "carouseld draws again when it is back")
    }
    public func dispatch() throws(DisplayError) -> Bool { false }
    public func reprobe() throws(DisplayError) -> Bool { false }
    public func changeMode(to request: DisplayModeRequest?) throws(DisplayError) -> Bool {
        throw DisplayError("no display to change the mode of: \(was) went away", hint: "try again when it is back")
    }
    public func restore() {}
}
