/// How far off a touch lands at the check point, and whether a fit may be saved.
public struct CheckPointResult: Equatable, Sendable {
    /// Distance in millimetres between the target and where the fitted
    /// matrix puts the touch.
    public var calibratedMillimetres: Double
    /// The same with the identity matrix: the panel as it is uncalibrated.
    public var uncalibratedMillimetres: Double

    public init(calibratedMillimetres: Double, uncalibratedMillimetres: Double) {
        self.calibratedMillimetres = calibratedMillimetres
        self.uncalibratedMillimetres = uncalibratedMillimetres
    }

    /// Measures `matrix` at the check point: `sample` is the touch on it,
    /// `panelMillimetres` the panel's size (width and height along the
    /// panel's own axes).
    public init(matrix: CalibrationMatrix, sample: CalibrationSample, panelMillimetres: (width: Double, height: Double)) {
        func distance(_ p: NormalizedPoint) -> Double {
            let dx = (p.x - sample.target.x) * panelMillimetres.width
            let dy = (p.y - sample.target.y) * panelMillimetres.height
            return (dx * dx + dy * dy).squareRoot()
        }
        calibratedMillimetres = distance(matrix.apply(sample.raw))
        uncalibratedMillimetres = distance(sample.raw)
    }

    /// A fit worse than no calibration at all is never saved: the touches
    /// were off target (a slip, a second finger) or the panel is not affine.
    public var isWorseThanUncalibrated: Bool { !(calibratedMillimetres <= uncalibratedMillimetres) }

    /// The error line when `isWorseThanUncalibrated`.
    public var refusal: String {
        "not saved: at the check point the fit is off by \(Self.format(calibratedMillimetres)) mm, worse than the uncalibrated panel (\(Self.format(uncalibratedMillimetres)) mm); run calibrate again and touch each target's centre"
    }

    /// Millimetres with two decimals.
    public static func format(_ mm: Double) -> String {
        guard mm.isFinite else { return "\(mm)" }
        let hundredths = Int64((mm * 100).rounded())
        let fraction = abs(hundredths) % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}

/// The panel's physical size, from the display if it says, else from the
/// touchscreen through the fitted matrix.
public enum PanelMillimetres {
    /// The connector's size when plausible (EDIDs of TVs and projectors give
    /// 0, or an aspect ratio such as 16x9): at least 20 mm each way.
    public static func fromDisplay(widthMM: Int, heightMM: Int) -> (width: Double, height: Double)? {
        guard widthMM >= 20, heightMM >= 20 else { return nil }
        return (Double(widthMM), Double(heightMM))
    }

    /// The panel's size measured with the touchscreen's millimetres
    /// (`deviceWidth × deviceHeight` along the device's own axes): a step of
    /// the panel's full width is the device vector L⁻¹·(1, 0), where L is
    /// the matrix's linear part, whatever way the device is turned.
    public static func fromDevice(width deviceWidth: Double, height deviceHeight: Double,
                                  matrix m: CalibrationMatrix) -> (width: Double, height: Double)? {
        let det = m.a * m.e - m.b * m.d
        guard det != 0, det.isFinite, deviceWidth > 0, deviceHeight > 0 else { return nil }
        // L⁻¹ = [e -b; -d a] / det; its columns are the panel's unit steps in device units.
        func length(_ x: Double, _ y: Double) -> Double {
            ((x * deviceWidth) * (x * deviceWidth) + (y * deviceHeight) * (y * deviceHeight)).squareRoot()
        }
        return (length(m.e / det, -m.d / det), length(-m.b / det, m.a / det))
    }
}
