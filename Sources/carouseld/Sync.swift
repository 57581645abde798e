import ArgumentParser
import CarouselSync

struct Sync: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fetch pictures from Immich or an rclone remote into the album ([sync]), now and every interval.",
        discussion: """
        Runs as carouseld-sync.service, apart from the daemon (which stays off the network). Only files it \
        wrote are ever replaced or removed (its manifest is in the state directory: $STATE_DIRECTORY, \
        else --state). SIGHUP syncs at once. Exit status: 0, 1 a --once pass failed, 2 bad configuration.
        """
    )

    @Option(help: "The INI configuration file.") var config = "/etc/carouseld/carouseld.ini"
    @Flag(help: "One pass, then exit (for timers and for trying a configuration).") var once = false
    @Option(help: "The state directory when $STATE_DIRECTORY is not set.") var state = "/var/lib/carouseld-sync"

    func run() throws {
        let status = SyncCommand.run(configuration: try loadConfiguration(config), stateDirectory: SyncCommand.stateDirectory(or: state),
                                     once: once)
        if status != 0 { throw ExitCode(status) }
    }
}
