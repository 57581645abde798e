import CarouselCore

extension DecodedImage {
    /// One opaque picture `width` wide holding `left` at x = 0 and `right` at
    /// x = `rightX`, both at the top, `background` wherever neither is (the
    /// gap between them, and below the shorter): the page of a pair of
    /// portraits (`[images] pair_portraits`). Row copies; no scaling.
    public static func sideBySide(_ left: DecodedImage, _ right: DecodedImage, x rightX: Int, width: Int,
                                  background: PixelColor) throws(ImageError) -> DecodedImage {
        precondition(rightX >= left.width && rightX + right.width <= width, "the pictures of a pair overlap or stick out")
        let height = max(left.height, right.height)
        let page = try DecodedImage(width: width, height: height, format: .xrgb8888, hasAlpha: false, path: "<pair>")
        // The background is opaque here (the layout gives it over black).
        let fill: UInt32 = 0xFF00_0000 | background.premultipliedARGB
        for y in 0..<height {
            let row = page.row(y)
            var x = 0
            for (picture, start) in [(left, 0), (right, rightX)] {
                if start > x { (row + x).update(repeating: fill, count: start - x) }
                if y < picture.height {
                    (row + start).update(from: picture.row(y), count: picture.width)
                } else {
                    (row + start).update(repeating: fill, count: picture.width)
                }
                x = start + picture.width
            }
            if width > x { (row + x).update(repeating: fill, count: width - x) }
        }
        withExtendedLifetime((left, right)) {}
        return page
    }
}
