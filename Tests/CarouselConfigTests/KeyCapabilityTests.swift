// Who may set which key: a key that reaches past the frame (a path, a
// device, a broker, credentials, the control socket) is administer, so that
// a way in granted less (MQTT) can never point the frame at a file, a
// device or a broker.

import CarouselConfig
import CarouselCore
import Testing

@Suite("Which keys a remote may set")
struct KeyCapabilityTests {
    func name(_ spec: KeySpec) -> String { "\(spec.section).\(spec.name)" }

    @Test("every key that names a path, a device, a broker or credentials is administer")
    func pathsAndDevices() {
        // What the key's own accepts text says it takes, so a new key is caught too.
        let reaching = ["path", "folder", "device", "/sys", "/dev", "gpio", "udev", "connector", "mqtt://", "http"]
        for spec in Schema.keys where reaching.contains(where: spec.accepts.lowercased().contains) {
            #expect(Schema.capability(of: spec) == .administer, "\(name(spec)) accepts \(spec.accepts)")
        }
        for key in ["overlay.text_file", "images.path", "images.files", "mqtt.password_file", "mqtt.broker", "mqtt.username",
                    "mqtt.topic", "control.socket", "control.allow_uids", "display.device", "power.presence", "power.backlight",
                    "video.hardware", "input.seat", "sync.api_key_file"] {
            #expect(Schema.capability(ofKey: key) == .administer, "\(key)")
        }
        for spec in Schema.keys where ["mqtt", "sync", "control"].contains(spec.section) {
            #expect(Schema.capability(of: spec) == .administer, "\(name(spec))")
        }
    }

    @Test("MQTT may set only keys that change how the frame looks and moves")
    func whatMQTTMaySet() {
        let settable = Schema.keys.filter { Grant.mqtt.allows(Schema.capability(of: $0)) }.map(name)
        for key in ["autoplay.interval", "autoplay.transition", "autoplay.effect", "power.brightness", "power.dim_level",
                    "indicator.enabled", "overlay.clock"] {
            #expect(settable.contains(key), "\(key)")
        }
        // Memory it sizes, the log, the screen's mode, fonts (a fontconfig pattern may name a file): configure.
        for key in ["images.cache_mb", "images.decode_mb", "images.max_pixels", "video.max_pixels", "log.level",
                    "display.mode", "overlay.font"] {
            #expect(!settable.contains(key), "\(key)")
            #expect(Schema.capability(ofKey: key) == .configure, "\(key)")
        }
        // Short names are the same keys.
        #expect(Schema.capability(ofKey: "interval") == .tune)
        #expect(Schema.capability(ofKey: "autoplay") == .tune)
        #expect(Schema.capability(ofKey: "no.such_key") == nil)
    }
}
