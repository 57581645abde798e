import CPixman

extension ImageScaler {
    /// Blends `source` over `destination` at `opacity` (0 to 1), both opaque
    /// XRGB8888 of `width × height` in ordinary memory: destination =
    /// source·opacity + destination·(1 − opacity), a crossfade's frame.
    /// pixman's OVER with a solid mask, in its SIMD paths; the destination
    /// is read, so it must not be scanout memory (often write-combined).
    ///
    /// The corresponding C function is `pixman_image_composite32`.
    public static func blend(_ source: UnsafeMutableRawPointer, sourceStride: Int,
                             over destination: UnsafeMutableRawPointer, destinationStride: Int,
                             width: Int, height: Int, opacity: Double) {
        guard width > 0, height > 0,
              let src = pixman_image_create_bits_no_clear(PIXMAN_x8r8g8b8, Int32(width), Int32(height),
                                                          source.assumingMemoryBound(to: UInt32.self), Int32(sourceStride))
        else { return }
        defer { pixman_image_unref(src) }
        guard let dst = pixman_image_create_bits_no_clear(PIXMAN_x8r8g8b8, Int32(width), Int32(height),
                                                          destination.assumingMemoryBound(to: UInt32.self),
                                                          Int32(destinationStride))
        else { return }
        defer { pixman_image_unref(dst) }
        var alpha = pixman_color_t(red: 0, green: 0, blue: 0,
                                   alpha: UInt16((min(max(opacity, 0), 1) * 65535).rounded()))
        guard let mask = pixman_image_create_solid_fill(&alpha) else { return }
        defer { pixman_image_unref(mask) }
        pixman_image_composite32(PIXMAN_OP_OVER, src, mask, dst, 0, 0, 0, 0, 0, 0, Int32(width), Int32(height))
    }
}
