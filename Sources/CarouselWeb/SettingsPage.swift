import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselWords

/// The Settings page: every key the schema declares, by section, with its
/// help, what it accepts, its value and where that comes from. A key the
/// web's grant may set is a form that `keep`s it (the daemon checks it with
/// the same rules and words as check-config) and, when the settings file
/// holds it, a reset (`forget`); a key that needs `administer` is shown,
/// not editable.
enum SettingsPage {
    /// The page; `problem` is the daemon's refusal of `key`'s last value, shown beside it.
    static func render(config path: String, problem: (key: String, value: String, message: String)?) -> String {
        let sources: ConfigurationSources
        do {
            sources = try readConfigurationLayers(path).sources
        } catch {
            return "<p class=\"problem\">The configuration cannot be read: \(htmlEscaped("\(error)"))</p>"
        }
        var out = """
            <p class="lead">Changes apply at once and are kept on this frame (in its settings file); \
            <code>carouseld.ini</code> is never rewritten. Reset gives a key back to <code>carouseld.ini</code>'s value.</p>

            """
        if let problem {
            out += "<p class=\"problem\" role=\"alert\">\(htmlEscaped("\(problem.key) = \(problem.value): \(problem.message)"))</p>\n"
        }
        for section in Schema.sectionSpecs {
            let keys = Schema.keys.filter { $0.section == section.name }
            guard !keys.isEmpty else { continue }
            let open = problem.map { $0.key.hasPrefix(section.name + ".") } ?? false
            out += "<details class=\"section\" id=\"s-\(section.name)\"\(open ? " open" : "")>"
            out += "<summary>[\(htmlEscaped(section.name))] <span>\(inline(section.help))</span></summary>\n"
            for spec in keys {
                out += row(spec, source: sources.entries["\(spec.section).\(spec.name)"],
                           settingsFile: sources.entries["control.settings"]?.value ?? "/var/lib/carouseld/settings.ini",
                           problem: problem?.key == "\(spec.section).\(spec.name)" ? problem : nil)
            }
            out += "</details>\n"
        }
        return out
    }

    static func row(_ spec: KeySpec, source: ConfigurationSources.Source?, settingsFile: String,
                    problem: (key: String, value: String, message: String)?) -> String {
        let name = "\(spec.section).\(spec.name)"
        let value = problem?.value ?? source?.value ?? spec.defaultValue
        let kept = source?.file == settingsFile
        let origin = source.map { kept ? "kept on this frame" : "from \($0.file):\($0.line)" } ?? "default"
        let editable = Grant.web.allows(Schema.capability(of: spec))
        var out = "<div class=\"key\" id=\"k-\(htmlEscaped(name))\">"
        out += "<h3>\(htmlEscaped(spec.name))</h3>"
        out += "<p class=\"help\">\(inline(spec.help))</p>"
        out += "<p class=\"accepts\">Takes: \(htmlEscaped(spec.accepts)) · \(htmlEscaped(origin))</p>"
        if let problem { out += "<p class=\"problem\" role=\"alert\">\(htmlEscaped(problem.message))</p>" }
        guard editable else {
            out += "<p class=\"value\"><code>\(htmlEscaped(value.isEmpty ? "(empty)" : value))</code> · set in carouseld.ini "
                + "by the board's administrator</p></div>\n"
            return out
        }
        out += "<form method=\"post\" action=\"/settings\" class=\"setting\">"
        out += "<input type=\"hidden\" name=\"key\" value=\"\(htmlEscaped(name))\">"
        out += field(spec, name: name, value: value)
        out += "<button type=\"submit\">Save</button></form>"
        if kept {
            out += "<form method=\"post\" action=\"/settings/reset\" class=\"reset\">"
            out += "<input type=\"hidden\" name=\"key\" value=\"\(htmlEscaped(name))\">"
            out += "<button type=\"submit\">Reset</button></form>"
        }
        return out + "</div>\n"
    }

    /// The input for `spec`'s value: a choice is a list, a flag on or off, the rest text.
    static func field(_ spec: KeySpec, name: String, value: String) -> String {
        let id = "v-" + htmlEscaped(name)
        switch spec.domain {
        case let .choice(words):
            return "<select name=\"value\" id=\"\(id)\" aria-label=\"\(htmlEscaped(spec.name))\">" + words.map {
                "<option\($0.lowercased() == value.lowercased() ? " selected" : "")>\(htmlEscaped($0))</option>"
            }.joined() + "</select>"
        case .boolean:
            let on = ["true", "yes", "on", "1"].contains(value.lowercased())
            return "<select name=\"value\" id=\"\(id)\" aria-label=\"\(htmlEscaped(spec.name))\">"
                + "<option\(on ? " selected" : "")>true</option><option\(on ? "" : " selected")>false</option></select>"
        default:
            return "<input type=\"text\" name=\"value\" id=\"\(id)\" value=\"\(htmlEscaped(value))\" "
                + "aria-label=\"\(htmlEscaped(spec.name))\" autocomplete=\"off\" spellcheck=\"false\">"
        }
    }

    /// Help text as the schema writes it (`code` in backticks), escaped.
    static func inline(_ text: String) -> String {
        var out = ""
        var inCode = false
        for part in text.split(separator: "`", omittingEmptySubsequences: false) {
            out += inCode ? "<code>\(htmlEscaped(String(part)))</code>" : htmlEscaped(String(part))
            inCode.toggle()
        }
        return out
    }
}
