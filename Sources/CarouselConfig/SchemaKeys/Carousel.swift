import CarouselCore

extension Schema {
    /// The keys of `[carousel]`, in the order the shipped INI, the README's table and carouseld.ini(5) list them.
    static let carouselKeys: [KeySpec] = [
        .flag("carousel", "wrap", default: "true", help: """
            Loop forever: the last picture is followed by the first.
            """) { $0.carousel.wrap = $1 },
        .flag("carousel", "vertical", default: "false", help: """
            Scroll along the vertical axis instead of the horizontal one.
            """) { $0.carousel.vertical = $1 },
        .flag("carousel", "paging", default: "true", help: "Stop on page boundaries.") { $0.carousel.paging = $1 },
        .integer("carousel", "items_per_page", 1...100, default: "1", help: """
            The items one page moves by.
            """) { $0.carousel.itemsPerPage = $1 },
        .flag("carousel", "truncate_final_page", default: "false", help: """
            With paging and no wrap, no blank space after the last item.
            """) { $0.carousel.truncateFinalPage = $1 },
        .choice("carousel", "alignment", Alignment.self, default: "center", help: """
            Where an item rests: `center` (centred on the screen, neighbours peek in on both sides) or `edge` (at the
            leading edge).
            """) { $0.carousel.alignment = $1 },
        // Pixels no larger than the screen can be (Viewport.maximumSide), which
        // is what the scaler and KMS take.
        KeySpec(section: "carousel", name: "item_size", domain: .number(0.05...ItemSize.maximumPixels, unit: ""),
                accepts: "a fraction of the screen (0.05 to 1.0) or pixels (> 1, at most \(format(ItemSize.maximumPixels)))",
                default: "1.0", help: """
            At most 1: a fraction of the screen (below 1 the neighbours peek in); above 1: pixels, at most 16384.
            """) {
            c, v throws(ValueError) in
            c.carousel.itemSize = ItemSize(configValue: try number(v, 0.05...ItemSize.maximumPixels))!
        },
        .number("carousel", "spacing", 0...10_000, unit: "pixels", default: "0", help: """
            The gap between items, pixels.
            """) { $0.carousel.spacing = $1 },
        .flag("carousel", "bounces", default: "true", help: """
            Rubber-band past the ends when not wrapping.
            """) { $0.carousel.bounces = $1 },
        .flag("carousel", "scroll_enabled", default: "true", help: """
            `false`: a touch can only tap; commands still scroll.
            """) { $0.carousel.scrollEnabled = $1 },
        .number("carousel", "deceleration_rate", 0.9...0.9999, note: " per millisecond", default: "0.998", help: """
            Momentum decay per millisecond without paging (0.998 normal, 0.99 fast).
            """) { $0.carousel.decelerationRate = $1 },
        .number("carousel", "autoscroll", -100...100, unit: "items per second", note: " (0 = off)", default: "0", help: """
            A constant drift in items per second; 0 = off (autoplay pauses while it is on).
            """) { $0.carousel.autoscroll = $1 },
        .integer("carousel", "start_index", 0...10_000_000, default: "0", help: """
            The item shown at start.
            """) { $0.carousel.startIndex = $1 },
        .number("carousel", "idle_return", 0...86_400, unit: "seconds", note: " (0 = never)", default: "0", help: """
            Seconds after the last touch, key or command when the carousel goes back to `start_index` (an info
            terminal's next visitor sees the first picture); 0 = never.
            """) { $0.carousel.idleReturn = $1 },
    ]
}
