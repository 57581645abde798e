import CarouselConfig
import CarouselControl
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// The Status page: the versions, the display, the album, the sync's last
/// pass, MQTT, and the room left on the pictures' disk.
enum StatusPage {
    static func render(status: ControlReply?, config: Configuration?, pictures: String?) -> String {
        var rows: [(String, String)] = [("carouseld-web", CarouselVersion.string)]
        guard case let .ok(fields)? = status else {
            return table(rows) + "<p class=\"problem\">The frame does not answer.</p>"
        }
        rows.append(("carouseld", fields["version"]?.stringValue ?? "?"))
        if case let .object(display)? = fields["display"] {
            let parts = ["backend", "connector", "mode", "rotation", "power"].compactMap { key -> String? in
                guard let value = display[key], value != .null else { return nil }
                return "\(key) \(value.stringValue ?? shown(value))"
            }
            rows.append(("Display", parts.joined(separator: " · ")))
            if let brightness = display["brightness"]?.intValue { rows.append(("Brightness", "\(brightness)%")) }
        }
        rows.append(("Album", "\(fields["count"]?.intValue ?? 0) pictures and clips"))
        rows.append(("Sync", syncLine(fields["sync"])))
        rows.append(("MQTT", config?.mqtt.broker.map { "broker \($0)" } ?? "off ([mqtt] broker is empty)"))
        if let pictures { rows.append(("Disk", diskLine(pictures))) }
        if let uptime = fields["uptime_ms"]?.intValue { rows.append(("Running for", duration(uptime / 1000))) }
        return table(rows)
    }

    static func table(_ rows: [(String, String)]) -> String {
        "<dl class=\"status-table\">" + rows.map { "<dt>\(htmlEscaped($0.0))</dt><dd>\(htmlEscaped($0.1))</dd>" }.joined()
            + "</dl>"
    }

    static func shown(_ value: JSONValue) -> String {
        var out = ""
        value.encode(into: &out)
        return out
    }

    static func syncLine(_ value: JSONValue?) -> String {
        guard case let .object(sync)? = value else { return "off ([sync] source is empty)" }
        if let error = sync["error"]?.stringValue { return "last pass: \(error)" }
        let files = sync["files"]?.intValue ?? 0
        return "last pass: \(files) file\(files == 1 ? "" : "s") fetched"
    }

    /// Free and total space of the file system holding `folder`.
    static func diskLine(_ folder: String) -> String {
        var info = statvfs()
        guard statvfs(folder, &info) == 0 else { return "\(folder): \(String(cString: strerror(errno)))" }
        let free = Int64(info.f_bavail) * Int64(info.f_frsize)
        let total = Int64(info.f_blocks) * Int64(info.f_frsize)
        return "\(bytes(free)) free of \(bytes(total)) (\(folder))"
    }

    static func bytes(_ n: Int64) -> String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(n)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(n) bytes" : String(Int(value * 10) / 10) + "." + String(Int(value * 10) % 10) + " " + units[unit]
    }

    static func duration(_ seconds: Int) -> String {
        let d = seconds / 86400, h = seconds % 86400 / 3600, m = seconds % 3600 / 60
        return d > 0 ? "\(d) d \(h) h" : h > 0 ? "\(h) h \(m) min" : "\(m) min \(seconds % 60) s"
    }
}
