import CarouselCore

/// Where the calibration screen puts its targets, and how a target drawn on
/// the screen people see becomes a point in the panel's normalised
/// coordinates, the space libinput's calibration matrix maps into.
///
/// libinput applies the matrix to the device's normalised position and then
/// scales the result to the panel (`libinput_event_touch_get_x_transformed`);
/// the input service turns panel pixels into layout pixels with the
/// rotation (`InputRouter`). So the matrix maps device to *panel*, whatever the
/// rotation: a target drawn at a logical position is turned onto the panel
/// first.
public struct CalibrationTargets: Equatable, Sendable {
    /// A target as a fraction of the logical (upright) screen.
    public struct Target: Equatable, Sendable {
        public var x: Double
        public var y: Double
        /// The check point is not fitted: it measures the fit.
        public var isCheck: Bool
    }

    /// The four corners an eighth of the screen in, then the centre, then
    /// the check point: off-centre, where a fit that only pleases the
    /// corners shows its error.
    public static let standard = CalibrationTargets(targets: [
        Target(x: 0.125, y: 0.125, isCheck: false),
        Target(x: 0.875, y: 0.125, isCheck: false),
        Target(x: 0.875, y: 0.875, isCheck: false),
        Target(x: 0.125, y: 0.875, isCheck: false),
        Target(x: 0.5, y: 0.5, isCheck: false),
        Target(x: 0.3, y: 0.65, isCheck: true),
    ])

    public var targets: [Target]

    public init(targets: [Target]) { self.targets = targets }

    /// The target's centre in logical pixels of a `width × height` screen.
    public static func logicalPixels(_ t: Target, width: Int, height: Int) -> Point {
        Point(x: (t.x * Double(width)).rounded(), y: (t.y * Double(height)).rounded())
    }
}

extension Rotation {
    /// The panel point under logical point `p`: the inverse of
    /// `logical(_:panelWidth:panelHeight:)` (continuous coordinates).
    public func panelPoint(_ p: Point, panelWidth: Double, panelHeight: Double) -> Point {
        switch self {
        case .none: p
        case .clockwise90: Point(x: panelWidth - p.y, y: p.x)
        case .upsideDown: Point(x: panelWidth - p.x, y: panelHeight - p.y)
        case .clockwise270: Point(x: p.y, y: panelHeight - p.x)
        }
    }

    /// Logical pixel position `p` as a fraction of the panel, as a
    /// calibrated touch there must report it.
    public func normalizedPanelPoint(_ p: Point, panelWidth: Int, panelHeight: Int) -> NormalizedPoint {
        let q = panelPoint(p, panelWidth: Double(panelWidth), panelHeight: Double(panelHeight))
        return NormalizedPoint(x: q.x / Double(panelWidth), y: q.y / Double(panelHeight))
    }
}
