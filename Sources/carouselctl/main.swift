import ArgumentParser

/// The control client. The daemon's control socket arrives with the service
/// work (issue 5); until then this binary only answers `--version` and
/// `--help`, and says so rather than pretending to talk to a daemon.
@main
struct Carouselctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "carouselctl",
        abstract: "Control a running carouseld through its control socket.",
        discussion: "The control socket is not part of this build yet: only --version and --help work.",
        version: "0.1.0"
    )
}
