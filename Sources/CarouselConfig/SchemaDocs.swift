/// The three documents made from the schema: the shipped INI, the README's
/// key table (and its table of the capabilities' other words) and carouseld.ini(5). Each key's default, accepted values and
/// text come from its `KeySpec` and nowhere else, so what the pages say is
/// what `check-config` checks. `swift run carousel-docs` writes them;
/// `SchemaDocsTests` fails when a committed copy differs.
public enum SchemaDocs {
    /// Where each document lives in the repository.
    public static let iniPath = "etc/carouseld/carouseld.ini"
    public static let readmePath = "README.md"
    public static let manPath = "man/carouseld.ini.5"

    /// The README's key table sits between these lines; the rest of the
    /// README is written by hand.
    public static let readmeBegin = "<!-- keys: generated from the schema by carousel-docs; do not edit -->"
    public static let readmeEnd = "<!-- end of keys -->"

    // MARK: - The shipped INI

    static let iniHeader = """
        carouseld configuration. Every key is listed with its default value; \
        man carouseld.ini tells each in full.
        Booleans are true/false, durations are seconds (decimals allowed), colours \
        are #RRGGBB or #RRGGBBAA, sizes are pixels unless said otherwise. \
        A trailing comment needs a space after '#'. Validate with:
          carouseld check-config /etc/carouseld/carouseld.ini
        Apply changes without a restart: systemctl reload carouseld (or \
        carouselctl reload); a file with an error is refused and the running \
        configuration stays. [display] backend/device/connector/api, [input] seat and \
        [control] socket/mode/group take effect at the next restart.
        """

    /// `etc/carouseld/carouseld.ini`: every section and key with its default,
    /// each key after its text as a comment (and what it accepts, where the
    /// text does not already list it).
    public static func shippedINI() -> String {
        var lines: [String] = []
        for line in iniHeader.split(separator: "\n", omittingEmptySubsequences: false) {
            // Lines starting with spaces are examples: kept as written.
            lines += line.hasPrefix(" ") ? ["# " + line] : comment(String(line))
        }
        for section in Schema.sectionSpecs {
            lines.append("")
            lines += comment(plain(section.help))
            lines.append("[\(section.name)]")
            for spec in keys(of: section.name) {
                var text = plain(spec.help)
                if !helpListsAccepted(spec) { text += " Accepts \(spec.accepts)." }
                lines += comment(text)
                lines.append(spec.defaultValue.isEmpty ? "\(spec.name) =" : "\(spec.name) = \(spec.defaultValue)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Whether the text already says what the key takes: booleans (the
    /// header says them), free text (its text describes it) and choices
    /// whose words all appear in it.
    static func helpListsAccepted(_ spec: KeySpec) -> Bool {
        switch spec.domain {
        case .boolean, .text: return true
        case let .choice(words): return words.allSatisfy { spec.help.contains("`\($0)`") }
        default: return false
        }
    }

    // MARK: - The README

    /// The key table with its marker lines, as it stands in README.md.
    public static func readmeKeyTable() -> String {
        var lines = [readmeBegin, "", "| section | key | default | accepts | meaning |", "| --- | --- | --- | --- | --- |"]
        for section in Schema.sectionSpecs {
            for spec in keys(of: section.name) {
                let value = spec.defaultValue.isEmpty ? "(empty)" : "`\(spec.defaultValue)`"
                lines.append("| \(section.name) | \(spec.name) | \(value) | \(spec.accepts) | \(spec.help) |")
            }
        }
        lines += ["", readmeEnd]
        return lines.joined(separator: "\n")
    }

    /// `readme` with the text between the markers replaced by the key
    /// table, and between the words' markers (where it has them) by the
    /// capabilities' words; nil when the key table's markers are missing or
    /// out of order.
    public static func readme(replacingKeysIn readme: String) -> String? {
        guard let withKeys = replacing(readmeBegin, readmeEnd, in: readme, by: readmeKeyTable()) else { return nil }
        return replacing(wordsBegin, wordsEnd, in: withKeys, by: readmeWordsTable()) ?? withKeys
    }

    static func replacing(_ first: String, _ last: String, in text: String, by table: String) -> String? {
        guard let begin = text.firstRange(of: first), let end = text.firstRange(of: last),
              begin.upperBound <= end.lowerBound else { return nil }
        return String(text[..<begin.lowerBound]) + table + String(text[end.upperBound...])
    }

    // MARK: - carouseld.ini(5)

    /// The manual page's prose around the keys, as `help` texts are written
    /// (one paragraph per element, `code` in backticks).
    static let manDescription = [
        """
        carouseld reads one INI file, by default `/etc/carouseld/carouseld.ini`: at start, \
        on SIGHUP and on the control request `reload`. `carouseld sync` reads its `[sync]` section. \
        `carouseld check-config FILE` checks a file without touching any device (exit status 0 if \
        it is valid, 1 if not).
        """,
        """
        The file is made of `[section]` headers and `key = value` lines. Section and key names are \
        written in lower case as below. Lines starting with `#` or `;` are comments; a comment after a \
        value needs a space before and after its `#` or `;` (so that `#000000` stays a colour). \
        Spaces around the value are dropped. A key may appear once per section; a key left out \
        keeps its default, and a key written with nothing after `=` is empty, which for some keys \
        asks for a computed default (said below).
        """,
        """
        Booleans are `true` or `false` (`yes`/`no`, `on`/`off` and `1`/`0` are accepted too). \
        Numbers may have decimals where the range below has them; durations are seconds unless \
        said otherwise, sizes pixels. Colours are `#RRGGBB` or `#RRGGBBAA` (the last pair is \
        opacity). Words such as `contain` or `bottom` are taken in any case.
        """,
        """
        Every key is checked: an unknown section or key, a duplicate key or a bad value is reported \
        as `FILE:LINE: key = 'value': what is allowed` and the whole file is refused, for example \
        `carouseld.ini:42: interval = 'soon': expected a number (seconds)`.
        """,
    ]

    static let manReload = [
        """
        SIGHUP (`systemctl reload carouseld`) or the `reload` request reads the file again. A file \
        with any error is refused as a whole: one log line (and the error reply), and the carousel \
        runs on unchanged. A good file is applied at once, without a black frame: the picture on \
        screen stays (also when the folder, the order or the file list changed, as long as the \
        file is still listed), a new layout or fit keeps the old frame on screen until the pictures \
        are scaled anew, a running autoplay keeps its rhythm unless its interval changed. \
        `display.mode` switches the mode in place (a mode the connector lacks refuses the reload).
        """,
        """
        The keys that name what the daemon holds open, `display.backend`, `display.device`, \
        `display.connector`, `display.api`, `input.seat` and `control.socket`, `control.mode` and \
        `control.group`, wait for a restart: the reload applies everything else and names them \
        (`restart_required` in the reply, a warning log line); `carouselctl set` refuses them.
        """,
    ]

    /// `man/carouseld.ini.5`.
    public static func manPage() -> String {
        var out: [String] = [
            ".\\\" Generated from the schema (Sources/CarouselConfig) by carousel-docs; do not edit.",
            ".TH CAROUSELD.INI 5 \"\" \"carouseld\" \"File Formats\"",
            ".SH NAME",
            "carouseld.ini \\- configuration file of the carouseld image carousel",
            ".SH SYNOPSIS",
            ".I /etc/carouseld/carouseld.ini",
            ".SH DESCRIPTION",
        ]
        for (i, paragraph) in manDescription.enumerated() {
            if i > 0 { out.append(".PP") }
            out += roffLines(paragraph)
        }
        out.append(".SH SECTIONS AND KEYS")
        out += roffLines("""
            Each key with the values it takes (as `check-config` checks them) and its default.
            """)
        for section in Schema.sectionSpecs {
            out.append(".SS [\(section.name)]")
            out += roffLines(section.help)
            for spec in keys(of: section.name) {
                out.append(".TP")
                out.append(".B \(spec.name)")
                out.append("Accepts: " + roffText(spec.accepts) + ".")
                out.append(".br")
                out.append("Default: " + (spec.defaultValue.isEmpty ? "empty" : "\\fB" + roffText(spec.defaultValue) + "\\fR") + ".")
                out.append(".IP")
                out += roffLines(spec.help)
            }
        }
        out.append(".SH RELOAD")
        for (i, paragraph) in manReload.enumerated() {
            if i > 0 { out.append(".PP") }
            out += roffLines(paragraph)
        }
        out += [
            ".SH FILES",
            ".TP",
            ".I /etc/carouseld/carouseld.ini",
            "The configuration file.",
            ".SH SEE ALSO",
            ".BR carouseld (8),",
            ".BR carouselctl (1),",
            ".BR systemctl (1)",
        ]
        return out.joined(separator: "\n") + "\n"
    }

    // MARK: - Text

    static func keys(of section: String) -> [KeySpec] { Schema.keys.filter { $0.section == section } }

    /// A help text without its code marks, for the INI's comments.
    static func plain(_ text: String) -> String { text.filter { $0 != "`" } }

    /// `text` as `# ` comment lines of at most 78 columns.
    static func comment(_ text: String) -> [String] { ValueText.wrapped(text, width: 78, lead: "# ") }

    /// Plain text escaped for roff: backslashes, hyphens as minus signs
    /// (values and paths are typed as written), code spans in bold.
    static func roffText(_ text: String) -> String {
        var out = ""
        var code = false
        for c in text {
            switch c {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case "`":
                out += code ? "\\fR" : "\\fB"
                code.toggle()
            default: out.append(c)
            }
        }
        if code { out += "\\fR" }
        return out
    }

    /// A paragraph as roff input lines, one sentence a line (roff's own
    /// convention: it then spaces sentences right), none starting with a
    /// control character.
    static func roffLines(_ paragraph: String) -> [String] {
        let text = paragraph.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        var sentences: [String] = []
        var current = ""
        var previous: Character = " "
        var afterStop = false
        for c in text {
            if afterStop, c.isUppercase || c == "`", !current.hasSuffix("... ") {
                sentences.append(String(current.dropLast()))
                current = ""
            }
            afterStop = previous == "." && c == " "
            current.append(c)
            previous = c
        }
        sentences.append(current)
        return sentences.map { sentence in
            let line = roffText(sentence)
            return line.hasPrefix(".") || line.hasPrefix("'") ? "\\&" + line : line
        }
    }
}
