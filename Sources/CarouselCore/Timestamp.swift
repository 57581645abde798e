/// A point on the model's clock, in microseconds from an arbitrary origin.
///
/// The model never reads a clock: every call that depends on time takes a
/// `Timestamp`. Microseconds match libinput's event timestamps, so input
/// events keep their own times (a slow frame does not distort velocity).
public struct Timestamp: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var microseconds: Int64

    public init(microseconds: Int64) { self.microseconds = microseconds }

    public static let zero = Timestamp(microseconds: 0)

    /// A timestamp `ms` milliseconds from the origin, rounded to the microsecond.
    public static func milliseconds(_ ms: Double) -> Timestamp {
        Timestamp(microseconds: Int64((ms * 1000).rounded()))
    }

    /// A timestamp `s` seconds from the origin, rounded to the microsecond.
    public static func seconds(_ s: Double) -> Timestamp {
        Timestamp(microseconds: Int64((s * 1_000_000).rounded()))
    }

    public var seconds: Double { Double(microseconds) / 1_000_000 }
    public var milliseconds: Double { Double(microseconds) / 1000 }

    /// This instant moved by `seconds` (rounded to the microsecond).
    public func adding(seconds: Double) -> Timestamp {
        Timestamp(microseconds: microseconds + Int64((seconds * 1_000_000).rounded()))
    }

    /// Seconds from `earlier` to `self` (negative when `earlier` is later).
    public func seconds(since earlier: Timestamp) -> Double {
        Double(microseconds - earlier.microseconds) / 1_000_000
    }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.microseconds < b.microseconds }

    public var description: String { "\(milliseconds) ms" }
}
