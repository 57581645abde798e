import CarouselConfig
import CarouselCore
import CarouselInput
import CarouselPlatform

/// Turns libinput's events into the model's: touch in panel pixels mapped
/// through the display rotation into layout pixels, a pointer with its
/// button held as one more finger, keys (and IR remotes) as commands.
final class InputRouter {
    let context: InputContext
    private unowned let daemon: Daemon
    /// The running configuration's [input] section (reloads change it).
    private var config: InputConfig { daemon.config.input }
    private var calibration: [Double]?
    private var rotation: Rotation { daemon.rotation }
    private var panelWidth: Double { Double(daemon.backend.panelSize.width) }
    private var panelHeight: Double { Double(daemon.backend.panelSize.height) }
    /// The pointer's position in panel pixels, and whether its button is held.
    private var cursor = (x: 0.0, y: 0.0)
    private var pointerDown = false
    /// The model's id for the pointer-as-finger (touch slots are small numbers).
    static let pointerID = 1_000_000

    init(daemon: Daemon) throws {
        self.daemon = daemon
        let panel = daemon.backend.panelSize
        cursor = (Double(panel.width) / 2, Double(panel.height) / 2)
        context = try InputContext(seat: daemon.config.input.seat,
                                   panelSize: InputPanelSize(width: UInt32(panel.width), height: UInt32(panel.height)),
                                   log: { priority, text in
                                       let level: Priority = priority >= .error ? .error : priority >= .info ? .info : .debug
                                       log(level, "libinput: \(text)")
                                   })
        if let matrix = daemon.config.input.calibration {
            try context.setCalibration(matrix.map { Float($0) })
        }
        calibration = daemon.config.input.calibration
    }

    /// The configuration or the panel changed: new panel size for libinput's
    /// transformed coordinates, a new calibration matrix if there is one.
    func reconfigured() {
        let panel = daemon.backend.panelSize
        context.panelSize = InputPanelSize(width: UInt32(panel.width), height: UInt32(panel.height))
        cursor = (min(cursor.x, panelWidth - 1), min(cursor.y, panelHeight - 1))
        guard config.calibration != calibration else { return }
        do {
            try context.setCalibration(config.calibration?.map { Float($0) })
            calibration = config.calibration
            log(.info, "input: calibration \(calibration.map { $0.map(\.formatted).joined(separator: " ") } ?? "none")")
        } catch {
            log(.warning, "input: cannot apply the calibration: \(error)")
        }
    }

    /// Reads and routes everything libinput has; called when its descriptor is readable.
    func dispatch() {
        let events: [InputEvent]
        do {
            events = try context.dispatch()
        } catch {
            log(.error, "input: \(error)")
            return
        }
        for event in events { route(event) }
    }

    private func layout(_ x: Double, _ y: Double) -> Point {
        rotation.logical(Point(x: x, y: y), panelWidth: panelWidth, panelHeight: panelHeight)
    }

    private func route(_ event: InputEvent) {
        switch event {
        case let .touchDown(slot, x, y, time):
            daemon.feed(.down(id: slot, at: layout(x, y)), at: Int64(time))
        case let .touchMotion(slot, x, y, time):
            daemon.feed(.move(id: slot, to: layout(x, y)), at: Int64(time))
        case let .touchUp(slot, time):
            daemon.feed(.up(id: slot), at: Int64(time))
        case let .touchCancel(slot, time):
            daemon.feed(.cancel(id: slot), at: Int64(time))
        case .touchFrame:
            break
        case let .pointerMotion(dx, dy, time):
            guard config.pointer else { return }
            cursor = (min(max(cursor.x + dx, 0), panelWidth - 1), min(max(cursor.y + dy, 0), panelHeight - 1))
            if pointerDown { daemon.feed(.move(id: Self.pointerID, to: layout(cursor.x, cursor.y)), at: Int64(time)) }
        case let .pointerMotionAbsolute(x, y, time):
            guard config.pointer else { return }
            cursor = (x, y)
            if pointerDown { daemon.feed(.move(id: Self.pointerID, to: layout(x, y)), at: Int64(time)) }
        case let .pointerButton(button, pressed, time):
            // The left button (BTN_LEFT, 0x110) drags like a finger.
            guard config.pointer, button == 0x110 else { return }
            pointerDown = pressed
            daemon.feed(pressed ? .down(id: Self.pointerID, at: layout(cursor.x, cursor.y)) : .up(id: Self.pointerID),
                        at: Int64(time))
        case .key:
            guard config.keyboard, let key = KeyCommand(event) else { return }
            let command: CarouselCommand
            switch key {
            case .previous: command = .previous
            case .next: command = .next
            case .first: command = .first
            case .last: command = .last
            case .togglePause: command = .togglePause
            }
            if let error = daemon.perform(command) { log(.info, "key ignored: \(error)") }
        case let .deviceAdded(info):
            log(.info, "input device added: \(info.name) (\(info.sysname); \(info.capabilities.names.joined(separator: ", ")))")
        case let .deviceRemoved(info):
            log(.info, "input device removed: \(info.name) (\(info.sysname))")
        }
    }
}
