extension Schema {
    /// The keys of `[display]`, in the order the shipped INI, the README's table and carouseld.ini(5) list them.
    static let displayKeys: [KeySpec] = [
        .choice("display", "backend", DisplayBackendKind.self, default: "drm", help: """
            `drm` (DRM/KMS), or `fbdev` (a framebuffer device: SPI panels with fbtft, kernels without KMS;
            `connector`, `api` and `zero_copy` do not apply).
            """) { $0.display.backend = $1 },
        .text("display", "device", "auto or a DRM device path such as /dev/dri/card0", default: "auto", help: """
            The DRM device, `/dev/dri/cardN`, or `auto` (the first card with a connected display). With `backend =
            fbdev`: the framebuffer, `/dev/fbN`; `auto` is `/dev/fb0`.
            """) { c, v throws(ValueError) in
            let d = autoOrValue(v)
            if let d, !d.hasPrefix("/") { throw ValueError("expected auto or an absolute path such as /dev/dri/card0") }
            c.display.device = d
        },
        .text("display", "connector", "auto or a connector name such as HDMI-A-1", default: "auto", help: """
            The connector's name (`HDMI-A-1`, `DSI-1`, ...) or `auto` (the first connected one).
            """) { c, v throws(ValueError) in
            c.display.connector = autoOrValue(v)
        },
        .text("display", "mode", "auto, WIDTHxHEIGHT or WIDTHxHEIGHT@HZ", default: "auto", help: """
            `WIDTHxHEIGHT` or `WIDTHxHEIGHT@HZ` (such as `1920x1080@60`), or `auto` (the display's preferred mode).
            """) { c, v throws(ValueError) in
            guard let m = autoOrValue(v) else { c.display.mode = nil; return }
            guard let mode = ModeRequest(m) else { throw ValueError("expected auto, WIDTHxHEIGHT or WIDTHxHEIGHT@HZ (e.g. 1920x1080@60)") }
            c.display.mode = mode
        },
        KeySpec(section: "display", name: "rotation", domain: .choice(["0", "90", "180", "270"]),
                accepts: "0, 90, 180 or 270", default: "0", help: """
            Degrees the picture is turned, combined with the panel's own orientation.
            """) { c, v throws(ValueError) in
            guard let r = Int(v), [0, 90, 180, 270].contains(r) else { throw ValueError("expected 0, 90, 180 or 270") }
            c.display.rotation = r
        },
        .choice("display", "api", DisplayAPI.self, default: "auto", help: """
            The kernel modesetting interface: `auto`, `atomic` or `legacy`.
            """) { $0.display.api = $1 },
        .color("display", "background", default: "#000000", help: """
            The letterbox and empty-screen colour.
            """) { $0.display.background = $1 },
        .flag("display", "zero_copy", default: "true", help: """
            Slides move the display's scan-out window over pictures already in video memory instead of copying every
            frame; `false` if the driver shows the wrong part of the picture while sliding.
            """) { $0.display.zeroCopy = $1 },
    ]
}
