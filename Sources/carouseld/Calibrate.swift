import ArgumentParser
import CarouselCalibration
import CarouselConfig
import CarouselDaemon
#if canImport(Glibc)
import Glibc
#endif

/// `carouseld calibrate`: targets on the display, touches read raw through
/// libinput, libinput's calibration matrix fitted and checked, and saved
/// where the user says.
struct Calibrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Calibrate the touchscreen against the display: touch the targets shown, save libinput's matrix.",
        discussion: """
        Shows \(CalibrationTargets.standard.targets.count) targets one after another on the display (the last \
        is a check point, not used for the fit), reads where the touchscreen says each was touched (with \
        the identity matrix, whatever is configured now), fits libinput's calibration matrix by least \
        squares, and reports how far off the check point is, in millimetres. Stop the running daemon first \
        (systemctl stop carouseld): the display and the touchscreen are needed here.

        Output on stdout, one line each:
          device "<name>" <sysname>            the touchscreen being calibrated
          target I/N at X Y                    a target is on screen, at logical pixels X Y
          touched I/N at RAWX RAWY             where the touchscreen said (fractions of its extent)
          matrix A B C D E F                   the fit (LIBINPUT_CALIBRATION_MATRIX)
          check MM mm uncalibrated MM mm       the check point's error with and without the fit
          saved PATH                           for each file written
        A fit worse than the uncalibrated panel at the check point is not saved (exit 1). \
        Without --config or --udev-rule (or with --dry-run) nothing is written.
        """
    )

    @Option(help: "The configuration file: its [display] and [input] settings are used, and the matrix is written to its [input] calibration key (the file is created if missing).")
    var config: String?

    @Option(name: .customLong("udev-rule"),
            help: "Write a udev rule setting LIBINPUT_CALIBRATION_MATRIX for this touchscreen to this file, e.g. /etc/udev/rules.d/99-touchscreen-calibration.rules.")
    var udevRule: String?

    @Flag(name: .customLong("dry-run"), help: "Print the matrix and the check point's error, write nothing.")
    var dryRun = false

    @Option(help: "Seconds to wait for each target to be touched.")
    var timeout: Double = 30

    func validate() throws {
        guard timeout.isFinite, timeout > 0, timeout <= 3600 else {
            throw ValidationError("--timeout: expected 0 to 3600 seconds, not \(timeout)")
        }
    }

    func run() throws {
        var configuration = Configuration()
        if let config, access(config, F_OK) == 0 { configuration = try loadConfiguration(config) }
        let status = CalibrationSession.runCommand(configuration: configuration, timeout: timeout, config: config,
                                                   udevRule: udevRule, dryRun: dryRun)
        if status != 0 { throw ExitCode(status) }
    }
}
