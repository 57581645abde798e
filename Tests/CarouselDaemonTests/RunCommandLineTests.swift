import CarouselDaemon
import Testing

/// The service's command line, read without ArgumentParser, and every
/// other form left to it.
@Suite("run's plain command line")
struct RunCommandLineTests {
    @Test func thePlainFormsAreRead() {
        let defaults = RunCommandLine([String]())
        #expect(defaults?.config == "/etc/carouseld/carouseld.ini" && defaults?.display == "drm")
        #expect(RunCommandLine(["run"]) == defaults)
        let service = RunCommandLine(["run", "--config", "/etc/carouseld/carouseld.ini"])
        #expect(service == defaults)
        let both = RunCommandLine(["run", "--display=offscreen:320x200", "--config", "/tmp/c.ini"])
        #expect(both?.config == "/tmp/c.ini" && both?.display == "offscreen:320x200")
        let noRun = RunCommandLine(["--config=/a b.ini", "--display", "drm"])
        #expect(noRun?.config == "/a b.ini" && noRun?.display == "drm")
    }

    @Test(arguments: [
        ["--version"], ["-h"], ["--help"], ["run", "--help"], ["help"],
        ["simulate", "script"], ["check-config", "/etc/carouseld/carouseld.ini"], ["run", "run"],
        ["run", "--config"], ["run", "--config", ""], ["run", "--config="], ["run", "--config", "-x"],
        ["run", "--config", "a", "--config", "b"], ["run", "--config=a", "--config", "b"],
        ["run", "--display", "fbdev"], ["run", "--display", "offscreen"], ["run", "--verbose", "x"],
        ["run", "--", "x"], ["--config", "a", "run"], ["run", "-c", "a"],
    ])
    func everythingElseIsArgumentParsers(_ arguments: [String]) {
        #expect(RunCommandLine(arguments) == nil)
    }
}
