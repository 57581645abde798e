import CImageCodecs

extension ImageScaler {
    /// A crossfade's row: `count` pixels of `incoming` over `outgoing` at
    /// `fraction` (0 to 1, in 128 steps), per channel, into `destination`,
    /// which is only written (it may be scanout memory). SIMD on every target.
    ///
    /// With `streaming`, `destination` will not be read soon (a display
    /// buffer): its stores may go around the cache, leaving the cache to the
    /// pictures. Such stores are ordered only by `fenceStreamedStores()`,
    /// which must be called after the last row, before the rows are read or
    /// the buffer is handed to the display.
    ///
    /// The corresponding C function is `cic_crossfade_row`.
    public static func crossfade(_ outgoing: UnsafePointer<UInt32>, _ incoming: UnsafePointer<UInt32>,
                                 into destination: UnsafeMutablePointer<UInt32>, count: Int, fraction: Double,
                                 streaming: Bool = false) {
        guard count > 0 else { return }
        cic_crossfade_row(outgoing, incoming, destination, count, crossfadeWeight(fraction), streaming ? 1 : 0)
    }

    /// Makes the streamed stores of `crossfade(…, streaming: true)` visible
    /// in order. The corresponding C function is `cic_crossfade_fence`.
    public static func fenceStreamedStores() { cic_crossfade_fence() }

    /// `fraction` as the C loops take it: 0 to 256.
    static func crossfadeWeight(_ fraction: Double) -> UInt32 { UInt32((min(max(fraction, 0), 1) * 256).rounded()) }

    /// The SIMD loops `crossfade` chooses from, slowest first.
    enum CrossfadeLoop: Int32, CaseIterable {
        case portable = 0, avx2
    }

    /// `crossfade` with `loop`, for tests that check every loop this CPU
    /// has; false (nothing written) if it has not. The corresponding C
    /// function is `cic_crossfade_row_using`.
    static func crossfade(using loop: CrossfadeLoop, _ outgoing: UnsafePointer<UInt32>,
                          _ incoming: UnsafePointer<UInt32>, into destination: UnsafeMutablePointer<UInt32>, count: Int,
                          fraction: Double, streaming: Bool) -> Bool {
        cic_crossfade_row_using(loop.rawValue, outgoing, incoming, destination, count, crossfadeWeight(fraction),
                                streaming ? 1 : 0) == 0
    }
}
