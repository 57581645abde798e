extension Schema {
    /// The keys of `[input]`, in the order the shipped INI, the README's table and carouseld.ini(5) list them.
    static let inputKeys: [KeySpec] = [
        .text("input", "seat", "a udev seat name", default: "seat0", help: """
            The udev seat whose devices are used.
            """) { c, v throws(ValueError) in
            guard !v.isEmpty else { throw ValueError("expected a seat name such as seat0") }
            c.input.seat = v
        },
        .number("input", "touch_slop", 1...200, unit: "pixels", default: "10", help: """
            How far a finger moves before a drag starts, in pixels of a 160 dpi screen: the slop scales so that a drag
            starts after the same distance under the finger on every panel. The density comes from the touchscreen's
            own size when libinput reports it in millimetres, else from the display's (EDID); a log line says which
            and what the slop became. A panel that reports neither keeps the configured pixels.
            """) { $0.carousel.touchSlop = $1 },
        .text("input", "calibration", "six numbers or empty", default: "", help: """
            libinput's calibration matrix, six numbers (such as `1 0 0 0 1 0`); empty: none. `carouseld calibrate
            --config` writes it.
            """) { c, v throws(ValueError) in
            if v.isEmpty { c.input.calibration = nil; return }
            let parts = v.split(whereSeparator: { $0 == " " || $0 == "," }).map { Double($0) }
            guard parts.count == 6, parts.allSatisfy({ $0?.isFinite == true }) else {
                throw ValueError("expected six numbers (libinput calibration matrix), e.g. 1 0 0 0 1 0")
            }
            c.input.calibration = parts.map { $0! }
        },
        .flag("input", "pointer", default: "true", help: "Mice and touchpads drag with a button held.") { $0.input.pointer = $1 },
        .flag("input", "keyboard", default: "true", help: """
            Keys move the carousel: arrows, PageUp/PageDown, Home/End, Space (also IR remotes).
            """) { $0.input.keyboard = $1 },
    ]
}
