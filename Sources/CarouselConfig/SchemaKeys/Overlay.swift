import CarouselCore

extension Schema {
    /// The keys of `[overlay]`, in the order the shipped INI, the README's table and carouseld.ini(5) list them.
    static let overlayKeys: [KeySpec] = [
        .choice("overlay", "caption", CaptionKind.self, default: "none", help: """
            A caption on each picture, drawn into the picture when it is decoded (so it slides with its picture and
            costs nothing per frame): `none`; `date`, the day it was taken (EXIF `DateTimeOriginal`) as `12 March
            2024` (no date in the file: no caption); `name`, the file name without its extension; `exif`, the
            picture's description (XMP `dc:description`, its `x-default` entry, else EXIF `ImageDescription`; read
            from JPEG, PNG and WebP, in the file's first 512 KiB); `sidecar`, the text of `NAME.txt` beside
            `NAME.jpg`: its first paragraph, at most 3 lines, from the first 4 KiB. A missing sidecar is no caption;
            one that is not UTF-8 is one warning line naming it, and no caption. A line wider than the picture is cut
            with an ellipsis.
            """) { $0.overlay.caption = $1 },
        .choice("overlay", "position", OverlayPosition.self, default: "bottom-left", help: """
            Where the caption sits on its picture (its lines are aligned to that side).
            """) { $0.overlay.position = $1 },
        .text("overlay", "clock", "none or a format such as HH:MM or h:MM am (HH, H, hh, h, MM, AM, am)", default: "none", help: """
            A clock that stays put on the screen while pictures slide under it: `none`, or a format of `HH` (00-23),
            `H` (0-23), `hh` (01-12), `h` (1-12), `MM` (minutes), `AM`/`am` (AM or PM), anything else as written:
            `HH:MM`, `h:MM am`. Local time (the system's time zone). It repaints its own rectangle once a minute, on
            the wall clock's minute, and a clock set by NTP or by hand moves it at once; at rest it is the loop's only
            wake-up.
            """) { c, v throws(ValueError) in
            if v.isEmpty || v.lowercased() == "none" { c.overlay.clock = nil; return }
            guard let format = ClockFormat(v) else {
                throw ValueError("expected none or a clock format with one hour field (HH, H, hh or h) and MM (no seconds: it repaints once a minute), e.g. HH:MM or h:MM am")
            }
            c.overlay.clock = format
        },
        .choice("overlay", "clock_position", OverlayPosition.self, default: "top-right", help: """
            Where the clock sits on the screen, as `position`; not the caption's corner (an error: they would cover
            each other).
            """) { $0.overlay.clockPosition = $1 },
        .text("overlay", "font", "a fontconfig pattern such as DejaVu Sans or Noto Sans:bold", default: "DejaVu Sans", help: """
            A fontconfig pattern (`Noto Sans:bold`); `fc-list : family` lists the installed families. Characters the
            font lacks (CJK in DejaVu Sans) come from the installed font fontconfig ranks next that has them
            (`fonts-wqy-zenhei`, `fonts-noto-cjk`). Right-to-left text (Arabic, Hebrew) is shaped by HarfBuzz and
            ordered by the Unicode bidirectional algorithm: a line is right to left when its first letter is; numbers
            keep their reading order inside it (a year in an Arabic caption, a clock `HH:MM` after an Arabic word),
            words of another script keep theirs, spaces and punctuation go with the text around them (explicit
            embedding controls are not followed). A family that is not installed is one warning line, and the carousel
            runs on without text.
            """) { c, v throws(ValueError) in
            guard !v.isEmpty, v.utf8.count <= 200, !v.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
                throw ValueError("expected a fontconfig pattern such as DejaVu Sans (fc-list : family lists the fonts)")
            }
            c.overlay.text.font = v
        },
        KeySpec(section: "overlay", name: "size", domain: .autoOrInteger(8...400),
                accepts: "auto or 8 to 400 (pixels; auto: a 25th of the screen's shorter side)", default: "auto", help: """
            The text's size in pixels; `auto`: a 25th of the screen's shorter side (43 pixels on 1920x1080).
            """) { c, v throws(ValueError) in
            c.overlay.text.size = try autoOrValue(v).map { v throws(ValueError) in try integer(v, 8...400) }
        },
        .color("overlay", "color", default: "#FFFFFF", help: "The text's colour.") { $0.overlay.text.color = $1 },
        .choice("overlay", "backdrop", TextBackdrop.self, default: "shadow", help: """
            What keeps text readable on any picture: `shadow` (a soft dark shadow), `scrim` (a translucent dark box
            behind the text) or `none`.
            """) { $0.overlay.text.backdrop = $1 },
    ]
}
