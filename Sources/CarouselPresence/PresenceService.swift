import CGPIODLoader
import CarouselConfig
import CarouselLoop
import CarouselPlatform
#if canImport(Glibc)
import CarouselPresenceWords
import Glibc
#endif

/// A presence sensor on a GPIO line (`[power] presence = gpio:CHIP:LINE`),
/// on the loop: the line's edge events come through its descriptor (no
/// polling); after `presence_debounce` without a further edge the line's
/// level is read once and is the presence (`LoopAsk.presence`). At rest
/// nothing runs: no deadline, the descriptor only. A chip or line that
/// cannot be had is one warning line and the carousel runs on without it.
/// `key:NAME` sensors come through the input service instead (`InputRouter.presenceKey`).
public final class PresenceService: LoopService {
    public let name = "presence"
    public let subscriptions: LoopHappening.Kinds = .configured
    private let context: ServiceContext
    private var line: GPIOPresenceLine?
    private var debounce = PresenceDebounce(seconds: 0)
    /// Counts the lines opened: a line opened again (a reload) may get the
    /// closed one's descriptor number, which epoll must be told is new.
    private var generation: UInt64 = 0

    public init(context: ServiceContext) {
        self.context = context
        open(context.view.config[PresenceSettings.self])
    }

    public var interests: [EpollInterest] { line.map { [EpollInterest(fd: $0.eventDescriptor, serial: generation)] } ?? [] }

    public var deadline: Int64? { line == nil ? nil : debounce.settlesAt }

    private func open(_ settings: PresenceSettings) {
        guard case let .gpio(chip, lineName)? = settings.source else { return }
        debounce = PresenceDebounce(seconds: settings.debounce)
        do {
            let opened = try GPIOPresenceLine(chip: chip, line: lineName, activeLow: settings.activeLow)
            line = opened
            generation &+= 1
            log(.info, "presence: \(opened.summary)\(settings.activeLow ? ", active low" : ""), debounce \(Schema.format(settings.debounce)) s")
            // Someone there already at start: their presence holds it from now.
            if try opened.value() { context.ask(.presence(true, at: context.now)) }
        } catch {
            line = nil
            log(.warning, "presence: \(error); the carousel runs on without the sensor")
        }
    }

    private func close() {
        line = nil
        debounce.reset()
    }

    public func ready(_ fd: Int32, events: UInt32, now: Int64) {
        guard let line else { return }
        do {
            var readNow = false
            for time in try line.drainEdges() { readNow = debounce.edge(at: time) || readNow }
            if readNow, let time = debounce.lastEdge { context.ask(.presence(try line.value(), at: time)) }
        } catch {
            log(.warning, "presence: \(line.summary): \(error); the sensor is closed, the carousel runs on")
            close()
            context.ask(.presenceSensorGone)
        }
    }

    public func due(now: Int64) {
        guard let line, let time = debounce.due(now: now) else { return }
        do {
            context.ask(.presence(try line.value(), at: time))
        } catch {
            log(.warning, "presence: \(line.summary): \(error); the sensor is closed, the carousel runs on")
            close()
            context.ask(.presenceSensorGone)
        }
    }

    public func observe(_ happening: LoopHappening, now: Int64) {
        guard case let .configured(old) = happening else { return }
        let new = context.view.config[PresenceSettings.self]
        // How presence counts at night is the display's policy, not the sensor's.
        var unchanged = old[PresenceSettings.self]
        unchanged.atNight = new.atNight
        guard new != unchanged else { return }
        // Another sensor (or none): nobody is taken to be there until it says so.
        close()
        context.ask(.presenceSensorGone)
        open(new)
    }

    public func stop() { close() }
}

/// Why a GPIO line cannot serve as a presence sensor: what failed, on what,
/// and what to do about it.
struct GPIOPresenceError: Error, CustomStringConvertible {
    var description: String
}

/// A GPIO line requested for both edges through libgpiod v1 (opened with
/// dlopen: `CGPIODLoader`), released exactly once with its chip.
final class GPIOPresenceLine {
    /// libgpiod, opened by the first line (not linked: see CGPIODLoader.h).
    private static let library = loadLibrary(cgpiod_load)

    private let lib: cgpiod_library
    private let chip: OpaquePointer
    private let line: OpaquePointer
    /// The line's event descriptor (`gpiod_line_event_get_fd`), non-blocking.
    let eventDescriptor: Int32
    /// `gpiochip0 line 17 ("GPIO17")`, for log lines.
    let summary: String

    /// Opens `chip` (`gpiod_chip_open_lookup`: a name, a path or a label),
    /// finds the line (`gpiod_chip_get_line` by offset,
    /// `gpiod_chip_find_line` by name) and requests both edges
    /// (`gpiod_line_request_both_edges_events_flags`), active-low if asked.
    init(chip chipName: String, line lineName: PresenceSource.GPIOLineName, activeLow: Bool) throws(GPIOPresenceError) {
        switch Self.library {
        case .success(let table): lib = table
        case .failure(let failure):
            throw GPIOPresenceError(description: "libgpiod cannot be loaded (install libgpiod2): \(failure.message)")
        }
        guard let chip = lib.gpiod_chip_open_lookup(chipName) else {
            let code = errno
            throw GPIOPresenceError(description: "cannot open GPIO chip \(chipName): \(errnoDescription(code))"
                + Self.hint(code, device: chipName))
        }
        let device = lib.gpiod_chip_name(chip).map { String(cString: $0) } ?? chipName
        let found: OpaquePointer? = switch lineName {
        case let .offset(n): lib.gpiod_chip_get_line(chip, n)
        case let .named(name): lib.gpiod_chip_find_line(chip, name)
        }
        guard let line = found else {
            let code = errno
            lib.gpiod_chip_close(chip)
            throw GPIOPresenceError(description: "no line \(lineName) on \(device) (\(lib.gpiod_chip_label(chip).map { String(cString: $0) } ?? "?"))"
                + ": \(errnoDescription(code)) (gpioinfo \(device) lists its lines)")
        }
        let flags = activeLow ? cgpiod_flag_active_low : 0
        if lib.gpiod_line_request_both_edges_events_flags(line, "carouseld", Int32(flags)) != 0 {
            let code = errno
            lib.gpiod_chip_close(chip)
            let busy = code == EBUSY ? " (held by another program or a kernel driver: gpioinfo \(device) shows its consumer)" : ""
            throw GPIOPresenceError(description: "cannot watch line \(lineName) of \(device): \(errnoDescription(code))"
                + busy + Self.hint(code, device: device))
        }
        let fd = lib.gpiod_line_event_get_fd(line)
        let flagsNow = fcntl(fd, F_GETFL)
        if fd < 0 || flagsNow < 0 || fcntl(fd, F_SETFL, flagsNow | O_NONBLOCK) < 0 {
            let code = errno
            lib.gpiod_line_release(line)
            lib.gpiod_chip_close(chip)
            throw GPIOPresenceError(description: "line \(lineName) of \(device): no event descriptor: \(errnoDescription(code))")
        }
        self.chip = chip
        self.line = line
        eventDescriptor = fd
        summary = "\(device) line \(lib.gpiod_line_offset(line))" + (lineName.isOffset ? "" : " (\(lineName))")
    }

    private static func hint(_ code: Int32, device: String) -> String {
        switch code {
        case EACCES, EPERM:
            " (carouseld needs read and write access to /dev/\(device.hasPrefix("/") ? String(device.split(separator: "/").last ?? "") : device):"
                + " see Presence sensor in the README)"
        case ENOENT, ENODEV: " (gpiodetect lists the chips)"
        default: ""
        }
    }

    deinit {
        // Releasing the line closes its event descriptor; the chip's closes the chip's.
        lib.gpiod_line_release(line)
        lib.gpiod_chip_close(chip)
    }

    /// The line's logical level now (`gpiod_line_get_value`, active-low applied): someone is there.
    func value() throws(GPIOPresenceError) -> Bool {
        let v = lib.gpiod_line_get_value(line)
        guard v >= 0 else { throw GPIOPresenceError(description: "cannot read the line: \(errnoDescription(errno))") }
        return v == 1
    }

    /// Every pending edge event's time stamp (µs, CLOCK_MONOTONIC), read
    /// until the descriptor is empty (`gpiod_line_event_read_fd_multiple`).
    func drainEdges() throws(GPIOPresenceError) -> [Int64] {
        var times: [Int64] = []
        var events = [gpiod_line_event](repeating: gpiod_line_event(), count: 16)
        while true {
            let n = events.withUnsafeMutableBufferPointer { lib.gpiod_line_event_read_fd_multiple(eventDescriptor, $0.baseAddress!, 16) }
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK { return times }
                throw GPIOPresenceError(description: "cannot read its events: \(errnoDescription(code))")
            }
            times += events.prefix(Int(n)).map { Int64($0.ts.tv_sec) * 1_000_000 + Int64($0.ts.tv_nsec) / 1000 }
            if n < 16 { return times }
        }
    }
}

extension PresenceSource.GPIOLineName {
    var isOffset: Bool { if case .offset = self { true } else { false } }
}

extension LoopEvent.Name {
    /// The presence sensor says someone came, or that nobody is there any more.
    public static let didDetectPresence = LoopEvent.Name(PresenceWords.didDetectPresence)
    public static let didLosePresence = LoopEvent.Name(PresenceWords.didLosePresence)
}
