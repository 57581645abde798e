import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// `carouseld input-test`: the seat's events, as the daemon reads them
/// (libinput's udev backend), printed one JSON line each on standard output
/// for a while; the VM's input tests read them.
public struct InputEventDump {
    public var seat = "seat0"
    /// The panel that touch and absolute pointer coordinates are scaled to.
    public var panel: InputPanelSize
    /// How long to listen, µs.
    public var microseconds: UInt64
    /// A calibration matrix for touch devices (six numbers).
    public var calibration: [Float]?
    /// libinput's debug messages to standard error.
    public var verbose = false

    public init(panel: InputPanelSize, microseconds: UInt64) {
        self.panel = panel
        self.microseconds = microseconds
    }

    /// A calibration matrix as typed: numbers separated by spaces or commas
    /// ("-1 0 1 0 1 0"); nil when any is not a number (`InputContext.setCalibration`
    /// refuses a matrix of other than six).
    public static func calibration(parsing text: String) -> [Float]? {
        let numbers = text.split(whereSeparator: { $0 == " " || $0 == "," }).map { Float($0) }
        guard numbers.allSatisfy({ $0 != nil }) else { return nil }
        return numbers.map { $0! }
    }

    /// Listens and prints until the time is up: `{"type":"ready",...}`
    /// after the first dispatch, then every event. Returns false after a
    /// failure (said on standard error).
    public func run() -> Bool {
        let context: InputContext
        do {
            context = try InputContext(seat: seat, panelSize: panel, logPriority: verbose ? .debug : .error, log: InputLog.write)
            if let calibration { try context.setCalibration(calibration) }
        } catch {
            printError("carouseld: \(error)")
            return false
        }
        let deadline = InputEvent.now() + microseconds
        var ready = false
        while true {
            let events: [InputEvent]
            do {
                events = try context.dispatch()
            } catch {
                printError("carouseld: \(error)")
                return false
            }
            let now = InputEvent.now()
            var out = ""
            for event in events { out += event.jsonLine(now: now) + "\n" }
            if !ready {
                ready = true
                let count = context.currentDevices.count
                if count == 0 { log(.warning, InputProbe.emptySeatHint(seat: seat)) }
                out += JSONValue.fields([JSONField("t", .int(Int(now))), JSONField("type", "ready"), JSONField("seat", .string(seat)),
                                         JSONField("devices", .int(count))]).encoded + "\n"
            }
            if !out.isEmpty { writeAll(1, out) }
            guard now < deadline else { return true }
            guard Self.waitReadable(context.fileDescriptor, microseconds: deadline - now) else { return false }
        }
    }

    /// Waits until `fd` is readable or the time is up (poll(2)).
    private static func waitReadable(_ fd: Int32, microseconds: UInt64) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ms = Int32(min((microseconds + 999) / 1000, 60_000))
        do {
            _ = try attemptSystemCall("poll") { poll(&entry, 1, ms) }
            return true
        } catch {
            printError("carouseld: input-test: \(error)")
            return false
        }
    }
}
