import CarouselCore
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// The frame's settings file (`[control] settings`): what `keep` changed,
/// read over carouseld.ini and its drop-ins. The daemon writes it whole each
/// time, under a temporary name synced and renamed over the old, so that a
/// reader (or a power cut) sees the old file or the new, never half.
public enum SettingsFile {
    /// The file's text with `section.key` set to `value` (nil: taken out),
    /// its other keys as they were, sections in the schema's order.
    public static func updated(_ text: String?, file: String, section: String, key: String, value: String?)
        throws(ConfigError) -> String
    {
        var entries: [(section: String, key: String, value: String)] = []
        if let text {
            for entry in try IniParser.parse(text, file: file) where !(entry.section == section && entry.key == key) {
                entries.removeAll { $0.section == entry.section && $0.key == entry.key }
                entries.append((entry.section, entry.key, entry.value))
            }
        }
        if let value { entries.append((section, key, value)) }
        var out = "# The frame's settings, written by carouseld (`keep`, the web page's Settings).\n"
            + "# Read after carouseld.ini and carouseld.ini.d/; `forget KEY` takes a key out.\n"
        let order = Schema.sectionNames
        let sections = Set(entries.map(\.section)).sorted {
            (order.firstIndex(of: $0) ?? .max, $0) < (order.firstIndex(of: $1) ?? .max, $1)
        }
        for name in sections {
            out += "\n[\(name)]\n"
            for entry in entries where entry.section == name { out += "\(entry.key) = \(entry.value)\n" }
        }
        return out
    }

    /// Writes `text` over `path` whole (`writeFileAtomically`). Returns why not, or nil.
    public static func write(_ text: String, to path: String) -> String? {
        writeFileAtomically(Array(text.utf8), to: path, mode: 0o640)
    }
}
