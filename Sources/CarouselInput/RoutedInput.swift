import CarouselCore

/// What one input event means to the carousel (`InputRouter` makes it from
/// an `InputEvent`; the daemon carries it out: the input service asks it of
/// the loop, `LoopAsk.input`).
public enum RoutedInput: Equatable, Sendable {
    /// A finger (or the pointer with its button held) in layout pixels, at
    /// the event's own time stamp (µs, CLOCK_MONOTONIC).
    case touch(TouchInput, time: Int64)
    /// A key (or an IR remote's key) asked for a command.
    case command(CarouselCommand)
    /// The presence sensor's key (`[power] presence = key:NAME`): down, someone
    /// is there; up, they left. At the event's own time stamp (µs).
    case presence(Bool, time: Int64)
    /// A touchscreen came that reports its size: the touch slop can follow
    /// its density.
    case touchscreenAdded(InputDeviceInfo, size: InputPhysicalSize)
    /// A touchscreen that reported its size went away.
    case touchscreenRemoved(InputDeviceInfo)
    /// Worth a log line (devices coming and going).
    case note(String)
}
