import CarouselCore

extension Schema {
    /// The keys of `[autoplay]`, in the order the shipped INI, the README's table and carouseld.ini(5) list them.
    static let autoplayKeys: [KeySpec] = [
        .flag("autoplay", "enabled", default: "true", help: """
            Advance to the next picture on its own, every `interval` seconds.
            """) { $0.autoplay.enabled = $1 },
        .number("autoplay", "interval", 0.1...86_400, unit: "seconds", default: "3.0", help: """
            Seconds between advances, counted from rest.
            """) { $0.autoplay.interval = $1 },
        .number("autoplay", "transition", 0...60, unit: "seconds", default: "0.5", help: """
            Seconds one automatic advance takes.
            """) { $0.autoplay.transition = $1 },
        KeySpec(section: "autoplay", name: "start_delay", domain: .number(0...86_400, unit: "seconds"),
                accepts: "seconds, 0 to 86400, or empty for the interval", default: "", help: """
            How long the first picture stays before the first advance, seconds; empty: the `interval`.
            """) { c, v throws(ValueError) in
            c.autoplay.startDelay = v.isEmpty ? nil : try number(v, 0...86_400, unit: "seconds")
        },
        .number("autoplay", "resume_delay", 0...86_400, unit: "seconds", default: "2.0", help: """
            Seconds after an interaction (a touch or a command) ends, the carousel at rest, before autoplay resumes.
            """) { $0.autoplay.resumeDelay = $1 },
        .choice("autoplay", "direction", AutoplayDirection.self, default: "forward", help: """
            `forward` or `backward`.
            """) { $0.autoplay.direction = $1 },
        .choice("autoplay", "at_end", AutoplayAtEnd.self, default: "rewind", help: """
            Without wrap: `rewind` (animate back to the first) or `stop`.
            """) { $0.autoplay.atEnd = $1 },
        .choice("autoplay", "effect", TransitionEffect.self, default: "slide", help: """
            How automatic advances and `next`/`prev`/`goto` (socket, keys) change the picture: `slide`, `crossfade`
            (the next picture fades in over `transition` seconds, nothing moves) or `cut` (at once). A finger always
            slides, and a finger on a crossfade stops it on the picture that shows most.
            """) { $0.autoplay.effect = $1 },
    ]
}
