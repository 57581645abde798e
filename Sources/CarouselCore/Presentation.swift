/// How an item's picture fills its box (the `[images] fit` key). One type
/// for the configuration, the decoder and the renderer.
public enum FitMode: String, Sendable, CaseIterable {
    /// Aspect fit: the whole image shows, letterboxed in the background colour.
    case contain
    /// Aspect fill: the box is covered, the overflow cropped evenly on both sides.
    case cover
    /// Both axes scaled to the box independently; the aspect ratio is lost.
    case stretch
    /// Unscaled and centred; cropped if larger than the box.
    case none
}

/// Which screen edge the page dots sit at (the `[indicator] position` key).
public enum IndicatorPosition: String, Sendable, CaseIterable {
    case bottom, top, left, right
}
