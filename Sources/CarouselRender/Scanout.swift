import CarouselCore

/// Copies a composed frame to scanout memory, turned by `rotation`.
///
/// The destination is written strictly in sequential rows and never read:
/// dumb buffers are often write-combined, where reads are very slow and
/// scattered writes defeat the combining.
public enum Scanout {
    /// Writes `frame` (logical orientation) into `destination`, a panel of
    /// `panelWidth × panelHeight` XRGB8888 pixels with `stride` bytes per row.
    public static func write(_ frame: Frame, rotation: Rotation, to destination: UnsafeMutableRawPointer,
                             stride: Int, panelWidth: Int, panelHeight: Int) {
        let logical = rotation.logicalSize(panelWidth: panelWidth, panelHeight: panelHeight)
        precondition(frame.width == logical.width && frame.height == logical.height,
                     "frame \(frame.width)x\(frame.height) does not fit a \(panelWidth)x\(panelHeight) panel at \(rotation.rawValue)°")
        let source = frame.pixels
        let w = frame.width
        for y in 0..<panelHeight {
            let row = (destination + y * stride).assumingMemoryBound(to: UInt32.self)
            switch rotation {
            case .none:
                row.update(from: source + y * w, count: panelWidth)
            case .upsideDown:
                let src = source + (panelHeight - 1 - y) * w
                for x in 0..<panelWidth { row[x] = src[panelWidth - 1 - x] }
            case .clockwise90:
                // Panel (X, Y) shows logical (Y, W_panel − 1 − X).
                for x in 0..<panelWidth { row[x] = source[(panelWidth - 1 - x) * w + y] }
            case .clockwise270:
                // Panel (X, Y) shows logical (H_panel − 1 − Y, X).
                for x in 0..<panelWidth { row[x] = source[x * w + (panelHeight - 1 - y)] }
            }
        }
    }
}
