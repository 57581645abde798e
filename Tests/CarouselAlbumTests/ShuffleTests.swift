import Testing
@testable import CarouselAlbum

@Suite("order = shuffle: a new order every pass, nothing on screen moves")
struct ShuffleTests {
    /// Autoplay forward through `passes` passes over `count` pictures with a
    /// reshuffle at every rest, as the daemon does; returns what each pass
    /// showed and checks at every step that the fixed slots kept their picture.
    func play(count: Int, passes: Int, seed: UInt64) -> [[Int]] {
        var generator = SeededGenerator(seed: seed)
        var ring = Array(0..<count)
        var shown: [[Int]] = []
        for _ in 0..<passes {
            var pass: [Int] = []
            for slot in 0..<count {
                pass.append(ring[slot])
                let fixed = Shuffle.neighbourhood(of: [slot], count: count, wrap: true)
                let before = ring
                Shuffle.reshuffle(&ring, current: slot, fixed: fixed, using: &generator)
                for i in fixed { #expect(ring[i] == before[i], "slot \(i) changed while at \(slot)") }
                #expect(ring.sorted() == Array(0..<count))
            }
            shown.append(pass)
        }
        return shown
    }

    @Test("every picture exactly once per pass, never the same across a boundary, the order changes",
          arguments: [5, 6, 8, 30])
    func passes(count: Int) {
        let shown = play(count: count, passes: 200, seed: 0x5eed + UInt64(count))
        for pass in shown { #expect(pass.sorted() == Array(0..<count)) }
        for (previous, next) in zip(shown, shown.dropFirst()) { #expect(previous.last != next.first) }
        let changes = zip(shown, shown.dropFirst()).filter { $0 != $1 }.count
        #expect(changes > 150, "only \(changes) of 199 passes differ from the one before")
        // Every picture gets to open a pass: no slot is left out of the shuffle.
        #expect(Set(shown.map(\.first!)).count == count)
        #expect(Set(shown.map(\.last!)).count == count)
    }

    @Test("with four pictures or fewer nothing can move")
    func tooFew() {
        for count in 1...4 {
            let shown = play(count: count, passes: 5, seed: 7)
            #expect(Set(shown.map { $0 }).count == 1)
        }
    }

    @Test("the same seed replays the same shuffle; another seed another one")
    func seeded() {
        #expect(play(count: 10, passes: 5, seed: 1) == play(count: 10, passes: 5, seed: 1))
        #expect(play(count: 10, passes: 5, seed: 1) != play(count: 10, passes: 5, seed: 2))
    }

    @Test("neighbours across the seam, and without wrap not")
    func neighbourhood() {
        #expect(Shuffle.neighbourhood(of: [0], count: 6, wrap: true) == [5, 0, 1])
        #expect(Shuffle.neighbourhood(of: [0], count: 6, wrap: false) == [0, 1])
        #expect(Shuffle.neighbourhood(of: [2, 3], count: 6, wrap: true) == [1, 2, 3, 4])
    }
}
