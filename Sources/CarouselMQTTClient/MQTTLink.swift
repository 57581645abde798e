import CarouselLoop
import CarouselConfig
import CarouselMQTT
import CarouselPlatform
import CMosquittoLoader
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One libmosquitto client, driven from the loop (`MQTTService`): no thread
/// of libmosquitto's own (no `mosquitto_loop_start`), no blocking connect.
/// The loop watches `socket` (readable: `readable()`; writable while
/// `wantsWrite`: `writable()`) and calls `tick` at `deadline`
/// (`mosquitto_loop_misc`: keep-alives, a broker that stopped answering,
/// the next attempt after a failure).
///
/// `mosquitto_connect_async` resolves the broker's name with a blocking
/// `getaddrinfo` before its non-blocking connect: a numeric address is
/// connected from the loop at once; a name is connected from a worker
/// thread that owns the handle until it returns (the loop leaves the handle
/// alone meanwhile; the outcome comes back on the loop through `executor`,
/// the service's context, then `onHandBack`), so that a name that takes 30 s
/// not to resolve never holds a frame.
///
/// Callbacks only record what happened (`take()`); the service acts on it
/// after the libmosquitto call returned, never from inside one.
final class MQTTLink {
    enum Happening: Equatable {
        /// CONNACK arrived: 0 accepted, else the broker's refusal code.
        case connected(Int32)
        /// The connection ended (0: we asked for it).
        case disconnected(Int32)
        case message(topic: String, payload: [UInt8])
        /// A message longer than a command may be (`FrameProtocol.maximumPayload`):
        /// dropped in the callback, before its payload was copied.
        case oversized(topic: String, bytes: Int)
        /// A connection attempt failed before reaching the broker (the reason).
        case attemptFailed(String)
    }

    enum Phase: Equatable { case waiting, resolving, connecting, connected }

    let settings: MQTTConfig
    let broker: MQTTBroker
    let frame: FrameProtocol
    /// The handle; owned by the worker while `phase == .resolving`.
    private let handle: Handle
    private(set) var phase = Phase.waiting
    /// Where a name is resolved (and connected) off the loop, the outcome handed back on it.
    private let executor: any OffLoopWork
    /// Called on the loop once a worker's connect was handed back: what it
    /// did is in `take()` now.
    var onHandBack: (() -> Void)?
    private var happenings: [Happening] = []
    /// When to try again (µs), while waiting.
    private(set) var retryAt: Int64?
    /// When `mosquitto_loop_misc` is next due (µs), while a socket is open.
    private var miscAt: Int64?
    private var backoff: Int64 = MQTTLink.firstBackoff
    static let firstBackoff: Int64 = 1_000_000
    static let longestBackoff: Int64 = 60_000_000


    /// The handle and what the worker hands back, shared with the worker thread.
    private final class Handle: @unchecked Sendable {
        let mosq: OpaquePointer
        /// libmosquitto's functions.
        let lib: cmosq_library
        /// `busy`: a worker owns the handle; `retired`: nobody waits for its
        /// outcome any more (the link is gone), the worker destroys the handle.
        let handoff = Mutex<(retired: Bool, busy: Bool)>((false, false))
        init(_ mosq: OpaquePointer, lib: cmosq_library) {
            self.mosq = mosq
            self.lib = lib
        }
    }

    /// libmosquitto, opened (and `mosquitto_lib_init` called) by the first
    /// link: not linked, so that a start of carouseld without [mqtt] does
    /// not load it and OpenSSL (CMosquittoLoader.h).
    private static let library = loadLibrary(cmosq_load)

    /// Creates the client with its will, credentials and TLS set; it
    /// connects at the first `tick`. Throws the reason (no memory, a CA file
    /// libmosquitto refuses).
    init(settings: MQTTConfig, frame: FrameProtocol, password: String?, executor: any OffLoopWork) throws(MQTTLinkError) {
        guard let broker = settings.broker else { throw MQTTLinkError("no broker") }
        let lib: cmosq_library
        switch Self.library {
        case .success(let table): lib = table
        case .failure(let failure): throw MQTTLinkError("libmosquitto cannot be loaded (install libmosquitto1): \(failure.message)")
        }
        self.settings = settings
        self.broker = broker
        self.frame = frame
        self.executor = executor
        guard let mosq = lib.mosquitto_new(frame.identity.clientID, true, nil) else {
            throw MQTTLinkError("mosquitto_new failed: \(errnoDescription(errno))")
        }
        handle = Handle(mosq, lib: lib)
        lib.mosquitto_user_data_set(mosq, Unmanaged.passUnretained(self).toOpaque())
        lib.mosquitto_connect_callback_set(mosq) { _, user, rc in
            MQTTLink.from(user)?.happenings.append(.connected(rc))
        }
        lib.mosquitto_disconnect_callback_set(mosq) { _, user, rc in
            MQTTLink.from(user)?.happenings.append(.disconnected(rc))
        }
        lib.mosquitto_message_callback_set(mosq) { _, user, message in
            guard let link = MQTTLink.from(user), let m = message?.pointee, let topic = m.topic else { return }
            // Whoever can publish decides the length: nothing past the cap is
            // copied, split or decoded (libmosquitto frees its packet when we return).
            guard Int(m.payloadlen) <= FrameProtocol.maximumPayload else {
                link.happenings.append(.oversized(topic: String(cString: topic), bytes: Int(m.payloadlen)))
                return
            }
            let bytes = m.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(m.payloadlen))) } ?? []
            link.happenings.append(.message(topic: String(cString: topic), payload: bytes))
        }
        // Replies and state are small writes right after others: without
        // TCP_NODELAY, Nagle holds each until the broker's delayed ACK (40 ms).
        _ = lib.mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1)
        let will = frame.will
        var rc = will.payload.withUnsafeBytes {
            lib.mosquitto_will_set(mosq, will.topic, Int32($0.count), $0.baseAddress, will.qos, will.retain)
        }
        if rc == MOSQ_ERR_SUCCESS.rawValue, settings.username != nil || password != nil {
            rc = lib.mosquitto_username_pw_set(mosq, settings.username, password)
        }
        if rc == MOSQ_ERR_SUCCESS.rawValue, broker.tls {
            // Without ca_file: the system's store, which Debian keeps hashed in /etc/ssl/certs.
            rc = lib.mosquitto_tls_set(mosq, settings.caFile, settings.caFile == nil ? "/etc/ssl/certs" : nil, nil, nil, nil)
        }
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            // Not destroyed here: self is whole, so deinit runs on this throw
            // and destroys the handle (twice was a double free that closed
            // descriptors the daemon still used).
            throw MQTTLinkError(Self.describe(rc, errno))
        }
        retryAt = 0
    }

    deinit {
        // A worker still connecting owns the handle and destroys it when done.
        let destroyNow = handle.handoff.withLock { state -> Bool in
            if state.busy { state.retired = true; return false }
            return true
        }
        if destroyNow { handle.lib.mosquitto_destroy(handle.mosq) }
    }

    private static func from(_ user: UnsafeMutableRawPointer?) -> MQTTLink? {
        user.map { Unmanaged<MQTTLink>.fromOpaque($0).takeUnretainedValue() }
    }

    /// What libmosquitto's error code means, in words.
    static func describe(_ rc: Int32, _ savedErrno: Int32) -> String {
        if rc == MOSQ_ERR_ERRNO.rawValue { return errnoDescription(savedErrno) }
        if rc == MOSQ_ERR_EAI.rawValue { return "the broker's name does not resolve" }
        if rc == MOSQ_ERR_TLS.rawValue { return "TLS failed (certificate not trusted by ca_file, or the broker speaks no TLS?)" }
        if rc == MOSQ_ERR_KEEPALIVE.rawValue { return "the broker stopped answering (no reply within keepalive)" }
        if rc == MOSQ_ERR_CONN_LOST.rawValue { return "the connection was lost" }
        if rc == MOSQ_ERR_PROTOCOL.rawValue { return "protocol error (is it an MQTT broker? mqtts:// to a plain port?)" }
        guard case .success(let lib) = library else { return "libmosquitto error \(rc)" }
        return lib.mosquitto_strerror(rc).map { String(cString: $0) } ?? "libmosquitto error \(rc)"
    }

    /// The broker's CONNACK refusal, in words, with what to check.
    static func describeRefusal(_ rc: Int32) -> String {
        guard case .success(let lib) = library else { return "refused (\(rc))" }
        let text = lib.mosquitto_connack_string(rc).map { String(cString: $0) } ?? "refused (\(rc))"
        switch rc {
        case 4, 5: return "\(text) (check [mqtt] username and password_file)"
        case 2: return "\(text) (check [mqtt] client_id)"
        default: return text
        }
    }

    /// What callbacks and workers recorded since the last call.
    func take() -> [Happening] {
        defer { happenings = [] }
        return happenings
    }

    /// The socket libmosquitto has open, if any (not while a worker owns the handle).
    var socket: Int32? {
        guard phase == .connecting || phase == .connected else { return nil }
        let fd = handle.lib.mosquitto_socket(handle.mosq)
        return fd >= 0 ? fd : nil
    }

    /// The socket libmosquitto still holds open, whatever the phase (it
    /// keeps a connection's socket after the connection ended, until the
    /// next attempt or the end); nil while a worker owns the handle.
    var openSocket: Int32? {
        guard phase != .resolving else { return nil }
        let fd = handle.lib.mosquitto_socket(handle.mosq)
        return fd >= 0 ? fd : nil
    }

    var wantsWrite: Bool { socket != nil && handle.lib.mosquitto_want_write(handle.mosq) }

    /// When `tick` is due (µs).
    var deadline: Int64? {
        switch phase {
        case .waiting: retryAt
        case .resolving: nil
        case .connecting, .connected: miscAt
        }
    }

    /// Starts a connection attempt when one is due; keep-alives and the
    /// check for a silent broker (`mosquitto_loop_misc`) when those are.
    func tick(now: Int64) {
        switch phase {
        case .waiting:
            guard let due = retryAt, now >= due else { return }
            connect(now: now)
        case .resolving:
            break
        case .connecting, .connected:
            guard let due = miscAt, now >= due else { return }
            _ = handle.lib.mosquitto_loop_misc(handle.mosq)
            miscAt = now + miscInterval
        }
    }

    /// A quarter of the keep-alive: a PINGREQ goes out at most 1.25 ×
    /// keepalive after our last packet (the broker allows 1.5 ×), and a
    /// broker that stopped answering is noticed within 1.25 × keepalive.
    private var miscInterval: Int64 { max(Int64(settings.keepalive) * 250_000, 1_000_000) }

    private func connect(now: Int64) {
        retryAt = nil
        miscAt = now + miscInterval
        let host = broker.host, port = Int32(broker.port), keepalive = Int32(settings.keepalive)
        if broker.hostIsNumeric {
            phase = .connecting
            connectReturned(handle.lib.mosquitto_connect_async(handle.mosq, host, port, keepalive), errno)
            return
        }
        phase = .resolving
        log(.debug, "mqtt: connecting to \(host):\(port) from a worker (the name is resolved there)")
        let handle = self.handle
        handle.handoff.withLock { $0.busy = true }
        executor.run(on: Self.resolver, { () -> ConnectOutcome in
            let rc = handle.lib.mosquitto_connect_async(handle.mosq, host, port, keepalive)
            let saved = errno
            let retired = handle.handoff.withLock { state -> Bool in
                state.busy = false
                return state.retired
            }
            if retired { handle.lib.mosquitto_destroy(handle.mosq) }
            return ConnectOutcome(rc: rc, errno: saved, retired: retired)
        }, then: { [weak self] outcome in
            guard let self, !outcome.retired, self.phase == .resolving else { return }
            log(.debug, "mqtt: the worker's connect returned \(outcome.rc)")
            self.connectReturned(outcome.rc, outcome.errno)
            self.onHandBack?()
        })
    }

    /// What a worker's connect came to.
    private struct ConnectOutcome: Sendable {
        let rc: Int32
        let errno: Int32
        let retired: Bool
    }

    /// Names are resolved one at a time, off the loop.
    private static let resolver = DispatchQueue(label: "carouseld.mqtt.connect")

    private func connectReturned(_ rc: Int32, _ savedErrno: Int32) {
        if rc == MOSQ_ERR_SUCCESS.rawValue {
            phase = .connecting
        } else {
            phase = .connecting  // so that a socket it may have opened is closed below
            happenings.append(.attemptFailed(Self.describe(rc, savedErrno)))
            lost()
        }
    }

    /// The connection is gone (or never came): close what is left and wait
    /// the backoff, 1 s doubling to 60 s, each with up to a quarter more at
    /// random (frames restarted together do not all come back at once).
    func lost(now: Int64 = MonotonicClock.now()) {
        guard phase != .resolving else { return }
        if phase == .connected { backoff = Self.firstBackoff }
        phase = .waiting
        miscAt = nil
        retryAt = now + backoff + Int64.random(in: 0...(backoff / 4))
        backoff = min(backoff * 2, Self.longestBackoff)
    }

    /// The broker accepted us: the next loss waits 1 s again.
    func accepted() {
        phase = .connected
        backoff = Self.firstBackoff
    }

    /// `mosquitto_loop_read`; what it found comes through `take()`.
    func readable() {
        guard socket != nil else { return }
        let before = happenings.count
        noteFailure(handle.lib.mosquitto_loop_read(handle.mosq, 1), since: before)
    }

    /// `mosquitto_loop_write`: the queued packets, or the rest of a TLS handshake.
    func writable() {
        guard socket != nil else { return }
        let before = happenings.count
        noteFailure(handle.lib.mosquitto_loop_write(handle.mosq, 1), since: before)
    }

    /// A failed read or write that libmosquitto did not report through the
    /// disconnect callback: libmosquitto 2.0.11 returns MOSQ_ERR_TLS from a
    /// TLS handshake that fails while connecting (a broker whose certificate
    /// ca_file does not trust) without calling it, leaving a connection that
    /// would never retry or say why. Recorded as the end of the connection.
    private func noteFailure(_ rc: Int32, since before: Int) {
        guard rc != MOSQ_ERR_SUCCESS.rawValue else { return }
        let reported = happenings[before...].contains { if case .disconnected = $0 { true } else { false } }
        if !reported { happenings.append(.disconnected(rc)) }
    }

    func subscribe(_ topic: String) {
        _ = handle.lib.mosquitto_subscribe(handle.mosq, nil, topic, 1)
    }

    /// Publishes while connected; dropped otherwise (state and discovery
    /// are published again on the next connection).
    @discardableResult
    func publish(_ message: MQTTMessage) -> Bool {
        guard phase == .connected else { return false }
        let rc = message.payload.withUnsafeBytes {
            handle.lib.mosquitto_publish(handle.mosq, nil, message.topic, Int32($0.count), $0.baseAddress, message.qos, message.retain)
        }
        return rc == MOSQ_ERR_SUCCESS.rawValue
    }

    /// A clean goodbye: `offline` on the availability topic (the will only
    /// covers an unclean end), then DISCONNECT, written at once if the
    /// socket takes it (the daemon is stopping or reconnecting elsewhere).
    func close() {
        guard phase == .connected || phase == .connecting else { return }
        if phase == .connected { publish(frame.offline) }
        _ = handle.lib.mosquitto_disconnect(handle.mosq)
        for _ in 0..<4 where handle.lib.mosquitto_want_write(handle.mosq) {
            guard handle.lib.mosquitto_loop_write(handle.mosq, 1) == MOSQ_ERR_SUCCESS.rawValue else { break }
        }
        phase = .waiting
        retryAt = nil
        miscAt = nil
    }
}

/// The one way off the loop and back the link needs: the service's
/// context, which marks the service as run when the work comes back (a test
/// drives a `LoopExecutor` of its own).
protocol OffLoopWork: AnyObject {
    func run<Result: Sendable>(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Result,
                               then completion: @escaping (Result) -> Void)
}

extension ServiceContext: OffLoopWork {}
extension LoopExecutor: OffLoopWork {}

struct MQTTLinkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
