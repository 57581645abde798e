extension Schema {
    /// The keys of `[zoom]`, in the order the shipped INI, the README's table and carouseld.ini(5) list them.
    static let zoomKeys: [KeySpec] = [
        .flag("zoom", "enabled", default: "true", help: """
            Two fingers pinch the picture (1:1, about their midpoint); one finger pans a zoomed picture and, pushed
            past its edge, pages on. Autoplay waits while a picture is zoomed and resumes `resume_delay` after it is
            back at 1.
            """) { $0.zoom.enabled = $1 },
        .number("zoom", "max_scale", 1...16, unit: "times the fitted picture", default: "4.0", help: """
            The largest scale a picture rests at, 1 to 16 times the fitted picture; a pinch rubber-bands past it.
            """) { $0.zoom.maxScale = $1 },
        .flag("zoom", "double_tap", default: "true", help: """
            A double tap zooms to 2.5x about the point and back (it toggles 1 and 2.5x). A single tap's select then
            waits 300 ms after the lift for a second tap (the double-tap window); `false`: select at the lift.
            """) { $0.zoom.doubleTap = $1 },
    ]
}
