extension Schema {
    /// A topic (or topic prefix) we publish and subscribe under: no MQTT
    /// wildcards, no empty level at either end, not a broker's `$` topic.
    static func topicName(_ v: String, _ what: String) throws(ValueError) -> String {
        guard !v.contains("+"), !v.contains("#") else { throw ValueError("\(what) cannot contain the MQTT wildcards + or #") }
        guard !v.hasPrefix("/"), !v.hasSuffix("/"), !v.contains("//") else {
            throw ValueError("\(what) cannot start or end with '/' or have an empty level ('//')")
        }
        guard !v.hasPrefix("$") else { throw ValueError("\(what) cannot start with '$' (the broker's own topics)") }
        guard !v.contains(where: { $0 == "\0" || $0.isNewline }) else { throw ValueError("\(what) cannot contain control characters") }
        return v
    }

    /// The keys of `[mqtt]`, in the order the shipped INI, the README's table and carouseld.ini(5) list them.
    static let mqttKeys: [KeySpec] = [
        .text("mqtt", "broker", "mqtt://HOST:PORT or mqtts://HOST:PORT, or empty (no MQTT)", default: "", help: """
            The MQTT broker to join (Home Assistant, fleets), `mqtt://HOST:PORT` or `mqtts://HOST:PORT` (TLS); the
            port may be left out (1883, 8883 with TLS); IPv6 in brackets (`mqtt://[fd00::1]:1883`). Empty: no MQTT. A
            bad URL or port is refused at `check-config`, start and reload. The README's MQTT and Home Assistant
            section tells the rest.
            """) { c, v throws(ValueError) in
            if v.isEmpty { c.mqtt.broker = nil; return }
            c.mqtt.broker = try MQTTBroker.parse(v).get()
        },
        .text("mqtt", "username", "a user name or empty", default: "", help: """
            The user name at the broker; empty: none.
            """) { c, v throws(ValueError) in c.mqtt.username = v.isEmpty ? nil : v },
        .text("mqtt", "password_file", "an absolute path or empty", default: "", help: """
            The absolute path of a file whose first line is the password (the password never goes in the INI); it must
            be the service's user's and readable by it alone (`carouseld`, mode 0600): a file others may read is refused
            with the `chmod` that fixes it. Empty: no password. A missing, unreadable or empty file is one error at
            `check-config`, start and reload. A password going to an `mqtt://` broker on another machine is one warning.
            """) { c, v throws(ValueError) in
            guard !v.isEmpty else { c.mqtt.passwordFile = nil; return }
            guard v.hasPrefix("/") else { throw ValueError("expected an absolute path to a file holding the password") }
            c.mqtt.passwordFile = v
        },
        .text("mqtt", "ca_file", "an absolute path or empty (the system's CA store)", default: "", help: """
            CA certificates (PEM) that sign the broker's certificate, for `mqtts://`; empty: the system's store,
            `/etc/ssl/certs`.
            """) { c, v throws(ValueError) in
            guard !v.isEmpty else { c.mqtt.caFile = nil; return }
            guard v.hasPrefix("/") else { throw ValueError("expected an absolute path to a PEM file of CA certificates") }
            c.mqtt.caFile = v
        },
        .text("mqtt", "client_id", "a client id or empty (the host name)", default: "", help: """
            The client id at the broker, also the Home Assistant device's id; no spaces, `/`, `+` or `#`. Empty: the
            host name.
            """) { c, v throws(ValueError) in
            guard !v.isEmpty else { c.mqtt.clientID = nil; return }
            guard v.utf8.count <= 64, !v.contains(where: { "+#/ \t".contains($0) || $0.isNewline }) else {
                throw ValueError("expected at most 64 bytes without spaces, '/', '+' or '#' (it is a topic level too)")
            }
            c.mqtt.clientID = v
        },
        .text("mqtt", "topic", "a topic such as carouseld/kitchen, or empty (carouseld/CLIENT_ID)", default: "", help: """
            The topic everything of this frame goes under (`.../state`, `.../command`, ...); no wildcards. Empty:
            `carouseld/CLIENT_ID`.
            """) { c, v throws(ValueError) in
            c.mqtt.topic = v.isEmpty ? nil : try topicName(v, "topic")
        },
        .text("mqtt", "discovery_prefix", "a topic prefix such as homeassistant, or empty (no discovery)", default: "homeassistant", help: """
            Home Assistant's MQTT discovery prefix; empty: no discovery, and a reload that empties it removes the
            entities announced before.
            """) { c, v throws(ValueError) in
            c.mqtt.discoveryPrefix = v.isEmpty ? "" : try topicName(v, "discovery_prefix")
        },
        .integer("mqtt", "keepalive", 5...65535, default: "60", help: """
            Seconds: a keep-alive is sent when nothing else was, and a broker silent for this long (or one that never
            answers a connection) is left and joined again.
            """) { $0.mqtt.keepalive = $1 },
    ]
}
