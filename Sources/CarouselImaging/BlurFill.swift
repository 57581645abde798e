import CarouselCore
import CPixman

/// How `fit = blur` fills the box around the sharp picture: the picture
/// again, covering the box, blurred and darkened (the `[images]
/// blur_radius` and `dim` keys).
public struct BlurStyle: Equatable, Sendable {
    /// The blur's standard deviation in pixels of the box (the screen), as
    /// CSS's `blur()` takes it.
    public var radius = 40.0
    /// How much darker the fill is than the picture: 0 unchanged, 1 black.
    public var dim = 0.4

    /// The largest radius: the fill is a wash of colour long before.
    public static let maximumRadius = 500.0

    public init(radius: Double = 40, dim: Double = 0.4) {
        self.radius = radius
        self.dim = dim
    }
}

extension ImageScaler {
    /// An opaque picture of `box` size: `image` aspect-fitted (as `.contain`)
    /// over the same picture aspect-filling the box (as `.cover`), blurred
    /// with a Gaussian of `style.radius` and darkened by `style.dim`.
    ///
    /// The blur is cheap whatever the radius: the cover is drawn shrunk so
    /// that the radius is a few pixels there, blurred with three box passes
    /// per axis (a close Gaussian), and enlarged again bilinearly with the
    /// darkening as a solid mask in the same composite. The shrinking and
    /// enlarging filters add blur of their own, which the box passes leave
    /// out. Only the bars around an opaque picture are enlarged into.
    public static func blurFilled(_ image: DecodedImage, to box: PixelSize, style: BlurStyle,
                                  background: PixelColor) throws(ScalingError) -> DecodedImage {
        let output: DecodedImage
        do {
            output = try DecodedImage(width: box.width, height: box.height, format: .xrgb8888,
                                      hasAlpha: false, path: "<blurred>")
        } catch {
            throw .outOfMemory(bytes: box.width * box.height * 4)
        }
        let boxRect = PixelRect(x: 0, y: 0, width: box.width, height: box.height)
        let visible = placement(of: image.size, in: box, fit: .contain).intersection(boxRect)
        let under = image.hasAlpha ? [boxRect] : boxRect.subtracting(visible)
        if !under.isEmpty {
            let (shrink, passRadius) = blurPlan(radius: style.radius)
            let small = PixelSize(width: max(1, Int((Double(box.width) / shrink).rounded())),
                                  height: max(1, Int((Double(box.height) / shrink).rounded())))
            var fill = try scale(image, to: small, fit: .cover, background: background)
            // The scaler hands back the image itself when it already fits: blur a copy.
            if fill === image { fill = try copy(image) }
            boxBlur(fill, radius: passRadius)
            try enlarge(fill, into: output, rects: under, dim: style.dim)
            withExtendedLifetime(fill) {}
        }
        try scale(image, into: output.base, size: box, stride: output.stride, fit: .contain, background: background,
                  fillsBars: false)
        return output
    }

    /// How a blur of standard deviation `radius` (box pixels) is made: the
    /// factor the cover is shrunk by, and the radius of each of the three
    /// box passes at that size. Three passes of radius r have a variance of
    /// r(r+1); an area-average shrink by k and a bilinear enlargement by k
    /// add about k²/12 + k²/6 = k²/4 (box pixels²). With r = 4 the passes
    /// give 20 shrunk pixels², so k = radius/√20.25 makes the total radius².
    static func blurPlan(radius: Double) -> (shrink: Double, passRadius: Int) {
        let sigma = max(radius, 0)
        if sigma >= 4.5 * 2 { return (sigma / 4.5, 4) }
        // Small blurs: at full size (enlarging from a shrink by less than 2
        // would cost more than it saves).
        let r = Int(((-1 + (1 + 4 * sigma * sigma).squareRoot()) / 2).rounded())
        return (1, r)
    }

    private static func copy(_ image: DecodedImage) throws(ScalingError) -> DecodedImage {
        let result: DecodedImage
        do {
            result = try DecodedImage(width: image.width, height: image.height, format: image.format,
                                      hasAlpha: image.hasAlpha, path: "<copy>")
        } catch {
            throw .outOfMemory(bytes: image.byteCount)
        }
        for y in 0..<image.height { result.row(y).update(from: image.row(y), count: image.width) }
        withExtendedLifetime(image) {}
        return result
    }

    /// Three box-blur passes of `radius` along each axis, in place, edges
    /// extended (a picture's border colour continues past it). Running sums
    /// per channel: the cost does not depend on the radius.
    static func boxBlur(_ image: DecodedImage, radius: Int) {
        guard radius > 0 else { return }
        let width = image.width, height = image.height
        var line = [UInt32](repeating: 0, count: max(width, height))
        var out = [UInt32](repeating: 0, count: max(width, height))
        let window = UInt32(2 * radius + 1)
        func pass(_ count: Int) {
            var r: UInt32 = 0, g: UInt32 = 0, b: UInt32 = 0
            for i in -radius...radius {
                let p = line[min(max(i, 0), count - 1)]
                r += (p >> 16) & 0xFF; g += (p >> 8) & 0xFF; b += p & 0xFF
            }
            let half = window / 2
            for i in 0..<count {
                out[i] = 0xFF00_0000 | ((r + half) / window) << 16 | ((g + half) / window) << 8 | (b + half) / window
                let leaving = line[max(i - radius, 0)], entering = line[min(i + radius + 1, count - 1)]
                r = r &+ ((entering >> 16) & 0xFF) &- ((leaving >> 16) & 0xFF)
                g = g &+ ((entering >> 8) & 0xFF) &- ((leaving >> 8) & 0xFF)
                b = b &+ (entering & 0xFF) &- (leaving & 0xFF)
            }
            swap(&line, &out)
        }
        for y in 0..<height {
            let row = image.row(y)
            for x in 0..<width { line[x] = row[x] }
            for _ in 0..<3 { pass(width) }
            for x in 0..<width { row[x] = line[x] }
        }
        for x in 0..<width {
            for y in 0..<height { line[y] = image.row(y)[x] }
            for _ in 0..<3 { pass(height) }
            for y in 0..<height { image.row(y)[x] = line[y] }
        }
        withExtendedLifetime(image) {}
    }

    /// Draws `small` stretched over the whole of `output`, bilinearly,
    /// darkened by `dim` (a solid mask of 1 − dim), into `rects` only.
    ///
    /// The corresponding C function is `pixman_image_composite32`.
    private static func enlarge(_ small: DecodedImage, into output: DecodedImage, rects: [PixelRect],
                                dim: Double) throws(ScalingError) {
        guard let destination = pixman_image_create_bits_no_clear(
            PIXMAN_x8r8g8b8, Int32(output.width), Int32(output.height),
            output.base.assumingMemoryBound(to: UInt32.self), Int32(output.stride)
        ) else { throw .pixmanFailed(call: "pixman_image_create_bits_no_clear") }
        defer { pixman_image_unref(destination) }
        guard let source = pixman_image_create_bits_no_clear(
            PIXMAN_x8r8g8b8, Int32(small.width), Int32(small.height),
            small.base.assumingMemoryBound(to: UInt32.self), Int32(small.stride)
        ) else { throw .pixmanFailed(call: "pixman_image_create_bits_no_clear") }
        defer { pixman_image_unref(source) }
        if small.size != output.size {
            var transform = pixman_transform_t()
            pixman_transform_init_scale(&transform, pixman_fixed_t((Double(small.width) / Double(output.width) * 65536).rounded()),
                                        pixman_fixed_t((Double(small.height) / Double(output.height) * 65536).rounded()))
            guard pixman_image_set_transform(source, &transform) != 0 else {
                throw .pixmanFailed(call: "pixman_image_set_transform")
            }
            pixman_image_set_filter(source, PIXMAN_FILTER_BILINEAR, nil, 0)
        }
        pixman_image_set_repeat(source, PIXMAN_REPEAT_PAD)
        let keep = UInt16((min(max(1 - dim, 0), 1) * 65535).rounded())
        var shade = pixman_color_t(red: 0, green: 0, blue: 0, alpha: keep)
        guard let mask = pixman_image_create_solid_fill(&shade) else {
            throw .pixmanFailed(call: "pixman_image_create_solid_fill")
        }
        defer { pixman_image_unref(mask) }
        for r in rects where !r.isEmpty {
            pixman_image_composite32(PIXMAN_OP_SRC, source, mask, destination, Int32(r.x), Int32(r.y), 0, 0,
                                     Int32(r.x), Int32(r.y), Int32(r.width), Int32(r.height))
        }
        withExtendedLifetime(small) {}
        withExtendedLifetime(output) {}
    }
}
