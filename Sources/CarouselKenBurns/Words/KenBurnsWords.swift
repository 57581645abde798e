import CarouselCore
import CarouselWords

/// `[ken_burns]`: the picture at rest moves slowly (a pan or a zoom).
public struct KenBurnsSettings: CapabilitySettings {
    public var enabled = false
    /// Which move a picture makes; `random` picks one per picture.
    public var move = KenBurnsMoveChoice.random
    /// The zoom's range: a zoom goes from the smaller to the larger (either
    /// may be written first); a pan is made at the larger.
    public var zoomMin = 1.0
    public var zoomMax = 1.3
    /// Pictures taller than wide move too.
    public var portraits = true
    /// Pictures of the screen's own shape move too.
    public var screenShaped = true
    /// The most frames a second the move is drawn at.
    public var fps = 20

    public init() {}
}

public enum KenBurnsMoveChoice: String, CaseIterable, Sendable {
    case random, pan
    case zoomIn = "zoom_in"
    case zoomOut = "zoom_out"
}

/// What Ken Burns says to the world: `[ken_burns]` and the `ken_burns` status field.
public enum KenBurnsWords {
    public static let words = CapabilityWords(
        name: "Ken Burns",
        sections: [SectionSpec(name: "ken_burns", help: """
            The picture at rest moves slowly, a pan or a zoom over its whole rest, ending on the faces its XMP marks.
            """)],
        keys: keys.map(\.inBag),
        status: [StatusWords("ken_burns", help: """
            The move of the picture at rest, null when none: `move` (`pan`, `zoom_in`, `zoom_out`), `scale` now, \
            `faces` it keeps in view, `frames` drawn and `dropped` (frames the loop was too late for), `fps` it is drawn \
            at now (the `fps` cap, or less where a frame costs more than a quarter of the loop's time).
            """)])

    static let keys: [KeyDeclaration<KenBurnsSettings>] = [
        .flag("ken_burns", "enabled", default: "false", needs: .tune, help: """
            The picture at rest moves slowly over its whole rest (autoplay's interval; with autoplay off, slowing to a
            stop). A finger on the screen stops it where it is, and a swipe carries it; the next rest starts a new move.
            """) { $0.enabled = $1 },
        .choice("ken_burns", "move", KenBurnsMoveChoice.self, default: "random", needs: .tune, help: """
            `pan` (across the picture at zoom_max), `zoom_in`, `zoom_out`, or `random`: one of them per picture (the
            same picture always makes the same move). Faces marked in the picture's XMP are where a zoom ends or
            starts, and a pan keeps them in view.
            """) { $0.move = $1 },
        .number("ken_burns", "zoom_min", 1...4, default: "1.0", needs: .tune, help: """
            The scale a zoom starts from (zoom_in) or ends at (zoom_out): 1 is the picture as it rests without Ken Burns.
            With zoom_max, a range: the smaller of the two is where a zoom is widest.
            """) { $0.zoomMin = $1 },
        .number("ken_burns", "zoom_max", 1...4, default: "1.3", needs: .tune, help: """
            The scale a zoom reaches, and that a pan is made at. The picture is decoded once at up to this much more
            than the screen (within `[images] max_pixels`), so that it stays sharp.
            """) { $0.zoomMax = $1 },
        .flag("ken_burns", "portraits", default: "true", needs: .tune, help: """
            Pictures taller than wide move too; false: they rest still.
            """) { $0.portraits = $1 },
        .flag("ken_burns", "screen_shaped", default: "true", needs: .tune, help: """
            Pictures of the screen's own shape (within 2%) move too; false: only those the screen crops or letterboxes.
            """) { $0.screenShaped = $1 },
        .integer("ken_burns", "fps", 1...60, default: "20", needs: .tune, help: """
            The most frames a second the move is drawn at. Each frame is a scaled copy of the picture; on a board where
            one costs more than a quarter of the time between frames the move is drawn less often, so that a finger
            landing waits for one frame at most.
            """) { $0.fps = $1 },
    ]
}
