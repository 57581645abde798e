import CPlatform
#if canImport(Glibc)
import Glibc
#endif

/// The one owner of a file descriptor: closes it exactly once (on `close()`
/// or at deinit).
public final class FileDescriptor: @unchecked Sendable {
    public private(set) var raw: Int32

    public init(_ raw: Int32) { self.raw = raw }

    public func close() {
        guard raw >= 0 else { return }
        // A close interrupted by a signal has still released the descriptor on
        // Linux: never retry it (the number may already be someone else's).
        _ = Glibc.close(raw)
        raw = -1
    }

    deinit { close() }
}

/// CLOCK_MONOTONIC in microseconds: the clock libinput stamps events with,
/// and the model's clock in the daemon.
public enum MonotonicClock {
    public static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }
}

/// When this process was started (its `execve`), on `MonotonicClock`'s scale.
public enum ProcessStart {
    /// µs of CLOCK_MONOTONIC at the process's start, from field 22 of
    /// /proc/self/stat (clock ticks since boot: 10 ms steps at the usual
    /// 100 Hz, rounded down, so the time since reads up to 10 ms long), or
    /// `nil` without /proc. CLOCK_BOOTTIME, which the kernel counts it on,
    /// runs ahead of CLOCK_MONOTONIC by the time spent suspended.
    public static func monotonicMicroseconds() -> Int64? {
        guard let text = try? readFile("/proc/self/stat"),
              let close = text.lastIndex(of: ")") else { return nil }
        // After "pid (comm)": state is field 3, starttime field 22.
        let fields = text[text.index(after: close)...].split(separator: " ")
        let hz = sysconf(Int32(_SC_CLK_TCK))
        guard fields.count > 19, let ticks = Int64(fields[19]), hz > 0 else { return nil }
        var boot = timespec(), mono = timespec()
        clock_gettime(CLOCK_BOOTTIME, &boot)
        clock_gettime(CLOCK_MONOTONIC, &mono)
        let startBoot = ticks * 1_000_000 / Int64(hz)
        let bootNow = Int64(boot.tv_sec) * 1_000_000 + Int64(boot.tv_nsec) / 1000
        let monoNow = Int64(mono.tv_sec) * 1_000_000 + Int64(mono.tv_nsec) / 1000
        return monoNow - (bootNow - startBoot)
    }

    /// /proc/self/stat is one short line: one read of a page holds it.
    private static func readFile(_ path: String) throws -> String {
        let fd = try systemCall("open") { open(path, O_RDONLY | O_CLOEXEC) }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let n = try bytes.withUnsafeMutableBytes { buffer in
            try systemCall("read") { read(fd, buffer.baseAddress, buffer.count) }
        }
        return String(decoding: bytes[0..<n], as: UTF8.self)
    }
}

/// An epoll set: every source of the daemon's loop is a descriptor in it.
public final class Epoll {
    /// `EPOLLPRI`: urgent data, or a change mark such as /proc/self/mountinfo's.
    public static let priority: UInt32 = EPOLLPRI.rawValue
    public let fd: FileDescriptor
    private var buffer = [epoll_event](repeating: epoll_event(), count: 32)

    /// The corresponding C function is `epoll_create1`.
    public init() throws(SystemCallError) {
        fd = FileDescriptor(try systemCall("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) })
    }

    /// Watches `descriptor` for input; `token` comes back from `wait`.
    public func add(_ descriptor: Int32, token: UInt64, events: UInt32 = EPOLLIN.rawValue) throws(SystemCallError) {
        var event = epoll_event(events: events, data: epoll_data_t(u64: token))
        try systemCall("epoll_ctl(ADD)") { epoll_ctl(fd.raw, EPOLL_CTL_ADD, descriptor, &event) }
    }

    public func modify(_ descriptor: Int32, token: UInt64, events: UInt32) throws(SystemCallError) {
        var event = epoll_event(events: events, data: epoll_data_t(u64: token))
        try systemCall("epoll_ctl(MOD)") { epoll_ctl(fd.raw, EPOLL_CTL_MOD, descriptor, &event) }
    }

    public func remove(_ descriptor: Int32) {
        // Removing a descriptor that was closed already fails harmlessly.
        _ = epoll_ctl(fd.raw, EPOLL_CTL_DEL, descriptor, nil)
    }

    /// Waits until a descriptor is ready (`timeoutMilliseconds` -1: for ever)
    /// and returns the ready tokens and their event bits. A signal only
    /// interrupts the wait (empty result); signals themselves come through a signalfd.
    public func wait(timeoutMilliseconds: Int32 = -1) throws(SystemCallError) -> [(token: UInt64, events: UInt32)] {
        var ready: [(token: UInt64, events: UInt32)] = []
        try wait(timeoutMilliseconds: timeoutMilliseconds, into: &ready)
        return ready
    }

    /// `wait`, the ready tokens put in `ready` (emptied first, its storage
    /// kept): the event loop's every pass allocates nothing.
    public func wait(timeoutMilliseconds: Int32 = -1,
                     into ready: inout [(token: UInt64, events: UInt32)]) throws(SystemCallError) {
        ready.removeAll(keepingCapacity: true)
        let count = Int(buffer.withUnsafeMutableBufferPointer { b in
            epoll_wait(fd.raw, b.baseAddress, Int32(b.count), timeoutMilliseconds)
        })
        if count < 0 {
            if errno == EINTR { return }
            throw SystemCallError(call: "epoll_wait", errno: errno)
        }
        for i in 0..<count { ready.append((buffer[i].data.u64, buffer[i].events)) }
    }
}

/// One timer on CLOCK_MONOTONIC for the earliest deadline of the loop.
public final class Timer {
    public let fd: FileDescriptor

    /// The corresponding C function is `timerfd_create`.
    public init() throws(SystemCallError) {
        fd = FileDescriptor(try systemCall("timerfd_create") {
            timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        })
    }

    /// Fires at `microseconds` of CLOCK_MONOTONIC (at once if that is past), or never with `nil`.
    public func arm(at microseconds: Int64?) throws(SystemCallError) {
        var spec = itimerspec()
        if let t = microseconds {
            // An all-zero it_value would disarm: a deadline in the past fires at 1 ns.
            let at = max(t, 0)
            spec.it_value = timespec(tv_sec: Int(at / 1_000_000), tv_nsec: Int(at % 1_000_000) * 1000)
            if at == 0 { spec.it_value.tv_nsec = 1 }
        }
        try systemCall("timerfd_settime") { timerfd_settime(fd.raw, Int32(TFD_TIMER_ABSTIME), &spec, nil) }
    }

    /// Clears the expiry count after the timer fired.
    public func acknowledge() {
        var expirations: UInt64 = 0
        _ = try? attemptSystemCall("read(timerfd)") { read(fd.raw, &expirations, 8) }
    }
}

/// Signals as a descriptor: the listed signals are blocked and read from
/// here by the loop, so no handler runs at an arbitrary point.
public final class Signals {
    public let fd: FileDescriptor

    /// Blocks `signals` for the calling thread (call before starting other
    /// threads, so they inherit the mask) and opens a signalfd for them.
    public init(_ signals: [Int32]) throws(SystemCallError) {
        var set = sigset_t()
        sigemptyset(&set)
        for s in signals { sigaddset(&set, s) }
        try systemCall("sigprocmask") { sigprocmask(SIG_BLOCK, &set, nil) }
        fd = FileDescriptor(try systemCall("signalfd") { signalfd(-1, &set, Int32(SFD_NONBLOCK | SFD_CLOEXEC)) })
    }

    /// The signals received since the last call.
    public func read() -> [Int32] {
        var received: [Int32] = []
        var info = signalfd_siginfo()
        while let n = try? attemptSystemCall("read(signalfd)", { Glibc.read(fd.raw, &info, MemoryLayout<signalfd_siginfo>.size) }),
              n == MemoryLayout<signalfd_siginfo>.size {
            received.append(Int32(info.ssi_signo))
        }
        return received
    }
}

/// A wake-up another thread can send to the loop (the decoder: "a picture is ready").
public final class Wakeup: @unchecked Sendable {
    public let fd: FileDescriptor

    /// The corresponding C function is `eventfd`.
    public init() throws(SystemCallError) {
        fd = FileDescriptor(try systemCall("eventfd") { eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) })
    }

    /// Wakes the loop; safe from any thread.
    public func signal() {
        var one: UInt64 = 1
        _ = try? attemptSystemCall("write(eventfd)") { write(fd.raw, &one, 8) }
    }

    public func acknowledge() {
        var value: UInt64 = 0
        _ = try? attemptSystemCall("read(eventfd)") { read(fd.raw, &value, 8) }
    }
}

/// Tells the loop when the system's wall clock was set (an NTP step, the
/// date set by hand): a CLOCK_REALTIME timerfd armed far ahead with
/// TFD_TIMER_CANCEL_ON_SET becomes readable, its read failing with
/// ECANCELED, whenever the clock is set. Nothing else wakes it.
public final class ClockChangeWatch {
    public let fd: FileDescriptor

    /// The corresponding C functions are `timerfd_create` and `timerfd_settime`.
    public init() throws(SystemCallError) {
        fd = FileDescriptor(try systemCall("timerfd_create") {
            timerfd_create(CLOCK_REALTIME, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        })
        try arm()
    }

    private func arm() throws(SystemCallError) {
        var spec = itimerspec()
        // Far ahead (year 2286): only a setting of the clock ends the wait.
        spec.it_value = timespec(tv_sec: 9_999_999_999, tv_nsec: 0)
        try systemCall("timerfd_settime") {
            timerfd_settime(fd.raw, Int32(TFD_TIMER_ABSTIME) | Int32(TFD_TIMER_CANCEL_ON_SET), &spec, nil)
        }
    }

    /// After the descriptor was readable: whether the clock was set (and
    /// the watch armed again for the next setting).
    public func clockWasSet() -> Bool {
        var expirations: UInt64 = 0
        let n = read(fd.raw, &expirations, 8)
        guard n < 0, errno == ECANCELED else { return false }
        try? arm()
        return true
    }
}

/// Whether SIGTERM or SIGINT is pending (blocked signals stay pending): for
/// waits before the daemon's loop exists, and for the sync's pass, which
/// stops after the file it is on.
public func terminationRequested() -> Bool {
    var pending = sigset_t()
    sigpending(&pending)
    return sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1
}
