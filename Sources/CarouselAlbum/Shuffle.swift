/// `[images] order = shuffle`: a new random order on every pass through the
/// pictures, without changing anything the viewer can see.
///
/// The album stays one list (a permutation of the pictures) and the carousel
/// wraps over it; a pass is one round from the first slot to the last. Each
/// time the carousel comes to rest on a slot, the pictures in slots that are
/// neither on screen nor next to it (`fixed`) are shuffled, in two groups:
/// those before the current slot (already shown in this pass: their order
/// is the next pass's) and those after it (still to come in this pass). No
/// picture moves from one group to the other, so
///
/// * every pass shows every picture exactly once (the list is a permutation),
/// * the last picture of a pass and the first of the next are different
///   slots of it, so never the same picture (with two or more),
/// * the picture on screen and its neighbours, drawn or decoded ahead, stay
///   where they are.
///
/// With few pictures most slots are fixed: with one picture per screen and
/// four pictures or fewer no group has two free slots (three are on screen or
/// next to it), so nothing can move and the order stays as it is.
public enum Shuffle {
    /// Shuffles the free slots of `ring` while the carousel rests on `current`.
    /// `fixed`: slots that must keep their picture (on screen, neighbours).
    public static func reshuffle<Element, Generator: RandomNumberGenerator>(
        _ ring: inout [Element], current: Int, fixed: Set<Int>, using generator: inout Generator
    ) {
        guard ring.indices.contains(current) else { return }
        let shown = ring.indices.filter { $0 < current && !fixed.contains($0) }
        let coming = ring.indices.filter { $0 > current && !fixed.contains($0) }
        for slots in [shown, coming] where slots.count > 1 {
            var contents = slots.map { ring[$0] }
            contents.shuffle(using: &generator)
            for (slot, element) in zip(slots, contents) { ring[slot] = element }
        }
    }

    /// The slots next to `slots` (one each way, across the seam with `wrap`),
    /// with `slots`: what `reshuffle` must leave alone.
    public static func neighbourhood(of slots: [Int], count: Int, wrap: Bool) -> Set<Int> {
        var fixed = Set<Int>()
        guard count > 0 else { return fixed }
        for slot in slots {
            for step in -1...1 {
                var i = slot + step
                if wrap { i = ((i % count) + count) % count }
                if (0..<count).contains(i) { fixed.insert(i) }
            }
        }
        return fixed
    }
}

/// SplitMix64 as a `RandomNumberGenerator`: seeded, so tests can replay a
/// shuffle; the daemon seeds it from the system's generator.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state = state &+ 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
