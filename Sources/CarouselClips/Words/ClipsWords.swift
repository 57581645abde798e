import CarouselCore
import CarouselWords

/// `[video]`: clips beside the pictures.
public struct VideoSettings: CapabilitySettings {
    /// Clips are shown; false: the album ignores them as it ignores any other file.
    public var enabled = true
    /// FFmpeg's V4L2 memory-to-memory decoder where the board has one (`auto`), or software only (`off`).
    public var hardware = VideoHardware.auto
    /// A clip starts again at its end while autoplay is off.
    public var loop = false
    /// Autoplay waits at most this long for a clip (seconds) before moving on.
    public var maxSeconds: Double = 120
    /// Clips with more coded pixels than this are skipped (bounded memory).
    public var maxPixels = 8_294_400

    public init() {}
}

public enum VideoHardware: String, CaseIterable, Sendable {
    case auto, off
}

/// What video clips say to the world: `[video]`, the `video` status field,
/// the events of a clip starting and ending.
public enum ClipsWords {
    public static let words = CapabilityWords(
        name: "video",
        sections: [SectionSpec(name: "video", help: "Clips beside the pictures: played where they stand, without sound.")],
        keys: keys.map(\.inBag),
        status: [StatusWords("video", help: """
            The clip on the page, null on a picture: `image`, `index`, `state` (`playing`, `paused`, `ended`), \
            `position` and `duration` (seconds), `frames` shown, `dropped`, `decoder`.
            """)],
        events: [
            EventWords(didStartVideo, help: "A clip on the page started playing (`index`, `image`, `duration`)."),
            EventWords(didEndVideo, help: """
                A clip stopped at its end, at `[video] max_seconds` or on a failure (`index`, `image`, `frames`, `dropped`).
                """),
        ])

    /// The events' names, as subscribers and MQTT's event topic see them.
    public static let didStartVideo = "didStartVideo"
    public static let didEndVideo = "didEndVideo"

    /// The keys of `[video]`, in the order the shipped INI, the README's table and carouseld.ini(5) list them.
    static let keys: [KeyDeclaration<VideoSettings>] = [
        .flag("video", "enabled", default: "true", needs: .tune, help: """
            Clips in the album folder (mp4, m4v, mov, mkv, webm) are items of the carousel: the first frame stands for
            a clip in the strip and while swiping; when the carousel comes to rest on it, it plays at its own timing,
            without sound. false: clips are ignored like any other file.
            """) { $0.enabled = $1 },
        // Which devices decode: V4L2's memory-to-memory nodes.
        .choice("video", "hardware", VideoHardware.self, default: "auto", needs: .administer, help: """
            `auto`: FFmpeg's V4L2 memory-to-memory decoder where the board has one for the clip's codec (a Raspberry
            Pi 4's H.264), software otherwise; `off`: software only.
            """) { $0.hardware = $1 },
        .flag("video", "loop", default: "false", needs: .tune, help: """
            While autoplay is off, a clip starts again at its end (otherwise its last frame stays). With autoplay on,
            the carousel moves on at a clip's end.
            """) { $0.loop = $1 },
        .number("video", "max_seconds", 1...86_400, unit: "seconds", default: "120", needs: .tune, help: """
            Autoplay waits for a clip's end, at most this long; then it moves on.
            """) { $0.maxSeconds = $1 },
        // It sizes the decoder's memory: not a look, so `configure`.
        .integer("video", "max_pixels", 100_000...100_000_000, default: "8294400", needs: .configure, help: """
            Clips whose frames have more pixels than this are skipped with one log line (the decoder's memory grows
            with the frame size; the default is 3840x2160).
            """) { $0.maxPixels = $1 },
    ]
}
