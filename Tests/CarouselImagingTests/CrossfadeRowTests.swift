import Testing
@testable import CarouselImaging

/// Every SIMD loop of the crossfade this CPU has gives exactly the per-byte
/// sum a + ((b − a)·w + 64) >> 7 (w = weight/2 in 0…128) the portable loop
/// was written from, at every weight, for any length and alignment, with
/// and without streamed stores, and writes nothing outside its row.
@Suite("crossfade rows: every SIMD loop, exactly")
struct CrossfadeRowTests {
    static func expected(_ a: UInt32, _ b: UInt32, weight: Int) -> UInt32 {
        let w = (min(weight, 256) + 1) / 2
        var out: UInt32 = 0
        for shift in stride(from: 0 as UInt32, to: 32, by: 8) {
            let ca = Int((a >> shift) & 0xFF), cb = Int((b >> shift) & 0xFF)
            out |= UInt32(ca + (((cb - ca) * w + 64) >> 7)) << shift
        }
        return out
    }

    /// Blends `count` pixels into `out` at `offset` with `loop` and returns
    /// how many pixels differ from `expected` (guard pixels around included);
    /// nil if this CPU lacks the loop.
    static func wrong(_ loop: ImageScaler.CrossfadeLoop, count: Int, offset: Int, weight: Int, streaming: Bool,
                      seed: UInt64) -> Int? {
        var state = seed
        func next() -> UInt32 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt32(truncatingIfNeeded: state >> 32)
        }
        let a = (0..<count + 1).map { _ in next() }, b = (0..<count + 1).map { _ in next() }
        let guardWord: UInt32 = 0xDEAD_BEEF
        var out = [UInt32](repeating: guardWord, count: offset + count + 20)
        let done = a.withUnsafeBufferPointer { pa in
            b.withUnsafeBufferPointer { pb in
                out.withUnsafeMutableBufferPointer { po in
                    // A source shifted by one pixel too: the loads are unaligned as well.
                    ImageScaler.crossfade(using: loop, pa.baseAddress! + 1, pb.baseAddress!, into: po.baseAddress! + offset,
                                          count: count, fraction: Double(weight) / 256, streaming: streaming)
                }
            }
        }
        guard done else { return nil }
        ImageScaler.fenceStreamedStores()
        var wrong = 0
        for (i, o) in out.enumerated() {
            let want = i >= offset && i < offset + count ? expected(a[i - offset + 1], b[i - offset], weight: weight) : guardWord
            if o != want { wrong += 1 }
        }
        return wrong
    }

    @Test("every weight from 0 to 256", arguments: ImageScaler.CrossfadeLoop.allCases)
    func everyWeight(loop: ImageScaler.CrossfadeLoop) throws {
        for weight in 0...256 {
            for streaming in [false, true] {
                guard let wrong = Self.wrong(loop, count: 77, offset: 3, weight: weight, streaming: streaming,
                                             seed: UInt64(weight)) else { return }  // not on this CPU
                #expect(wrong == 0, "\(loop) weight \(weight) streaming \(streaming): \(wrong) pixels wrong")
            }
        }
    }

    @Test("any length, any alignment of the output", arguments: ImageScaler.CrossfadeLoop.allCases)
    func everyLengthAndAlignment(loop: ImageScaler.CrossfadeLoop) throws {
        for count in [0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 130] {
            for offset in 0...17 {
                for (k, weight) in [1, 97, 200, 255].enumerated() {
                    let streaming = (offset + k) % 2 == 0
                    guard let wrong = Self.wrong(loop, count: count, offset: offset, weight: weight, streaming: streaming,
                                                 seed: UInt64(count * 100 + offset)) else { return }
                    #expect(wrong == 0, "\(loop) \(count) pixels at +\(offset), weight \(weight): \(wrong) wrong")
                }
            }
        }
    }
}
