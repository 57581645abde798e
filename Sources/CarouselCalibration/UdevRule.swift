/// A udev rule that gives one touchscreen its calibration matrix through
/// LIBINPUT_CALIBRATION_MATRIX, which libinput reads when it opens the
/// device (every libinput user on the machine then gets the calibration,
/// not only carouseld).
public enum UdevRule {
    /// The rule file's text: a comment and one rule matched on the device's
    /// kernel name (`ATTRS{name}`, as `libinput list-devices` shows it).
    ///
    /// udev compares `==` values as shell globs and ends a value at `"`,
    /// so those characters in the name (`*`, `?`, `[`, `"`, `\`, `|`) are
    /// matched by `?`, any one character; control characters likewise.
    public static func text(deviceName: String, matrix: CalibrationMatrix) -> String {
        """
        # Written by carouseld calibrate: the touchscreen "\(comment(deviceName))" mapped onto its panel.
        # libinput reads this when it opens the device; apply it with
        #   udevadm control --reload && udevadm trigger --subsystem-match=input --action=change
        # and restart carouseld (or anything else reading the touchscreen).
        ACTION=="add|change", SUBSYSTEM=="input", KERNEL=="event*", ATTRS{name}=="\(pattern(deviceName))", ENV{LIBINPUT_CALIBRATION_MATRIX}="\(matrix.text)"

        """
    }

    /// `name` as a udev match value that matches exactly this name.
    static func pattern(_ name: String) -> String {
        String(name.unicodeScalars.map { s -> Character in
            if "*?[]\"\\|".unicodeScalars.contains(s) || s.value < 0x20 || s.value == 0x7F { return "?" }
            return Character(s)
        })
    }

    /// `name` safe on one comment line.
    static func comment(_ name: String) -> String {
        String(name.unicodeScalars.map { s -> Character in s.value < 0x20 || s.value == 0x7F ? "?" : Character(s) })
    }
}
