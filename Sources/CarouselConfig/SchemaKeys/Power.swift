import CarouselCore

extension Schema {
    /// The keys of `[power]`, in the order the shipped INI, the README's table and carouseld.ini(5) list them.
    static let powerKeys: [KeySpec] = [
        // A week at most: longer is a typo (seconds for minutes) more likely than a wish.
        .number("power", "idle_off", 0...10_080, unit: "minutes", note: " (0 = never)", default: "0", help: """
            Minutes without a touch, a key or a command before the display goes off (KMS DPMS); a touch or a key wakes
            it; 0 = never. Reading requests (`status`, `list`, `screenshot`, `subscribe`) do not count as use.
            """) { $0.power.idleOff = $1 },
        .choice("power", "wake", WakePicture.self, default: "resume", help: """
            The picture shown when the display wakes: `resume` (the one it showed) or `next` (the next one, when the
            display was off for at least autoplay's `interval` with autoplay running: what a frame left on would show
            by then).
            """) { $0.power.wake = $1 },
        .text("power", "backlight", "auto, none or a name under /sys/class/backlight", default: "auto", help: """
            The panel's backlight under `/sys/class/backlight`: `auto` (the board's: a firmware interface first, then
            the panel's platform driver, then a raw one, as desktops choose), `none` (leave it alone), or a name such
            as `intel_backlight` or `backlight@0`. With one, `display off` also powers it down (`bl_power`) and waking
            lights it again. Boards without one (HDMI monitors) need nothing: `brightness`, `dim_after` and
            `dim_level` then do nothing. A backlight that cannot be written is one warning line and the display runs
            on without it (Troubleshooting in the README says which permissions it needs).
            """) { c, v throws(ValueError) in
            c.power.backlight = try BacklightChoice(v)
        },
        KeySpec(section: "power", name: "brightness", domain: .autoOrInteger(1...100),
                accepts: "auto or 1 to 100 (percent)", default: "auto", help: """
            The lit level, in percent of the backlight's range; `auto`: the level last set with `brightness N` (kept
            in the state directory), else the level the board had when carouseld started.
            """) { c, v throws(ValueError) in
            c.power.brightness = try autoOrValue(v).map { v throws(ValueError) in try integer(v, 1...100) }
        },
        .number("power", "dim_after", 0...10_080, unit: "minutes", note: " (0 = never)", default: "0", help: """
            Minutes without a touch, a key or a command before the backlight dims to `dim_level`; the first touch
            lights it again (and acts as usual: the picture is still visible). 0 = never. Dims only while the rules
            decide (not after `display on`) and only below the lit level.
            """) { $0.power.dimAfter = $1 },
        .integer("power", "dim_level", 1...100, default: "20", help: """
            The dimmed level, in percent of the backlight's range.
            """) { $0.power.dimLevel = $1 },
        .text("power", "schedule", "on-times, e.g. mon-fri 07:00-22:00, sat,sun 09:00-23:00; empty: always", default: "", help: """
            When the display is on, in local time (the system's time zone): days (`mon` ... `sun`, ranges such as
            `mon-fri` or `fri-mon`, or `daily`) followed by one or more on-times `HH:MM-HH:MM`, such as `mon-fri
            07:00-22:00, sat,sun 09:00-23:00`. An on-time may end at `24:00` or cross midnight (`daily 18:00-02:00`).
            Outside the on-times the display is off (as `display off`); a touch or a key wakes it for `idle_off`
            minutes (5 when `idle_off` is 0). The daemon shows its first picture before it goes dark at night;
            daylight-saving changes and a clock set by NTP or by hand move the next switch with them. Empty: always
            on.
            """) { c, v throws(ValueError) in
            do throws(PowerSchedule.ParseError) {
                c.power.schedule = try PowerSchedule.parse(v)
            } catch {
                throw ValueError(error.message)
            }
        },
    ]
}
