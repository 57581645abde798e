import CarouselCore

extension Schema {
    /// The keys of `[images]`, in the order the shipped INI, the README's table and carouseld.ini(5) list them.
    static let imagesKeys: [KeySpec] = [
        .text("images", "path", "a folder", default: "/var/lib/carouseld/images", help: """
            The folder of pictures, watched for changes.
            """) { c, v throws(ValueError) in
            guard !v.isEmpty else { throw ValueError("expected a folder path") }
            c.images.path = v
        },
        .text("images", "files", "comma-separated file paths, or empty", default: "", help: """
            Or an explicit comma-separated list of files, shown as given; it overrides `path`.
            """) { c, v throws(ValueError) in
            c.images.files = v.split(separator: ",").map { String($0.trimmingWhitespace()) }.filter { !$0.isEmpty }
        },
        .choice("images", "order", ImageOrder.self, default: "name", help: """
            `name` (natural: img2 before img10), `mtime`, `random` (one fixed shuffle, the same after a restart) or
            `shuffle` (a new order on every pass: every picture once per pass, never the same picture twice across the
            seam; the picture on screen and its neighbours never move, so with 4 pictures or fewer the order stays;
            `start_index` and `idle_return` count in the shuffled order). A `files` list is shown as given.
            """) { $0.images.order = $1 },
        .choice("images", "fit", FitMode.self, default: "contain", help: """
            `contain`, `cover`, `stretch`, `none` or `blur` (`contain` over a blurred, darkened `cover` of the same
            picture instead of bars; made once per picture when it is decoded). `cover` crops keep the faces the
            picture's XMP marks (digiKam, Lightroom, Picasa, Windows, the sync from Immich), all of them when they fit.
            """) { $0.images.fit = $1 },
        .number("images", "blur_radius", 0...500, unit: "pixels", note: " (fit = blur)", default: "40", help: """
            `fit = blur`: how soft the fill is, pixels at the screen's size (the Gaussian's standard deviation, as CSS
            `blur()` takes it).
            """) { $0.images.blurRadius = $1 },
        .number("images", "dim", 0...1, note: " (fit = blur: 0 keeps the fill's brightness, 1 is black)", default: "0.4", help: """
            `fit = blur`: how much darker the fill is, 0 (as bright as the picture) to 1 (black).
            """) { $0.images.dim = $1 },
        .integer("images", "max_pixels", 1_000_000...1_000_000_000, default: "64000000", help: """
            Larger images are refused before decoding.
            """) { $0.images.maxPixels = $1 },
        KeySpec(section: "images", name: "cache_mb", domain: .autoOrInteger(8...4096),
                accepts: "auto or 8 to 4096 (MiB)", default: "auto", help: """
            The decoded-image budget in MiB (pictures are kept at 3 bytes a pixel), or `auto`: room for exactly the
            pictures the carousel can need at once (on screen, where a motion comes to rest, the neighbours decoded
            ahead) at the item size, such as 4 full-screen pictures, and 1/64 of the board's memory for pictures paged
            past, kept so that the next pass shows them without decoding them again (16 MiB on a 1 GB board). A number
            is the whole budget, for pictures wanted and paged past (fewer decodes, more memory).
            """) { c, v throws(ValueError) in
            c.images.cacheMB = try autoOrValue(v).map { v throws(ValueError) in try integer(v, 8...4096) }
        },
        KeySpec(section: "images", name: "decode_mb", domain: .autoOrInteger(16...65536),
                accepts: "auto or 16 to 65536 (MiB)", default: "auto", help: """
            What one picture's decode may hold at its peak, in MiB: the file read into memory, what the codec keeps
            (all the coefficients of a progressive JPEG, every pixel of a lossless WebP, a HEIC or AVIF decoded whole by
            libheif) and the decoded pixels, counted from the file's header before anything is allocated. A picture
            that needs more is skipped with one line saying why and how to make it fit. `auto`: half of the board's
            memory as the kernel counts it (`MemTotal`: about 480 MiB on a 1 GB board, 230 MiB on a 512 MB one).
            """) { c, v throws(ValueError) in
            c.images.decodeMB = try autoOrValue(v).map { v throws(ValueError) in try integer(v, 16...65536) }
        },
        .flag("images", "resume", default: "true", help: """
            Start on the picture that was on screen at the last stop or power cut, if it is still there; its name is
            kept in the state directory (`$STATE_DIRECTORY/position`, systemd's StateDirectory, else
            `/var/lib/carouseld/position`, the folder made if its parent exists). `false`: always `start_index`.
            """) { $0.images.resume = $1 },
        .flag("images", "recursive", default: "false", help: """
            Pictures in subfolders too (not hidden ones), sorted by their path below `path` (`2024/summer/a.jpg`) and
            watched. Symbolic links to folders are followed, each folder once; at most 16 levels deep and 2000
            subfolders (one log line when a bound is hit).
            """) { $0.images.recursive = $1 },
        .flag("images", "pair_portraits", default: "false", help: """
            On a screen whose pages are wider than tall: two portraits next to each other in the album's order
            (shuffle included) share one page, each fitted to its half with `[carousel] spacing` between them; a
            portrait without a portrait partner stays alone. Pairs start from the first of each run of portraits, so
            the same folder pairs alike on every frame and after a restart. Whether a picture is a portrait is read
            from its header (EXIF orientation applied) when it is listed. The dots count pages, `goto` takes a page,
            and a tap selects the picture under the finger.
            """) { $0.images.pairPortraits = $1 },
    ]
}
