import CarouselConfig
import CarouselCore
import CarouselInput
import CarouselPlatform

/// Turns libinput's events into the carousel's: touch in panel pixels
/// mapped through the display rotation into layout pixels, a pointer with
/// its left button held as one more finger, keys as commands. A value with
/// no I/O: the input service feeds it events and asks the loop to carry out
/// what comes back (`LoopAsk.input`).
public struct InputRouter: Sendable {
    /// The model's id for the pointer-as-finger (touch slots are small numbers).
    public static let pointerID = 1_000_000
    /// BTN_LEFT (linux/input-event-codes.h).
    static let leftButton: UInt32 = 0x110

    /// The turn from panel to layout, and the panel's size in pixels.
    public var rotation: Rotation
    public private(set) var panelWidth: Double
    public private(set) var panelHeight: Double
    /// `[input] pointer` and `keyboard`.
    public var pointerEnabled: Bool
    public var keyboardEnabled: Bool
    /// The key of `[power] presence = key:NAME`: presence, never a command
    /// and never a waking key (also with `[input] keyboard = false`).
    public var presenceKey: UInt32?
    /// The pointer's position in panel pixels, and whether its button is held.
    public private(set) var cursor: (x: Double, y: Double)
    public private(set) var pointerDown = false

    public init(rotation: Rotation, panelWidth: Int, panelHeight: Int, input: InputConfig) {
        self.rotation = rotation
        self.panelWidth = Double(panelWidth)
        self.panelHeight = Double(panelHeight)
        pointerEnabled = input.pointer
        keyboardEnabled = input.keyboard
        cursor = (Double(panelWidth) / 2, Double(panelHeight) / 2)
    }

    /// A new panel size or configuration: the cursor stays on the panel.
    public mutating func reconfigure(rotation: Rotation, panelWidth: Int, panelHeight: Int, input: InputConfig) {
        self.rotation = rotation
        self.panelWidth = Double(panelWidth)
        self.panelHeight = Double(panelHeight)
        pointerEnabled = input.pointer
        keyboardEnabled = input.keyboard
        cursor = (min(cursor.x, self.panelWidth - 1), min(cursor.y, self.panelHeight - 1))
    }

    private func layout(_ x: Double, _ y: Double) -> Point {
        rotation.logical(Point(x: x, y: y), panelWidth: panelWidth, panelHeight: panelHeight)
    }

    /// What `event` means, if anything.
    public mutating func route(_ event: InputEvent) -> RoutedInput? {
        switch event {
        case let .touchDown(slot, x, y, time):
            return .touch(.down(id: slot, at: layout(x, y)), time: Int64(time))
        case let .touchMotion(slot, x, y, time):
            return .touch(.move(id: slot, to: layout(x, y)), time: Int64(time))
        case let .touchUp(slot, time):
            return .touch(.up(id: slot), time: Int64(time))
        case let .touchCancel(slot, time):
            return .touch(.cancel(id: slot), time: Int64(time))
        case .touchFrame:
            return nil
        case let .pointerMotion(dx, dy, time):
            guard pointerEnabled else { return nil }
            cursor = (min(max(cursor.x + dx, 0), panelWidth - 1), min(max(cursor.y + dy, 0), panelHeight - 1))
            return pointerDown ? .touch(.move(id: Self.pointerID, to: layout(cursor.x, cursor.y)), time: Int64(time)) : nil
        case let .pointerMotionAbsolute(x, y, time):
            guard pointerEnabled else { return nil }
            cursor = (x, y)
            return pointerDown ? .touch(.move(id: Self.pointerID, to: layout(x, y)), time: Int64(time)) : nil
        case let .pointerButton(button, pressed, time):
            guard pointerEnabled, button == Self.leftButton else { return nil }
            pointerDown = pressed
            let input: TouchInput = pressed ? .down(id: Self.pointerID, at: layout(cursor.x, cursor.y)) : .up(id: Self.pointerID)
            return .touch(input, time: Int64(time))
        case let .key(code, pressed, time) where code == presenceKey:
            return .presence(pressed, time: Int64(time))
        case .key:
            guard keyboardEnabled, let key = KeyCommand(event) else { return nil }
            return .command(key.command)
        case let .deviceAdded(info):
            if info.capabilities.contains(.touch), let size = info.physicalSize, size.width > 0 {
                return .touchscreenAdded(info, size: size)
            }
            return .note(Self.added(info))
        case let .deviceRemoved(info):
            if info.capabilities.contains(.touch), info.physicalSize != nil { return .touchscreenRemoved(info) }
            return .note(Self.removed(info))
        }
    }

    /// The log line of a device that came.
    public static func added(_ info: InputDeviceInfo) -> String {
        var line = "input device added: \(info.name) (\(info.sysname); \(info.capabilities.names.joined(separator: ", "))"
        if let size = info.physicalSize { line += "; \(size.width.formatted)x\(size.height.formatted) mm" }
        return line + ")"
    }

    /// The log line of a device that went.
    public static func removed(_ info: InputDeviceInfo) -> String {
        "input device removed: \(info.name) (\(info.sysname))"
    }
}
