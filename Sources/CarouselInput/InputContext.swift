import CarouselPlatform
internal import CInputLoader
import CInputShim
import CLibinput
import CUdev
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The seat's input devices through libinput's udev backend: owner of one
/// udev context and one libinput context, released exactly once in deinit.
///
/// Not thread-safe: create it, dispatch it and drop it on the event loop's
/// thread. The loop polls `fileDescriptor` (epoll, level-triggered) and
/// calls `dispatch()` when it is readable; libinput also uses the descriptor
/// for its own timers, so dispatch whenever it is readable, not only when a
/// device moved.
///
/// libinput itself is opened (dlopen) by the first context of the process,
/// not at start-up (`InputLibrary`); without it every init throws
/// `InputError.libraryUnavailable`.
///
/// Devices are opened with `open(2)` directly (no logind session): the
/// daemon's user needs read-write access to /dev/input/event* (root, or the
/// `input` group). Devices come and go at any time; udev must be running,
/// because libinput only takes devices that udev has tagged (ID_INPUT*).
public final class InputContext {
    /// libinput's functions (CInputLoader.h).
    private let lib: cinput_library
    private let udev: OpaquePointer
    private let libinput: OpaquePointer
    /// libinput keeps a pointer to its interface for the context's life.
    private let interface: UnsafeMutablePointer<libinput_interface>
    /// libinput's user data: what the C callbacks reach.
    private let shared: Shared

    /// Devices between their DEVICE_ADDED and DEVICE_REMOVED events, by
    /// libinput's handle. The seat holds a reference to each meanwhile, so
    /// the handles stay valid without one of ours.
    private var devices: [OpaquePointer: InputDeviceInfo] = [:]
    private var nextDeviceID = 1
    private var touches = TouchTracker()

    /// The seat this context reads.
    public let seat: String

    /// The panel's size in pixels: touch and absolute pointer coordinates
    /// are scaled to it (`libinput_event_touch_get_x_transformed`). `.unit`
    /// until set, giving fractions of the device's extent.
    public var panelSize: InputPanelSize

    /// The calibration matrix given to every touch device, nil for each
    /// device's default. See `setCalibration(_:)`.
    public private(set) var calibration: [Float]?

    /// How much of libinput's log reaches the handler
    /// (`libinput_log_set_priority`). `.error` by default.
    public var logPriority: InputLogPriority = .error {
        didSet { lib.libinput_log_set_priority(libinput, libinput_log_priority(UInt32(logPriority.rawValue))) }
    }

    /// Creates the contexts and assigns the seat, which opens every input
    /// device of the seat that udev knows now; their `deviceAdded` events
    /// come with the first `dispatch()`.
    ///
    /// The corresponding C functions are `udev_new`,
    /// `libinput_udev_create_context` and `libinput_udev_assign_seat`,
    /// after libinput is opened if no context did so yet (a failure to load
    /// it is `InputError.libraryUnavailable`, the same for every context of
    /// the process). `log` receives libinput's messages from here on, and
    /// this room's own (a device that cannot be opened, a calibration refused).
    public init(seat: String = "seat0", panelSize: InputPanelSize = .unit, logPriority: InputLogPriority = .error,
                log: @escaping InputLogHandler = InputLog.write) throws(InputError) {
        let lib = try InputLibrary.table()
        let shared = Shared(log: log)
        // libinput calls back into `shared` (log, open, close) until it is
        // released, also on the failure paths below, where nothing else
        // would keep it alive past its last visible use.
        defer { withExtendedLifetime(shared) {} }
        guard let udev = udev_new() else { throw .udevUnavailable }
        let interface = UnsafeMutablePointer<libinput_interface>.allocate(capacity: 1)
        interface.initialize(to: libinput_interface(open_restricted: openRestricted, close_restricted: closeRestricted))
        let userData = Unmanaged.passUnretained(shared).toOpaque()
        guard let libinput = lib.libinput_udev_create_context(interface, userData, udev) else {
            udev_unref(udev)
            interface.deallocate()
            throw .contextUnavailable
        }
        cis_log_install(libinput, logSink, lib.libinput_log_set_handler)
        lib.libinput_log_set_priority(libinput, libinput_log_priority(UInt32(logPriority.rawValue)))
        if lib.libinput_udev_assign_seat(libinput, seat) != 0 {
            _ = lib.libinput_unref(libinput)
            udev_unref(udev)
            interface.deallocate()
            throw .seatAssignmentFailed(seat: seat)
        }
        self.lib = lib
        self.udev = udev
        self.libinput = libinput
        self.interface = interface
        self.shared = shared
        self.seat = seat
        self.panelSize = panelSize
        self.logPriority = logPriority
    }

    deinit {
        // libinput_unref closes every device through close_restricted (and
        // may log), so it runs while `shared` and `interface` still exist.
        _ = lib.libinput_unref(libinput)
        udev_unref(udev)
        interface.deallocate()
    }

    /// The descriptor to poll for readability (`libinput_get_fd`). Owned by
    /// libinput: never close it.
    public var fileDescriptor: Int32 { lib.libinput_get_fd(libinput) }

    /// The devices currently on the seat, in the order they were added.
    public var currentDevices: [InputDeviceInfo] { devices.values.sorted { $0.id < $1.id } }

    /// Reads what the devices have to say and returns it, in order; never
    /// blocks (an empty array when nothing happened).
    ///
    /// The corresponding C functions are `libinput_dispatch`, then
    /// `libinput_get_event` until the queue is empty.
    public func dispatch() throws(InputError) -> [InputEvent] {
        var events: [InputEvent] = []
        // What libinput queued without reading any device first: the
        // DEVICE_ADDED events of assign_seat and resume. Their devices get
        // the calibration matrix here, before libinput_dispatch reads their
        // first touches: libinput applies the matrix as it reads, so touches
        // read before it would come out uncalibrated (a drag begun with a
        // jump, or lost).
        drain(into: &events)
        let rc = lib.libinput_dispatch(libinput)
        if rc < 0 { throw .dispatchFailed(errno: -rc) }
        drain(into: &events)
        return events
    }

    /// Translates and releases every event libinput has queued.
    private func drain(into events: inout [InputEvent]) {
        while let event = lib.libinput_get_event(libinput) {
            translate(event, into: &events)
            lib.libinput_event_destroy(event)
        }
    }

    /// Sets the calibration matrix of every touch device, present and
    /// future: six numbers `a b c d e f` mapping normalized device
    /// coordinates as x' = a·x + b·y + c, y' = d·x + e·y + f (the first two
    /// rows of libinput's 3x3 matrix, as in udev's LIBINPUT_CALIBRATION_MATRIX).
    /// nil restores each device's default matrix.
    ///
    /// The corresponding C function is `libinput_device_config_calibration_set_matrix`.
    /// A device that refuses the matrix is reported through the log handler.
    public func setCalibration(_ matrix: [Float]?) throws(InputError) {
        if let matrix {
            let finite = matrix.filter(\.isFinite).count
            guard matrix.count == 6, finite == 6 else { throw .invalidCalibration(count: finite) }
        }
        calibration = matrix
        for (device, info) in devices where info.capabilities.contains(.touch) {
            applyCalibration(to: device, info: info)
        }
    }

    /// Closes every device and stops reading until `resume()`; the devices'
    /// touches are cancelled and each device is reported removed by the next
    /// `dispatch()` (`libinput_suspend`). For a session switch or a blanked
    /// screen.
    public func suspend() {
        lib.libinput_suspend(libinput)
    }

    /// Opens the seat's devices again after `suspend()`; they come back as
    /// `deviceAdded` events (`libinput_resume`).
    public func resume() throws(InputError) {
        if lib.libinput_resume(libinput) != 0 { throw .resumeFailed }
    }

    // MARK: - Events

    private func translate(_ event: OpaquePointer, into events: inout [InputEvent]) {
        let type = lib.libinput_event_get_type(event)
        switch type {
        case LIBINPUT_EVENT_DEVICE_ADDED:
            guard let device = lib.libinput_event_get_device(event) else { return }
            let info = describe(device, id: nextDeviceID)
            nextDeviceID += 1
            devices[device] = info
            if info.capabilities.contains(.touch), calibration != nil { applyCalibration(to: device, info: info) }
            events.append(.deviceAdded(info))

        case LIBINPUT_EVENT_DEVICE_REMOVED:
            guard let device = lib.libinput_event_get_device(event) else { return }
            let info = devices.removeValue(forKey: device)
                ?? describe(device, id: 0)  // removed before we saw it added: cannot happen, but say what it was
            let leftDown = touches.removeDevice(info.id)
            if !leftDown.isEmpty {
                let now = monotonicMicroseconds()
                for slot in leftDown { events.append(.touchCancel(slot: slot, time: now)) }
                events.append(.touchFrame(time: now))
            }
            events.append(.deviceRemoved(info))

        case LIBINPUT_EVENT_TOUCH_DOWN, LIBINPUT_EVENT_TOUCH_MOTION:
            guard let touch = lib.libinput_event_get_touch_event(event) else { return }
            let slot = Int(lib.libinput_event_touch_get_seat_slot(touch))
            let x = lib.libinput_event_touch_get_x_transformed(touch, panelSize.width)
            let y = lib.libinput_event_touch_get_y_transformed(touch, panelSize.height)
            let time = lib.libinput_event_touch_get_time_usec(touch)
            if type == LIBINPUT_EVENT_TOUCH_DOWN {
                touches.down(slot: slot, device: deviceID(of: event))
                events.append(.touchDown(slot: slot, x: x, y: y, time: time))
            } else {
                events.append(.touchMotion(slot: slot, x: x, y: y, time: time))
            }

        case LIBINPUT_EVENT_TOUCH_UP, LIBINPUT_EVENT_TOUCH_CANCEL:
            guard let touch = lib.libinput_event_get_touch_event(event) else { return }
            let slot = Int(lib.libinput_event_touch_get_seat_slot(touch))
            let time = lib.libinput_event_touch_get_time_usec(touch)
            touches.ended(slot: slot, device: deviceID(of: event))
            events.append(type == LIBINPUT_EVENT_TOUCH_UP
                ? .touchUp(slot: slot, time: time) : .touchCancel(slot: slot, time: time))

        case LIBINPUT_EVENT_TOUCH_FRAME:
            guard let touch = lib.libinput_event_get_touch_event(event) else { return }
            events.append(.touchFrame(time: lib.libinput_event_touch_get_time_usec(touch)))

        case LIBINPUT_EVENT_POINTER_MOTION:
            guard let pointer = lib.libinput_event_get_pointer_event(event) else { return }
            events.append(.pointerMotion(dx: lib.libinput_event_pointer_get_dx(pointer),
                                         dy: lib.libinput_event_pointer_get_dy(pointer),
                                         time: lib.libinput_event_pointer_get_time_usec(pointer)))

        case LIBINPUT_EVENT_POINTER_MOTION_ABSOLUTE:
            guard let pointer = lib.libinput_event_get_pointer_event(event) else { return }
            events.append(.pointerMotionAbsolute(
                x: lib.libinput_event_pointer_get_absolute_x_transformed(pointer, panelSize.width),
                y: lib.libinput_event_pointer_get_absolute_y_transformed(pointer, panelSize.height),
                time: lib.libinput_event_pointer_get_time_usec(pointer)))

        case LIBINPUT_EVENT_POINTER_BUTTON:
            guard let pointer = lib.libinput_event_get_pointer_event(event) else { return }
            events.append(.pointerButton(
                button: lib.libinput_event_pointer_get_button(pointer),
                pressed: lib.libinput_event_pointer_get_button_state(pointer) == LIBINPUT_BUTTON_STATE_PRESSED,
                time: lib.libinput_event_pointer_get_time_usec(pointer)))

        case LIBINPUT_EVENT_KEYBOARD_KEY:
            guard let keyboard = lib.libinput_event_get_keyboard_event(event) else { return }
            events.append(.key(
                code: lib.libinput_event_keyboard_get_key(keyboard),
                pressed: lib.libinput_event_keyboard_get_key_state(keyboard) == LIBINPUT_KEY_STATE_PRESSED,
                time: lib.libinput_event_keyboard_get_time_usec(keyboard)))

        default:
            // Scroll wheels, gestures, tablets, switches: nothing carouseld uses (yet).
            break
        }
    }

    private func deviceID(of event: OpaquePointer) -> Int {
        guard let device = lib.libinput_event_get_device(event) else { return 0 }
        return devices[device]?.id ?? 0
    }

    /// The corresponding C functions are `libinput_device_get_name`,
    /// `libinput_device_get_sysname`, `libinput_device_has_capability`,
    /// `libinput_device_get_size` and `udev_device_get_devnode`.
    private func describe(_ device: OpaquePointer, id: Int) -> InputDeviceInfo {
        var capabilities: InputCapabilities = []
        if lib.libinput_device_has_capability(device, LIBINPUT_DEVICE_CAP_TOUCH) != 0 { capabilities.insert(.touch) }
        if lib.libinput_device_has_capability(device, LIBINPUT_DEVICE_CAP_POINTER) != 0 { capabilities.insert(.pointer) }
        if lib.libinput_device_has_capability(device, LIBINPUT_DEVICE_CAP_KEYBOARD) != 0 { capabilities.insert(.keyboard) }
        var width = 0.0, height = 0.0
        let size = lib.libinput_device_get_size(device, &width, &height) == 0 && width > 0 && height > 0
            ? InputPhysicalSize(width: width, height: height) : nil
        var devnode: String?
        if let udevDevice = lib.libinput_device_get_udev_device(device) {
            if let node = udev_device_get_devnode(udevDevice) { devnode = String(cString: node) }
            udev_device_unref(udevDevice)
        }
        return InputDeviceInfo(
            id: id,
            name: lib.libinput_device_get_name(device).map { String(cString: $0) } ?? "",
            sysname: lib.libinput_device_get_sysname(device).map { String(cString: $0) } ?? "",
            devnode: devnode, capabilities: capabilities, physicalSize: size)
    }

    /// The corresponding C functions are
    /// `libinput_device_config_calibration_has_matrix`,
    /// `libinput_device_config_calibration_get_default_matrix` and
    /// `libinput_device_config_calibration_set_matrix`.
    private func applyCalibration(to device: OpaquePointer, info: InputDeviceInfo) {
        guard lib.libinput_device_config_calibration_has_matrix(device) != 0 else {
            if calibration != nil {
                shared.log(.error, "\(info.sysname) (\(info.name)): this device cannot be calibrated; [input] calibration is ignored for it")
            }
            return
        }
        var matrix = [Float](repeating: 0, count: 6)
        if let calibration {
            matrix = calibration
        } else {
            _ = lib.libinput_device_config_calibration_get_default_matrix(device, &matrix)
        }
        let status = lib.libinput_device_config_calibration_set_matrix(device, matrix)
        if status != LIBINPUT_CONFIG_STATUS_SUCCESS {
            let reason = lib.libinput_config_status_to_str(status).map { String(cString: $0) } ?? "status \(status.rawValue)"
            shared.log(.error, "\(info.sysname) (\(info.name)): calibration matrix refused: \(reason)")
        }
    }
}

/// What libinput's C callbacks reach through its user-data pointer.
private final class Shared {
    let log: InputLogHandler

    init(log: @escaping InputLogHandler) { self.log = log }

    static func from(_ userData: UnsafeMutableRawPointer?) -> Shared? {
        guard let userData else { return nil }
        return Unmanaged<Shared>.fromOpaque(userData).takeUnretainedValue()
    }
}

/// libinput's `open_restricted`: opens a device node, never inherited by
/// children (O_CLOEXEC); returns the descriptor or a negative errno, as
/// libinput expects. A refusal is logged with what to do about it, since
/// libinput itself mentions it only at its info level.
private func openRestricted(_ path: UnsafePointer<CChar>?, _ flags: Int32, _ userData: UnsafeMutableRawPointer?) -> Int32 {
    guard let path else { return -EINVAL }
    do {
        guard let fd = try attemptSystemCall("open", { open(path, flags | O_CLOEXEC) }) else { return -EAGAIN }
        return fd
    } catch {
        let name = String(cString: path)
        var line = "cannot open \(name): \(errnoDescription(error.errno))"
        if error.errno == EACCES || error.errno == EPERM {
            line += " (Maybe you don't have the right permissions? The daemon's user needs read-write access to input devices: run it as root or in the 'input' group)"
        }
        Shared.from(userData)?.log(.error, line)
        return -error.errno
    }
}

/// libinput's `close_restricted`. Not retried on EINTR: on Linux the
/// descriptor is released even when close is interrupted, and closing it
/// again could close a descriptor another thread just opened.
private func closeRestricted(_ fd: Int32, _ userData: UnsafeMutableRawPointer?) {
    _ = close(fd)
}

/// Receives libinput's formatted log messages from the C shim. Only a
/// context made with the loaded table installs it, so the table is there.
private func logSink(_ libinput: OpaquePointer?, _ priority: Int32, _ text: UnsafePointer<CChar>?) {
    guard let libinput, let text, case .success(let lib) = InputLibrary.loaded,
          let shared = Shared.from(lib.libinput_get_user_data(libinput)) else { return }
    shared.log(InputLogPriority(libinputPriority: priority), InputLog.trimmed(String(cString: text)))
}

extension InputEvent {
    /// Now, on the clock of event time stamps (microseconds of CLOCK_MONOTONIC).
    public static func now() -> UInt64 { monotonicMicroseconds() }
}

/// Now, in microseconds of CLOCK_MONOTONIC: the clock of libinput's time
/// stamps (libinput sets it on every device with EVIOCSCLOCKID).
func monotonicMicroseconds() -> UInt64 { UInt64(max(0, MonotonicClock.now())) }
