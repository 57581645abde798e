import CarouselCore

extension Schema {
    /// Keys that reach past the frame: they name a path, a device, a broker,
    /// credentials or the control socket, or decide which of them the daemon
    /// opens. Setting one is `administer`. Whole sections are listed by name.
    static let administeredSections: Set<String> = ["control", "mqtt", "sync"]
    static let administeredKeys: Set<String> = [
        "display.backend", "display.device", "display.connector",
        "input.seat",
        "images.path", "images.files",
        "power.backlight",
    ]

    /// Keys that only change how the frame looks and moves: nothing on the
    /// board they name, no memory they size, nothing a wrong value breaks
    /// that the next `set` cannot mend. Setting one is `tune`, which MQTT is
    /// granted. Every key in neither list is `configure`.
    static let tunedSections: Set<String> = ["carousel", "autoplay", "zoom", "indicator"]
    static let tunedKeys: Set<String> = [
        "display.background",
        "images.order", "images.fit", "images.blur_radius", "images.dim", "images.resume", "images.pair_portraits",
        "power.idle_off", "power.wake", "power.brightness", "power.dim_after", "power.dim_level", "power.schedule",
        "overlay.caption", "overlay.position", "overlay.clock", "overlay.clock_position",
        "overlay.size", "overlay.color", "overlay.backdrop",
    ]

    /// What `set` of `spec` needs.
    public static func capability(of spec: KeySpec) -> Capability {
        if let declared = spec.capability { return declared }
        let name = "\(spec.section).\(spec.name)"
        if administeredSections.contains(spec.section) || administeredKeys.contains(name) { return .administer }
        if tunedSections.contains(spec.section) || tunedKeys.contains(name) { return .tune }
        return .configure
    }

    /// What `set KEY` needs, for a key as `set` takes it (`section.key`, a
    /// short name, `autoplay`); nil for a key the schema does not know.
    public static func capability(ofKey key: String) -> Capability? {
        lookup(key).map(capability(of:))
    }
}
