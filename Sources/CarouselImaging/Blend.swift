import CImageCodecs

extension ImageScaler {
    /// A crossfade's row: `count` pixels of `incoming` over `outgoing` at
    /// `fraction` (0 to 1, in 128 steps), per channel, into `destination`,
    /// which is only written (it may be scanout memory). SIMD on every target.
    ///
    /// The corresponding C function is `cic_crossfade_row`.
    public static func crossfade(_ outgoing: UnsafePointer<UInt32>, _ incoming: UnsafePointer<UInt32>,
                                 into destination: UnsafeMutablePointer<UInt32>, count: Int, fraction: Double) {
        guard count > 0 else { return }
        cic_crossfade_row(outgoing, incoming, destination, count, UInt32((min(max(fraction, 0), 1) * 256).rounded()))
    }
}
