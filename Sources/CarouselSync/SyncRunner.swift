import CarouselConfig
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// `carouseld sync`: a pass now, then one every `[sync] interval` minutes;
/// after a failure the next try comes sooner (1, 2, 4 … minutes, never
/// later than the interval). A reason is logged once, when it is new;
/// the frame keeps showing what the folder has meanwhile.
public final class SyncRunner {
    let settings: SyncSettings
    public let folder: String
    public let stateDirectory: String
    /// The last failure's text: a new one is logged, a repeat is not.
    private var lastReason: String?
    public private(set) var lastOutcome: SyncOutcome?

    public init(configuration: Configuration, stateDirectory: String) throws(SyncError) {
        guard configuration.sync.source != nil else {
            throw SyncError(.local, "no [sync] source in the configuration: nothing to fetch")
        }
        settings = configuration.sync
        folder = configuration.sync.folder ?? configuration.images.path
        self.stateDirectory = stateDirectory
    }

    public var manifestPath: String { stateDirectory + "/manifest.json" }
    /// In the folder, hidden (the album ignores dot-files): the frame's
    /// daemon reads it for its status and MQTT without seeing the sync's state.
    public var statusPath: String { folder + "/" + SyncStatusFile.name }

    func makeSource() throws(SyncError) -> SyncSourceClient {
        switch settings.source {
        case .immich?: return try ImmichSource(settings: settings, today: Self.today())
        case let .rclone(remote)?: return RcloneSource(remote: remote, configFile: settings.rcloneConfig, videos: settings.videos)
        case nil: throw SyncError(.local, "no [sync] source")
        }
    }

    /// One pass; the outcome, logged. Throws what stopped it before any file.
    @discardableResult
    public func pass() throws(SyncError) -> SyncOutcome {
        if mkdir(stateDirectory, 0o755) != 0, errno != EEXIST {
            throw SyncError(.local, "cannot create the state directory \(stateDirectory): \(errnoDescription(errno))")
        }
        let source = try makeSource()
        var pass = SyncPass(source: source, folder: SyncFolder(path: folder), manifestPath: manifestPath)
        pass.maxBytes = settings.maxMB * 1_048_576
        pass.maxFiles = settings.maxFiles
        // The long-running mode blocks SIGTERM for its signalfd: a pass ends after the file it is on.
        pass.shouldStop = terminationRequested
        let outcome: SyncOutcome
        do {
            outcome = try pass.run()
        } catch {
            writeStatus(nil, error: error)
            throw error
        }
        lastOutcome = outcome
        let manifest = (try? SyncManifest.load(manifestPath, folder: folder)) ?? SyncManifest(folder: folder)
        var line = "sync: \(manifest.entries.count) pictures from \(source.summary) in \(folder): \(outcome.downloaded) new"
        if outcome.bytesDownloaded > 0 { line += " (\(Self.megabytes(outcome.bytesDownloaded)))" }
        line += ", \(outcome.removed) removed, \(outcome.kept) unchanged"
        if outcome.capped > 0 { line += ", \(outcome.capped) over max_mb/max_files" }
        if !outcome.failed.isEmpty { line += ", \(outcome.failed.count) failed (\(outcome.failed[0]))" }
        log(.info, line)
        writeStatus(outcome, error: outcome.stoppedBy)
        if let stopped = outcome.stoppedBy { throw stopped }
        return outcome
    }

    /// Passes until `shouldStop` (checked while waiting, with the seconds to wait at most).
    public func runForever(waitUnlessStopped: (Int) -> Bool) {
        var failures = 0
        while true {
            var wait = settings.interval * 60
            do {
                try pass()
                if lastReason != nil { log(.info, "sync: working again") }
                lastReason = nil
                failures = 0
            } catch where error.kind == .stopped {
                // SIGTERM in the middle of a transfer: the wait below reads it and ends.
                wait = 0
            } catch {
                if error.message != lastReason {
                    log(error.kind == .unauthorized || error.kind == .local ? .error : .warning, "sync: \(error)")
                    lastReason = error.message
                }
                failures += 1
                wait = min(wait, 60 << min(failures - 1, 10))
            }
            if !waitUnlessStopped(wait) { return }
        }
    }

    /// What the last pass did, for `carouselctl status` and MQTT: a small JSON file.
    private func writeStatus(_ outcome: SyncOutcome?, error: SyncError?) {
        let manifest = (try? SyncManifest.load(manifestPath, folder: folder)) ?? SyncManifest(folder: folder)
        var fields: [JSONField] = [JSONField("time", .int(Int(time(nil))))]
        fields.append(JSONField("files", .int(manifest.entries.count)))
        fields.append(JSONField("bytes", .int(manifest.totalBytes)))
        if let outcome { fields.append(JSONField("downloaded", .int(outcome.downloaded))) }
        // A line, not a page: the daemon reads a few KB of it (server-supplied names can be long).
        fields.append(JSONField("error", error.map { .string(String($0.message.prefix(1000))) } ?? .null))
        do {
            try SyncFolder(path: folder).create()
            // The daemon reads it through the album's group; nobody else needs it.
            try IniRewriter.writeAtomically(path: statusPath, text: JSONValue.fields(fields).encoded + "\n", mode: 0o640)
        } catch {
            log(.warning, "sync: cannot write \(statusPath): \(error)")
        }
    }

    static func megabytes(_ bytes: Int) -> String {
        bytes >= 1_048_576 ? "\((bytes * 10 / 1_048_576) / 10).\((bytes * 10 / 1_048_576) % 10) MB" : "\(bytes / 1024) KB"
    }

    /// The local day, YYYY-MM-DD (Immich's memories are "on this day").
    static func today() -> String {
        var now = time(nil)
        var parts = tm()
        localtime_r(&now, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))"
    }
}

/// `carouseld sync` as a process: one pass with `once`, else passes until
/// SIGTERM or SIGINT (read through a signalfd; SIGHUP starts a pass at once).
public enum SyncCommand {
    /// systemd's StateDirectory= ($STATE_DIRECTORY), else `fallback`.
    public static func stateDirectory(or fallback: String) -> String {
        getenv("STATE_DIRECTORY").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? fallback
    }

    /// The exit status: 0, or 1 when a `once` pass failed (2: no [sync] to run).
    public static func run(configuration: Configuration, stateDirectory: String, once: Bool) -> Int32 {
        Log.threshold = configuration.logLevel
        for line in configuration.cleartextWarnings(for: .sync) { log(.warning, "sync: \(line)") }
        let runner: SyncRunner
        do {
            runner = try SyncRunner(configuration: configuration, stateDirectory: stateDirectory)
        } catch {
            log(.error, "sync: \(error)")
            return 2
        }
        if once {
            do {
                try runner.pass()
                return 0
            } catch {
                log(.error, "sync: \(error)")
                return 1
            }
        }
        let signals: Signals
        do {
            signals = try Signals([SIGTERM, SIGINT, SIGHUP])
        } catch {
            log(.error, "sync: \(error)")
            return 1
        }
        log(.info, "sync: into \(runner.folder) every \(configuration.sync.interval) min; state in \(stateDirectory)")
        runner.runForever { seconds in
            var request = pollfd(fd: signals.fd.raw, events: Int16(POLLIN), revents: 0)
            let end = MonotonicClock.now() + Int64(seconds) * 1_000_000
            while true {
                // Looked at once even with no time left: a SIGTERM that stopped the pass is read here.
                let left = end - MonotonicClock.now()
                if poll(&request, 1, Int32(max(0, min(left / 1000 + 1, 3_600_000)))) > 0 {
                    // All of them: a reload then a stop is a stop (SIGHUP is read first).
                    let received = signals.read()
                    if let stop = received.first(where: { $0 == SIGTERM || $0 == SIGINT }) {
                        log(.info, "sync: stopping (\(stop == SIGTERM ? "SIGTERM" : "SIGINT"))")
                        return false
                    }
                    if received.contains(SIGHUP) { return true }
                }
                if left <= 0 { return true }
            }
        }
        return 0
    }
}
