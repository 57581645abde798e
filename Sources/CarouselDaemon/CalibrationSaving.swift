import CarouselCalibration
import CarouselConfig

extension CalibrationOutcome {
    /// Writes the fitted matrix where `carouseld calibrate` was told to:
    /// `config`'s `[input] calibration` key (the file is created if
    /// missing) and a udev rule at `udevRule` setting
    /// LIBINPUT_CALIBRATION_MATRIX for this touchscreen, each atomically
    /// (`IniRewriter`). `saved` hears each path once it is written. Throws
    /// at the first file that cannot be written; those before it stay.
    public func save(config: String?, udevRule: String?, saved: (String) -> Void) throws(ConfigWriteError) {
        if let config {
            try IniRewriter.update(path: config, section: "input", key: "calibration", value: matrix.text)
            saved(config)
        }
        if let udevRule {
            do {
                try IniRewriter.writeAtomically(path: udevRule, text: UdevRule.text(deviceName: device.name, matrix: matrix),
                                                mode: 0o644)
            } catch {
                throw ConfigWriteError(path: error.path, message: error.message
                                       + " (udev rules live in /etc/udev/rules.d, writable by root)")
            }
            saved(udevRule)
        }
    }
}
