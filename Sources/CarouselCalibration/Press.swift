/// One finger's press on a target, from touch-down to touch-up: its
/// position is the mean of every position reported meanwhile, which
/// averages out a resistive panel's jitter.
///
/// Only the first finger counts; a second finger during the press spoils
/// it (which finger meant the target?), as does a cancel. A finger already
/// down when the target appeared is ignored until it lifts.
public struct Press: Sendable {
    public enum Outcome: Equatable, Sendable {
        /// The finger lifted: the mean position and how many samples made it.
        case pressed(NormalizedPoint, samples: Int)
        /// The press was spoiled; the reason is for the person touching.
        case spoiled(String)
    }

    private var slot: Int?
    private var sumX = 0.0, sumY = 0.0, count = 0
    private var spoiled: String?
    /// Slots down before this press could begin, or besides it.
    private var others: Set<Int>

    /// `down`: slots already touching when the target appeared.
    public init(alreadyDown down: Set<Int> = []) { others = down }

    public mutating func down(slot s: Int, x: Double, y: Double) {
        guard slot == nil, others.isEmpty else {
            others.insert(s)
            if slot != nil { spoiled = "two fingers at once; touch the target with one finger" }
            return
        }
        slot = s
        add(x, y)
    }

    public mutating func motion(slot s: Int, x: Double, y: Double) {
        if s == slot { add(x, y) }
    }

    /// The press's end when `s` was its finger, otherwise nil.
    public mutating func up(slot s: Int) -> Outcome? {
        guard s == slot else {
            others.remove(s)
            return nil
        }
        defer { reset() }
        if let spoiled { return .spoiled(spoiled) }
        return .pressed(NormalizedPoint(x: sumX / Double(count), y: sumY / Double(count)), samples: count)
    }

    public mutating func cancel(slot s: Int) -> Outcome? {
        guard s == slot else {
            others.remove(s)
            return nil
        }
        reset()
        return .spoiled("the touch was cancelled; touch the target again")
    }

    private mutating func add(_ x: Double, _ y: Double) {
        sumX += x
        sumY += y
        count += 1
    }

    private mutating func reset() {
        slot = nil
        sumX = 0; sumY = 0; count = 0
        spoiled = nil
    }
}
