import ArgumentParser
import CarouselDRM
import CarouselPlatform

/// The display's smoke test: page-flips a moving colour bar through the DRM
/// backend, as the daemon will (acquire, write rows, present, wait for the
/// descriptor, dispatch), then restores the console and prints one JSON line.
struct DRMTest: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drm-test",
        abstract: "Page-flip a moving colour bar on the display, print measurements as JSON, restore the console.",
        discussion: """
        Output (one line): frames, api, device, driver, connector, mode (the last), panel_orientation, \
        flip_interval_ms_mean/max (between the kernel's flip timestamps), \
        flip_latency_ms_mean/max (present to flip event), draw_ms_mean, elapsed_s, flips_completed, \
        and switch_remodeset/reprobe_remodeset with --switch-mode/--reprobe; with --window-room: \
        room_granted, extent, windows (each: x, y, shown, generation, error, reason), room_granted_again \
        (asked once more after the windows), and with --measure-moves: window_present_us_mean (AddFB2 and \
        the commit of one window move), window_flip_us_mean (present to flip event), frame_copy_us_mean \
        (one panel-sized frame copied into the buffer) and the ratios window_to_copy_ratio, \
        window_flip_to_copy_ratio; the same as medians (_median). Each window shown or refused also prints 'window X Y shown|refused' \
        on standard output (then, with --step, waits for a line on standard input). \
        Progress lines go to standard error ('drm-test: drawing', 'holding', 'restored').
        """,
        shouldDisplay: false
    )

    @Option(help: "The DRM card (default: the first with a connected display).")
    var device: String?

    @Option(help: "The connector, such as HDMI-A-1 (default: the first connected).")
    var connector: String?

    @Option(help: "WIDTHxHEIGHT or WIDTHxHEIGHT@HZ (default: the preferred mode).")
    var mode: String?

    @Option(help: "auto, atomic or legacy.")
    var api: String = "auto"

    @Option(help: "Frames to flip.")
    var frames: Int = 120

    @Option(name: .customLong("hold-ms"), help: "Keep the last frame on screen this long before restoring.")
    var holdMilliseconds: Int = 0

    @Option(name: .customLong("after-restore-ms"),
            help: "Keep the device open this long after restoring (shows that the restore, not the kernel's last close, brought the console back).")
    var afterRestoreMilliseconds: Int = 0

    @Option(name: .customLong("switch-mode"),
            help: "Halfway through, switch to this mode (WIDTHxHEIGHT[@HZ]) as a configuration reload would.")
    var switchMode: String?

    @Flag(help: "After the frames, re-read the connector as on a hotplug event and report whether it re-modeset.")
    var reprobe = false

    @Flag(name: .customLong("restore-in-flight"),
          help: "Present one more frame and restore at once, without waiting for its flip (restore must wait for it).")
    var restoreInFlight = false

    @Flag(name: .customLong("flips-in-commit"),
          help: "Flip as the daemon does where the CRTC has no vblank: blocking commits, no events.")
    var flipsInCommit = false

    @Option(name: .customLong("window-room"),
            help: "After the frames, ask for buffers this many pixels longer than the mode along --window-axis, fill them with the window pattern and show --windows of it.")
    var windowRoom: Int?

    @Option(name: .customLong("window-axis"), help: "horizontal or vertical.")
    var windowAxis: String = "horizontal"

    @Option(help: "Windows to show, X,Y separated by ';' (e.g. '0,0;1,0;333,0').")
    var windows: String = "0,0"

    @Flag(help: "After each window, print its line and wait for a line on standard input (a capture from the host).")
    var step = false

    @Flag(name: .customLong("unchecked-windows"),
          help: "Let the kernel, not the backend, refuse windows outside the buffer.")
    var uncheckedWindows = false

    @Option(name: .customLong("measure-moves"),
            help: "After the windows, time this many window moves and as many full-frame copies.")
    var measureMoves: Int = 0

    @Option(name: .customLong("window-switch-mode"),
            help: "After the windows (and moves), switch to this mode, show the window at (0, 0), ask for the room again and show the window one pixel along the axis.")
    var windowSwitchMode: String?

    @Option(name: .customLong("wait-seconds"),
            help: "If there is no DRM device or no display yet, wait up to this long for one (as the daemon does at boot).")
    var waitSeconds: Int = 0

    func validate() throws { _ = try flipTest() }

    func run() throws {
        guard let fields = try flipTest().run() else { throw ExitCode(1) }
        print(JSONValue.fields(fields).encoded)
    }

    /// The options as typed, handed to the DRM room, which checks them.
    private func flipTest() throws -> DRMFlipTest {
        do {
            var test = try DRMFlipTest(device: device, connector: connector, mode: mode, api: api, frames: frames,
                                   holdMilliseconds: holdMilliseconds, afterRestoreMilliseconds: afterRestoreMilliseconds,
                                   switchMode: switchMode, reprobe: reprobe, restoreInFlight: restoreInFlight,
                                   windowRoom: windowRoom, windowAxis: windowAxis, windows: windows, step: step,
                                   uncheckedWindows: uncheckedWindows, measureMoves: measureMoves,
                                   windowSwitchMode: windowSwitchMode, waitSeconds: waitSeconds)
            test.flipsInCommit = flipsInCommit
            return test
        } catch {
            throw ValidationError(error.message)
        }
    }
}
