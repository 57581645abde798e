import CarouselPlatform

extension Schema {
    /// The keys of `[log]`, in the order the shipped INI, the README's table and carouseld.ini(5) list them.
    static let logKeys: [KeySpec] = [
        KeySpec(section: "log", name: "level", domain: .choice(LogPriority.allCases.map(\.description)),
                accepts: "error, warning, info or debug", default: "info", help: """
            The least urgent lines logged (to stderr, with syslog priority prefixes for journald).
            """) { c, v throws(ValueError) in c.logLevel = try logPriority(v) },
    ]
}
