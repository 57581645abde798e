extension Schema {
    /// The keys of `[video]`, in the order the shipped INI, the README's table and carouseld.ini(5) list them.
    static let videoKeys: [KeySpec] = [
        flag("video", "enabled", default: "true", help: """
            Clips in the album folder (mp4, m4v, mov, mkv, webm) are items of the carousel: the first frame stands for
            a clip in the strip and while swiping; when the carousel comes to rest on it, it plays at its own timing,
            without sound. false: clips are ignored like any other file.
            """) { $0.video.enabled = $1 },
        choice("video", "hardware", VideoHardware.self, default: "auto", help: """
            `auto`: FFmpeg's V4L2 memory-to-memory decoder where the board has one for the clip's codec (a Raspberry
            Pi 4's H.264), software otherwise; `off`: software only.
            """) { $0.video.hardware = $1 },
        flag("video", "loop", default: "false", help: """
            While autoplay is off, a clip starts again at its end (otherwise its last frame stays). With autoplay on,
            the carousel moves on at a clip's end.
            """) { $0.video.loop = $1 },
        number("video", "max_seconds", 1...86_400, unit: "seconds", default: "120", help: """
            Autoplay waits for a clip's end, at most this long; then it moves on.
            """) { $0.video.maxSeconds = $1 },
        integer("video", "max_pixels", 100_000...100_000_000, default: "8294400", help: """
            Clips whose frames have more pixels than this are skipped with one log line (the decoder's memory grows
            with the frame size; the default is 3840x2160).
            """) { $0.video.maxPixels = $1 },
    ]
}
