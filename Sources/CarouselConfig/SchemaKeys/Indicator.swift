import CarouselCore

extension Schema {
    /// The keys of `[indicator]`, in the order the shipped INI, the README's table and carouseld.ini(5) list them.
    static let indicatorKeys: [KeySpec] = [
        .flag("indicator", "enabled", default: "true", help: "Page dots.") { $0.indicator.enabled = $1 },
        .choice("indicator", "position", IndicatorPosition.self, default: "bottom", help: """
            The screen edge the dots sit at.
            """) { $0.indicator.position = $1 },
        .color("indicator", "color", default: "#FFFFFF80", help: "The dots of the other pages.") { $0.indicator.color = $1 },
        .color("indicator", "current_color", default: "#FFFFFF", help: """
            The dot of the current page.
            """) { $0.indicator.currentColor = $1 },
        .number("indicator", "size", 1...200, unit: "pixels", default: "10", help: """
            The dots' diameter, pixels.
            """) { $0.indicator.size = $1 },
        .number("indicator", "spacing", 0...500, unit: "pixels", default: "12", help: """
            The gap between two dots, pixels.
            """) { $0.indicator.spacing = $1 },
        .number("indicator", "margin", 0...2000, unit: "pixels", default: "24", help: """
            The dots' distance from the screen's edge, pixels.
            """) { $0.indicator.margin = $1 },
        .flag("indicator", "hides_for_single_page", default: "true", help: """
            No dots when there is only one page.
            """) { $0.indicator.hidesForSinglePage = $1 },
    ]
}
