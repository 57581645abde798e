/// The text of a display mode, `WIDTHxHEIGHT` or `WIDTHxHEIGHT@HZ`: the
/// one grammar of `[display] mode`, `--mode` and `--size`, read by the
/// configuration (`ModeRequest`) and the display room (`DisplayModeRequest`).
public enum ModeText {
    /// The sides (1 to `Viewport.maximumSide`) and the refresh (1 to 1000 Hz), or nil.
    public static func parse(_ text: String) -> (width: Int, height: Int, refresh: Int?)? {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return nil }
        let size = parts[0].split(separator: "x", omittingEmptySubsequences: false)
        guard size.count == 2, let w = Int(size[0]), let h = Int(size[1]), w > 0, h > 0,
              Double(w) <= Viewport.maximumSide, Double(h) <= Viewport.maximumSide else { return nil }
        var refresh: Int?
        if parts.count == 2 {
            guard let r = Int(parts[1]), r > 0, r <= 1000 else { return nil }
            refresh = r
        }
        return (w, h, refresh)
    }
}
