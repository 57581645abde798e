// The loop's smallest sources, each on its own: the watchdog's keep-alives
// to a datagram socket standing in for systemd, signals sent to this thread
// and read through the service's signalfd, and the wall clock's service on
// a descriptor the test makes readable. (The kernel's side of a clock
// change is the VM's e2e clock-set scenario: stepping this machine's clock
// would wake every daemon of a full run, which other tests count.)

import CarouselDaemon
import CarouselLoop
import CarouselPlatform
@testable import CarouselServices
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Small loop services")
struct SmallServicesTests {
    /// What epoll reports for a readable descriptor (the loop's default interest).
    let readableEvents = EpollInterest(fd: 0).events

    // MARK: - Watchdog

    @Test func noWatchdogServiceWhenSystemdWantsNoKeepAlives() {
        #expect(WatchdogService(notifier: ServiceNotifier(environment: { _ in nil }), now: 0) == nil)
        // WATCHDOG_PID names another process (a child that inherited the environment).
        let other = ServiceNotifier(environment: ["WATCHDOG_USEC": "400000", "WATCHDOG_PID": "1"].lookup)
        #expect(getpid() == 1 || WatchdogService(notifier: other, now: 0) == nil)
    }

    @Test func keepAlivesAtHalfTheIntervalFromTheFirstPass() throws {
        let manager = try FakeServiceManager()
        let notifier = ServiceNotifier(environment: ["WATCHDOG_USEC": "400000", "NOTIFY_SOCKET": manager.path].lookup)
        let watchdog = try #require(WatchdogService(notifier: notifier, now: 5_000))
        // Due at once: the first keep-alive does not wait half an interval.
        #expect(watchdog.deadline == 5_000)
        watchdog.due(now: 5_000)
        #expect(watchdog.deadline == 205_000)
        watchdog.due(now: 206_000)
        #expect(watchdog.deadline == 406_000)
        manager.waitFor("two keep-alives", limit: 5) { $0.filter { $0 == "WATCHDOG=1" }.count == 2 }
        #expect(manager.messages == ["WATCHDOG=1", "WATCHDOG=1"])
    }

    // MARK: - Signals

    /// Runs `body` with the daemon's signals blocked on this thread (as the
    /// service blocks them), and puts the thread's mask back after: a test
    /// thread that kept SIGTERM blocked would hand that to every process it
    /// starts later.
    private func withThreadMask(_ body: () throws -> Void) rethrows {
        var old = sigset_t()
        pthread_sigmask(SIG_SETMASK, nil, &old)
        defer { pthread_sigmask(SIG_SETMASK, &old, nil) }
        try body()
    }

    private func readable(_ fd: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) == 1
    }

    @Test func signalsAskTheDaemonToReloadOrStop() throws {
        try withThreadMask {
            let service = try SignalService()
            var asked: [String] = []
            let port = try PortHarness { ask in
                switch ask {
                case .reload: asked.append("reload")
                case let .stop(reason): asked.append("stop: \(reason)")
                default: asked.append("something else")
                }
            }
            port.loop.register { service.attach($0, configPath: "/etc/carouseld/test.ini") }
            let fd = try #require(service.interests.first?.fd)
            // A wake-up with nothing pending asks nothing.
            port.ready(service, fd, events: readableEvents)
            #expect(asked.isEmpty)

            // Sent to this thread, where the service blocked them: pending, not delivered.
            pthread_kill(pthread_self(), SIGHUP)
            #expect(readable(fd))
            port.ready(service, fd, events: readableEvents)
            #expect(asked == ["reload"])
            #expect(!readable(fd), "the signal was read, not left pending")

            pthread_kill(pthread_self(), SIGTERM)
            pthread_kill(pthread_self(), SIGINT)
            port.ready(service, fd, events: readableEvents)
            // Pending standard signals are read lowest number first: SIGINT (2), then SIGTERM (15).
            #expect(asked == ["reload", "stop: received SIGINT", "stop: received SIGTERM"])
            #expect(!readable(fd))
        }
    }

    @Test func signalsBeforeTheDaemonIsAttachedWaitForIt() throws {
        try withThreadMask {
            let service = try SignalService()
            let fd = try #require(service.interests.first?.fd)
            pthread_kill(pthread_self(), SIGHUP)
            // Not attached yet (the daemon is still being made): the signal stays pending.
            service.ready(fd, events: readableEvents, now: 0)
            #expect(readable(fd))
            var asked = 0
            let port = try PortHarness { ask in
                if case .reload = ask { asked += 1 }
            }
            port.loop.register { service.attach($0, configPath: "x.ini") }
            port.ready(service, fd, events: readableEvents)
            #expect(asked == 1)
            #expect(!readable(fd))
        }
    }

    // MARK: - Wall clock

    /// An eventfd that stands in for the kernel's clock-change timerfd.
    final class TestClockChange: ClockChangeSource {
        let wakeup: Wakeup
        var fd: FileDescriptor { wakeup.fd }
        /// What the next read says: set, or a spurious wake-up.
        var wasSet = true
        init() throws { wakeup = try Wakeup() }
        func clockWasSet() -> Bool {
            wakeup.acknowledge()
            return wasSet
        }
    }

    @Test func aSettingOfTheWallClockIsPassedOnWithTheLoopsTime() throws {
        let change = try TestClockChange()
        var told: [Int64] = []
        let port = try PortHarness { ask in
            if case let .wallClockSet(at) = ask { told.append(at) }
        }
        let service = try #require(port.loop.register { WallClockService(watch: change, context: $0) })
        #expect(service.interests.map(\.fd) == [change.fd.raw])
        #expect(service.deadline == nil, "it costs no wake-up of its own")

        change.wakeup.signal()
        port.ready(service, change.fd.raw, events: readableEvents, now: 7_000)
        #expect(told == [7_000])

        // Readable, but the clock was not set (the timer's own expiry): nothing.
        change.wasSet = false
        change.wakeup.signal()
        port.ready(service, change.fd.raw, events: readableEvents, now: 8_000)
        #expect(told == [7_000])

        change.wasSet = true
        change.wakeup.signal()
        port.ready(service, change.fd.raw, events: readableEvents, now: 9_000)
        #expect(told == [7_000, 9_000])
    }

    @Test func theKernelsWatchIsQuietWhileTheClockIsNotSet() throws {
        let watch = try ClockChangeWatch()
        var p = pollfd(fd: watch.fd.raw, events: Int16(POLLIN), revents: 0)
        #expect(poll(&p, 1, 0) == 0)
        #expect(!watch.clockWasSet(), "a read with nothing to say is no setting")
    }
}

extension Dictionary where Key == String, Value == String {
    /// The dictionary as an environment lookup (`ServiceNotifier(environment:)`).
    var lookup: (String) -> String? { { self[$0] } }
}
