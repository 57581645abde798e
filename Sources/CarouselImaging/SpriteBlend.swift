import CPixman

extension DecodedImage {
    /// Draws `sprite` (premultiplied ARGB: a caption) over this picture with
    /// its top-left corner at (x, y), clipped to the picture, with pixman's
    /// OVER operator.
    ///
    /// Pictures are read-only once handed out; this is for a picture still
    /// being prepared, which nothing else holds yet (the decode cache draws a
    /// caption between scaling and turning its picture).
    ///
    /// The corresponding C function is `pixman_image_composite32`.
    public func drawOver(_ sprite: DecodedImage, x: Int, y: Int) throws(ScalingError) {
        guard let destination = pixman_image_create_bits_no_clear(
            pixman_format_code_t(format.pixmanFormatCode), Int32(width), Int32(height),
            base.assumingMemoryBound(to: UInt32.self), Int32(stride)
        ) else { throw .pixmanFailed(call: "pixman_image_create_bits_no_clear") }
        defer { pixman_image_unref(destination) }
        guard let source = pixman_image_create_bits_no_clear(
            pixman_format_code_t(sprite.format.pixmanFormatCode), Int32(sprite.width), Int32(sprite.height),
            sprite.base.assumingMemoryBound(to: UInt32.self), Int32(sprite.stride)
        ) else { throw .pixmanFailed(call: "pixman_image_create_bits_no_clear") }
        defer { pixman_image_unref(source) }
        withExtendedLifetime(sprite) {
            pixman_image_composite32(PIXMAN_OP_OVER, source, nil, destination, 0, 0, 0, 0,
                                     Int32(x), Int32(y), Int32(sprite.width), Int32(sprite.height))
        }
    }
}
