import CarouselCapabilities

/// What is made from the capabilities' other words (`CapabilityWords`
/// besides their keys): the README's table of them, and their requests in
/// carouselctl(1). Written by `swift run carousel-docs` with the rest.
extension SchemaDocs {
    /// The table of what the capabilities declare besides their keys sits
    /// between these lines.
    public static let wordsBegin = "<!-- capabilities: generated from their words by carousel-docs; do not edit -->"
    public static let wordsEnd = "<!-- end of capabilities -->"

    /// Each capability's requests (with the grant they need), status fields,
    /// events and Home Assistant entities, as its words say them.
    public static func readmeWordsTable() -> String {
        var lines = [wordsBegin, "", "| capability | word | what it is |", "| --- | --- | --- |"]
        func cell(_ text: String) -> String { text.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
        for words in Capabilities.all {
            for request in words.requests {
                lines.append("| \(words.name) | `\(request.usage)` | request: \(cell(request.help)) |")
            }
            for field in words.status {
                lines.append("| \(words.name) | `\(field.name)` | field of `status` and MQTT's state: \(cell(field.help)) |")
            }
            for event in words.events {
                lines.append("| \(words.name) | `\(event.name)` | event to subscribers and MQTT's event topic: \(cell(event.help)) |")
            }
            for entity in words.entities {
                let when = entity.shown == nil ? "" : ", while its settings have one"
                lines.append("| \(words.name) | \(entity.name) | Home Assistant \(entity.component) (`\(entity.object)`)\(when) |")
            }
        }
        lines += ["", wordsEnd]
        return lines.joined(separator: "\n")
    }

    /// carouselctl(1), whose capabilities' requests sit between these lines.
    public static let controlManPath = "man/carouselctl.1"
    public static let controlManBegin = #".\" capabilities: generated from their words by carousel-docs; do not edit"#
    public static let controlManEnd = #".\" end of capabilities"#

    /// Each capability's requests as carouselctl(1) lists them: the usage,
    /// then what it does.
    public static func controlManRequests() -> String {
        var lines = [controlManBegin]
        for request in Capabilities.all.flatMap(\.requests) {
            lines += [".TP", ".B " + roffText(request.usage)] + roffLines(request.help)
        }
        lines.append(controlManEnd)
        return lines.joined(separator: "\n")
    }

    /// `page` (carouselctl(1)) with its capabilities' requests written
    /// again; nil when its marker lines are missing or out of order.
    public static func controlManual(replacingIn page: String) -> String? {
        replacing(controlManBegin, controlManEnd, in: page, by: controlManRequests())
    }
}
