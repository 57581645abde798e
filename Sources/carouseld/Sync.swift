import ArgumentParser
import CarouselConfig
import CarouselDaemon
import CarouselPlatform
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
        // The sync's own secrets are checked (a key others may read is refused
        // with its chmod), not the daemon's: it runs as another user and
        // cannot read the MQTT password, nor needs to.
        let configuration: Configuration
        do {
            configuration = try readConfiguration(config, for: .sync)
        } catch let error as ConfigError {
            printError("carouseld: \(error)")
            throw ExitCode(2)
        } catch {
            log(.error, "sync: cannot start: \(error)")
            throw ExitCode(2)
        }
        let status = SyncCommand.run(configuration: configuration, stateDirectory: SyncCommand.stateDirectory(or: state),
                                     once: once)
        if status != 0 { throw ExitCode(status) }
    }
}
