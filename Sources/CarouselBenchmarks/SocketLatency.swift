#if canImport(Glibc)
import Glibc
#endif

// `carousel-bench --socket-latency [--clients 50] [--requests 200] [--rate 20]`:
// the control socket's round trip (request line sent → whole reply line
// read) with many clients at once, against the real carouseld on the
// offscreen display while autoplay keeps it composing frames.
//
// The clients live in one poll loop in this process (one thread: the
// machine's other cores are left to the daemon, and no client waits on the
// scheduler to be noticed). A round trip counts from the send to the reply's
// newline, so it includes the daemon's time composing a frame if the request
// arrived while it was doing so: that is the latency a script sees.

/// This process's CPU time (every thread), in nanoseconds.
func processCPUNanoseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

/// CLOCK_MONOTONIC in nanoseconds.
func monotonicNanoseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

struct SocketLatencyOptions {
    var clients = 50
    /// Requests per client in each many-client run.
    var requests = 200
    /// Requests per second per client for the steady-rate runs.
    var rate = 20
    var images: String?

    init(arguments: [String]) {
        var i = 0
        func value() -> String? {
            i += 1
            return i < arguments.count ? arguments[i] : nil
        }
        while i < arguments.count {
            switch arguments[i] {
            case "--clients": clients = value().flatMap { Int($0) } ?? clients
            case "--requests": requests = value().flatMap { Int($0) } ?? requests
            case "--rate": rate = value().flatMap { Int($0) } ?? rate
            case "--images": images = value()
            default: break
            }
            i += 1
        }
        clients = max(1, min(clients, 1000))
        requests = max(1, requests)
        rate = max(1, rate)
    }
}

/// A blocking-send, polled-receive connection to the control socket.
final class BenchConnection {
    let fd: Int32
    var input: [UInt8] = []
    /// When the request in flight was sent (0: none in flight).
    var sentAt: Int64 = 0
    var sent = 0
    var received = 0
    var nextSendAt: Int64 = 0

    init?(path: String) {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes); $0[bytes.count] = 0 }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if result != 0 {
            close(fd)
            return nil
        }
    }

    deinit { close(fd) }

    /// Writes the whole line (blocking: a request is tiny and the socket empty).
    func send(_ line: String) -> Bool {
        let bytes = Array((line + "\n").utf8)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + done, $0.count - done, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            done += n
        }
        return true
    }

    /// One receive buffer for every connection: the loop is single-threaded.
    nonisolated(unsafe) static var scratch = [UInt8](repeating: 0, count: 65536)

    /// Reads what is there; returns whether each complete line began with
    /// `{"ok":true` (nil: closed or failed).
    func receiveReplies() -> [Bool]? {
        let n = BenchConnection.scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if n < 0 { return errno == EAGAIN || errno == EINTR ? [] : nil }
        if n == 0 { return nil }
        input.append(contentsOf: BenchConnection.scratch[0..<n])
        var replies: [Bool] = []
        var start = 0
        while let newline = input[start...].firstIndex(of: 0x0A) {
            replies.append(input[start..<newline].starts(with: BenchConnection.okPrefix))
            start = newline + 1
        }
        if start > 0 { input.removeFirst(start) }
        return replies
    }

    static let okPrefix = Array("{\"ok\":true".utf8)

    /// Reads one reply, blocking (set-up only).
    func request(_ line: String) -> String? {
        guard send(line) else { return nil }
        while true {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 30_000) == 1 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return nil }
            input.append(contentsOf: buffer[0..<n])
            if let newline = input.firstIndex(of: 0x0A) {
                defer { input.removeFirst(newline + 1) }
                return String(decoding: input[..<newline], as: UTF8.self)
            }
        }
    }
}

/// The running daemon under test.
final class BenchDaemon {
    let pid: pid_t
    let folder: String
    let socketPath: String
    let logPath: String

    init?(binary: String, images: String) {
        var template = Array("/tmp/carousel-sock-XXXXXX".utf8CString)
        folder = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        socketPath = folder + "/c.sock"
        logPath = folder + "/stderr.log"
        guard shell("mkdir -p '\(folder)/images' && cp '\(images)'/* '\(folder)/images/'") else { return nil }
        let ini = """
            [images]
            path = \(folder)/images
            [autoplay]
            enabled = true
            interval = 0.1
            transition = 0.4
            start_delay = 0
            resume_delay = 0.1
            [control]
            socket = \(socketPath)
            max_clients = 64

            """
        let iniPath = folder + "/bench.ini"
        guard let f = fopen(iniPath, "w") else { return nil }
        fputs(ini, f)
        fclose(f)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = [binary, "run", "--config", iniPath, "--display", "offscreen:1280x800"]
        var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        var child: pid_t = 0
        guard posix_spawn(&child, binary, &actions, nil, &cArgs, environ) == 0 else { return nil }
        pid = child
    }

    /// Waits until the socket answers (generous limit).
    func waitUntilReady() -> Bool {
        for _ in 0..<600 {
            if let c = BenchConnection(path: socketPath), let reply = c.request("status"), reply.hasPrefix("{\"ok\":true") {
                return true
            }
            usleep(50_000)
        }
        return false
    }

    /// The daemon's user + system CPU time in nanoseconds (/proc/PID/stat fields 14 and 15).
    var cpuNanoseconds: Int64 {
        guard let f = fopen("/proc/\(pid)/stat", "r") else { return 0 }
        defer { fclose(f) }
        var line = [CChar](repeating: 0, count: 1024)
        guard fgets(&line, 1024, f) != nil else { return 0 }
        let text = line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        // The command name may contain spaces: the fields start after its ')'.
        guard let close = text.lastIndex(of: ")") else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Int64(fields[11]), let system = Int64(fields[12]) else { return 0 }
        return (user + system) * 1_000_000_000 / Int64(sysconf(Int32(_SC_CLK_TCK)))
    }

    var log: String {
        guard let f = fopen(logPath, "r") else { return "" }
        defer { fclose(f) }
        var out = ""
        var line = [CChar](repeating: 0, count: 4096)
        while fgets(&line, 4096, f) != nil { out += line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } }
        return out
    }

    func stop() {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        _ = shell("rm -rf '\(folder)'")
    }
}

/// Who else is connected during a run, doing nothing useful.
enum Bystander: String {
    case none = ""
    /// Sends `subscribe`, then never reads: its events pile up in the daemon.
    case stuckSubscriber = "+ 1 subscriber that never reads"
    /// Subscribes and pipelines `status` requests as fast as the socket takes
    /// them, never reading: its replies fill its buffers, the daemon stops reading it.
    case stuckPipeliner = "+ 1 client that pipelines, never reads"
}

struct LatencyRun {
    let title: String
    let clients: Int
    let latencies: [Int64]  // ns, sorted
    let seconds: Double
    let errors: Int
    let failedClients: Int
    let frames: Int
    let daemonCPU: Double  // fraction of one core
    let clientCPU: Double  // this process's, the same way
    let note: String

    func percentile(_ p: Int) -> Int64 {
        guard !latencies.isEmpty else { return 0 }
        return latencies[min(latencies.count - 1, latencies.count * p / 100)]
    }
}

/// The request a client sends as its `n`th: mostly `status`, some `list`, some `next`.
func benchRequest(_ n: Int, client: Int) -> String {
    switch (n + client) % 20 {
    case 0: "next"
    case 5, 15: "list"
    default: "status"
    }
}

/// `frames` from a status reply.
func framesField(_ reply: String) -> Int {
    guard let range = reply.firstRange(of: "\"frames\":") else { return 0 }
    return Int(reply[range.upperBound...].prefix { $0.isNumber }) ?? 0
}

func runLatency(_ daemon: BenchDaemon, title: String, clients clientCount: Int, requests: Int,
                rate: Int?, bystander: Bystander) -> LatencyRun {
    guard let probe = BenchConnection(path: daemon.socketPath) else {
        return LatencyRun(title: title, clients: clientCount, latencies: [], seconds: 0, errors: 0,
                          failedClients: clientCount, frames: 0, daemonCPU: 0, clientCPU: 0, note: "cannot connect")
    }
    let framesBefore = framesField(probe.request("status") ?? "")

    var stuck: BenchConnection?
    if bystander != .none, let s = BenchConnection(path: daemon.socketPath) {
        _ = s.send("subscribe")
        if bystander == .stuckPipeliner {
            // Fill its socket: non-blocking sends until the kernel refuses.
            _ = fcntl(s.fd, F_SETFL, fcntl(s.fd, F_GETFL) | O_NONBLOCK)
            let chunk = Array(String(repeating: "status\n", count: 512).utf8)
            var total = 0
            while total < 64 << 20 {
                let n = chunk.withUnsafeBytes { Glibc.send(s.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                if n <= 0 {
                    // Let the daemon read some and find its replies unread; try twice more.
                    if total > 0 && errno == EAGAIN { usleep(100_000) }
                    let again = chunk.withUnsafeBytes { Glibc.send(s.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                    if again <= 0 { break }
                    total += again
                    continue
                }
                total += n
            }
        }
        stuck = s
    }

    var clients: [BenchConnection] = []
    for _ in 0..<clientCount {
        if let c = BenchConnection(path: daemon.socketPath) { clients.append(c) }
    }
    // A refused client (too many clients) gets one error line and a close;
    // check each with a first request before the clock starts.
    clients = clients.filter { $0.request("version")?.hasPrefix("{\"ok\":true") == true }
    let failedClients = clientCount - clients.count

    var latencies: [Int64] = []
    latencies.reserveCapacity(clients.count * requests)
    var errors = 0
    let interval: Int64? = rate.map { 1_000_000_000 / Int64($0) }
    let cpuBefore = daemon.cpuNanoseconds
    let ownBefore = processCPUNanoseconds()
    let start = monotonicNanoseconds()
    for (i, c) in clients.enumerated() {
        // Steady rate: spread the clients over one interval, so they do not all fire together.
        c.nextSendAt = start + (interval.map { $0 * Int64(i) / Int64(max(clients.count, 1)) } ?? 0)
    }
    var done = [Bool](repeating: false, count: clients.count)
    var remaining = clients.count
    var fds = clients.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
    func finish(_ i: Int) {
        if !done[i] { done[i] = true; remaining -= 1 }
        clients[i].sentAt = 0
        fds[i].fd = -1  // poll ignores negative descriptors
    }
    while remaining > 0 {
        var now = monotonicNanoseconds()
        var wait: Int64 = 1_000_000_000
        for (i, c) in clients.enumerated() where !done[i] && c.sentAt == 0 {
            if c.nextSendAt <= now {
                c.sentAt = monotonicNanoseconds()
                guard c.send(benchRequest(c.sent, client: i)) else { errors += 1; finish(i); continue }
                c.sent += 1
            } else {
                wait = min(wait, c.nextSendAt - now)
            }
        }
        guard remaining > 0 else { break }
        let ready = poll(&fds, nfds_t(fds.count), Int32((wait + 999_999) / 1_000_000))
        if ready < 0 && errno != EINTR { break }
        if ready <= 0 { continue }
        for (i, c) in clients.enumerated() where fds[i].revents != 0 {
            fds[i].revents = 0
            guard let replies = c.receiveReplies() else { errors += 1; finish(i); continue }
            now = monotonicNanoseconds()
            for ok in replies where c.sentAt != 0 {
                latencies.append(now - c.sentAt)
                if !ok { errors += 1 }
                c.sentAt = 0
                c.received += 1
                if let interval {
                    // Keep the schedule; a late reply makes the next send go at once, not a burst.
                    c.nextSendAt = max(c.nextSendAt + interval, now)
                } else {
                    c.nextSendAt = now
                }
            }
            if c.received >= requests { finish(i) }
        }
    }
    let elapsed = monotonicNanoseconds() - start
    let cpu = daemon.cpuNanoseconds - cpuBefore
    let own = processCPUNanoseconds() - ownBefore
    let framesAfter = framesField(probe.request("status") ?? "")

    var note = ""
    if let stuck {
        // It never reads, so ask the kernel whether the daemon hung up on it.
        let rdhup: Int16 = 0x2000  // POLLRDHUP, behind _GNU_SOURCE in Glibc's headers
        var pfd = pollfd(fd: stuck.fd, events: rdhup, revents: 0)
        _ = poll(&pfd, 1, 0)
        note = pfd.revents & (rdhup | Int16(POLLHUP)) != 0 ? "the stuck client was dropped by the daemon" : "the stuck client was still connected at the end"
    }
    latencies.sort()
    return LatencyRun(title: title, clients: clients.count, latencies: latencies, seconds: Double(elapsed) / 1e9,
                      errors: errors, failedClients: failedClients, frames: framesAfter - framesBefore,
                      daemonCPU: Double(cpu) / Double(elapsed), clientCPU: Double(own) / Double(elapsed), note: note)
}

func formatMicroseconds(_ ns: Int64) -> String {
    let us = Double(ns) / 1000
    if us >= 10_000 { return String(Int((us / 1000).rounded())) + " ms" }
    if us >= 1000 { return String(Int((us / 100).rounded())).insertingDecimal(1) + " ms" }
    return String(Int(us.rounded())) + " µs"
}

func padded(_ s: String, _ width: Int, left: Bool = false) -> String {
    let n = s.count
    guard n < width else { return s }
    let pad = String(repeating: " ", count: width - n)
    return left ? s + pad : pad + s
}

func socketLatencyBenchmark(_ options: SocketLatencyOptions) -> Int32 {
    // The daemon is built next to this executable.
    var exe = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let length = readlink("/proc/self/exe", &exe, exe.count - 1)
    guard length > 0 else { print("cannot find this executable's directory"); return 1 }
    let me = String(decoding: exe[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let directory = String(me[..<(me.lastIndex(of: "/") ?? me.endIndex)])
    let binary = directory + "/carouseld"
    guard access(binary, X_OK) == 0 else {
        print("no carouseld next to carousel-bench in \(directory): build it (swift build -c release --product carouseld)")
        return 1
    }
    // The repository's demo pictures, found from this source file.
    let source = "\(#filePath)"
    let root = String(source[..<(source.firstRange(of: "/Sources/CarouselBenchmarks/")?.lowerBound ?? source.endIndex)])
    let images = options.images ?? root + "/scripts/demo/images"
    guard access(images, R_OK) == 0 else { print("no pictures at \(images): pass --images DIR"); return 1 }

    guard let daemon = BenchDaemon(binary: binary, images: images) else { print("cannot start \(binary)"); return 1 }
    defer { daemon.stop() }
    guard daemon.waitUntilReady() else {
        print("carouseld did not answer on \(daemon.socketPath); its log:\n\(daemon.log)")
        return 1
    }

    let n = options.clients
    let total = n * options.requests
    print("carousel-bench --socket-latency: carouseld on offscreen 1280x800, autoplay every 0.1 s with a 0.4 s transition;")
    print("each client: status, with every 10th a list and every 20th a next; round trip = send → whole reply line.")
    print("one poll loop in this process holds every client; \(total) requests in each back-to-back run, \(options.rate) req/s per client when steady.")
    print("")
    var runs: [LatencyRun] = []
    let plan: [(String, Int, Int, Int?, Bystander)] = [
        ("1 client, back to back", 1, total, nil, .none),
        ("\(n) clients, back to back", n, options.requests, nil, .none),
        ("\(n) clients, back to back " + Bystander.stuckSubscriber.rawValue, n, options.requests, nil, .stuckSubscriber),
        ("\(n) clients, back to back " + Bystander.stuckPipeliner.rawValue, n, options.requests, nil, .stuckPipeliner),
        ("1 client, \(options.rate) req/s", 1, max(options.requests / 2, 20), options.rate, .none),
        ("\(n) clients, \(options.rate) req/s each", n, max(options.requests / 2, 20), options.rate, .none),
        ("\(n) clients, \(options.rate) req/s each " + Bystander.stuckSubscriber.rawValue, n, max(options.requests / 2, 20),
         options.rate, .stuckSubscriber),
    ]
    for (title, clients, requests, rate, bystander) in plan {
        let run = runLatency(daemon, title: title, clients: clients, requests: requests, rate: rate, bystander: bystander)
        runs.append(run)
        // Let the daemon drop its stuck client before the next run.
        usleep(300_000)
    }

    let widths = [64, 7, 9, 9, 9, 9, 8, 7, 7, 7, 7]
    let header = ["run", "replies", "p50", "p90", "p99", "max", "req/s", "frames", "daemon", "bench", "errors"]
    print(header.enumerated().map { padded($0.element, widths[$0.offset], left: $0.offset == 0) }.joined(separator: " "))
    print(String(repeating: "-", count: widths.reduce(0, +) + widths.count - 1))
    for r in runs {
        let cells = [
            r.title, String(r.latencies.count), formatMicroseconds(r.percentile(50)), formatMicroseconds(r.percentile(90)),
            formatMicroseconds(r.percentile(99)), formatMicroseconds(r.latencies.last ?? 0),
            String(Int((Double(r.latencies.count) / max(r.seconds, 1e-9)).rounded())),
            String(r.frames), String(Int((r.daemonCPU * 100).rounded())) + "%",
            String(Int((r.clientCPU * 100).rounded())) + "%", String(r.errors + r.failedClients),
        ]
        print(cells.enumerated().map { padded($0.element, widths[$0.offset], left: $0.offset == 0) }.joined(separator: " "))
    }
    print("")
    print("frames: frames the daemon composed during the run; daemon, bench: CPU time over the run's wall time")
    print("(100% is one core) of carouseld and of this process (the clients).")
    for r in runs where !r.note.isEmpty { print("\(r.title): \(r.note)") }
    let log = daemon.log.split(separator: "\n").filter { $0.contains("control") && !$0.contains("control socket:") }
    if !log.isEmpty {
        print("daemon's control log lines:")
        for line in log.prefix(10) { print("  \(line)") }
    }
    return 0
}
