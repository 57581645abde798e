import CarouselCore
import CPixman

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why scaling failed: only resources, since every input is valid by construction.
public enum ScalingError: Error, Sendable, Equatable, CustomStringConvertible {
    case outOfMemory(bytes: Int)
    /// A pixman call returned NULL; names the call.
    case pixmanFailed(call: String)

    public var description: String {
        switch self {
        case let .outOfMemory(bytes): return "out of memory scaling an image (needed \(formatBytes(bytes)))"
        case let .pixmanFailed(call): return "\(call) failed (out of memory?)"
        }
    }
}

/// Scales a `DecodedImage` into a box with pixman: letterboxing, cropping,
/// filtering and alpha compositing over the background in one composite.
/// Pure functions of their inputs: no caches, no global state.
public enum ImageScaler {
    /// Where an image of `image` size lands in `box` for `fit`: the full
    /// scaled image, which extends past the box for `.cover` and for a large
    /// image with `.none`. Centred; odd leftovers put the extra pixel right/below.
    ///
    /// `faces` (fractions of the upright picture, `FaceRegion`): a `.cover`
    /// crop moves from the centre as little as keeps every face inside,
    /// each with a margin for hair and chin when there is room; when they do
    /// not all fit, the largest group that does (`FaceFraming`). Without
    /// faces, or for other fits, nothing changes.
    public static func placement(of image: PixelSize, in box: PixelSize, fit: FitMode, faces: [FaceRegion]) -> PixelRect {
        var rect = placement(of: image, in: box, fit: fit)
        guard fit == .cover, !faces.isEmpty, !rect.isEmpty else { return rect }
        if rect.width > box.width {
            rect.x = -FaceFraming.cropStart(faces.map { ($0.x, $0.maxX) }, scaled: rect.width, window: box.width)
        } else if rect.height > box.height {
            rect.y = -FaceFraming.cropStart(faces.map { ($0.y, $0.maxY) }, scaled: rect.height, window: box.height)
        }
        return rect
    }

    public static func placement(of image: PixelSize, in box: PixelSize, fit: FitMode) -> PixelRect {
        guard image.width > 0, image.height > 0, box.width > 0, box.height > 0 else {
            return PixelRect(x: 0, y: 0, width: 0, height: 0)
        }
        /// round(a * b / c) in 64 bits, at least 1.
        func scaled(_ a: Int, _ b: Int, _ c: Int) -> Int {
            max(1, Int((Int64(a) * Int64(b) + Int64(c) / 2) / Int64(c)))
        }
        var size: PixelSize
        switch fit {
        case .stretch:
            size = box
        case .none:
            size = image
        case .contain, .cover, .blur:
            // Compare aspect ratios exactly: image w/h against box w/h.
            let imageIsWider = Int64(image.width) * Int64(box.height) > Int64(box.width) * Int64(image.height)
            // contain (and blur's sharp picture) fits the wider-relative side to the box; cover the other.
            if imageIsWider == (fit != .cover) {
                size = PixelSize(width: box.width, height: scaled(image.height, box.width, image.width))
            } else {
                size = PixelSize(width: scaled(image.width, box.height, image.height), height: box.height)
            }
        }
        // Arithmetic shift: floor division, so negative (cropping) offsets centre too.
        return PixelRect(x: (box.width - size.width) >> 1, y: (box.height - size.height) >> 1,
                         width: size.width, height: size.height)
    }

    /// An opaque (`.xrgb8888`) image of `box` size with `image` drawn per `fit`:
    /// a new one, or `image` itself when it is already exactly that (then
    /// `.rgb888` if it was decoded so).
    public static func scale(
        _ image: DecodedImage, to box: PixelSize, fit: FitMode, background: PixelColor, blur: BlurStyle = BlurStyle(),
        faces: [FaceRegion] = []
    ) throws(ScalingError) -> DecodedImage {
        if fit == .blur { return try blurFilled(image, to: box, style: blur, background: background) }
        // Already what the box needs (a picture the size of the screen, as
        // decoded): the same pixels, not a second copy made through pixman.
        if image.size == box, !image.hasAlpha, image.format == .xrgb8888 || image.format == .rgb888,
           placement(of: image.size, in: box, fit: fit) == PixelRect(x: 0, y: 0, width: box.width, height: box.height) {
            return image
        }
        let output: DecodedImage
        do {
            output = try DecodedImage(width: box.width, height: box.height, format: .xrgb8888,
                                      hasAlpha: false, path: "<scaled>")
        } catch {
            throw .outOfMemory(bytes: box.width * box.height * 4)
        }
        try scale(image, into: output.base, size: box, stride: output.stride, fit: fit, background: background, faces: faces)
        return output
    }

    /// Draws `image` per `fit` into caller-owned XRGB8888 memory (`size.height`
    /// rows of `stride` bytes), for example a mapped buffer. Every pixel of the
    /// box is written: letterbox areas get `background` (premultiplied over
    /// black if translucent); translucent image pixels are composited over it.
    ///
    /// Reads of write-combined memory (DRM dumb buffers) are very slow, so
    /// opaque images are copied with pixman's SRC operator and only
    /// translucent ones read the destination back (OVER).
    ///
    /// The corresponding C function is `pixman_image_composite32`.
    public static func scale(
        _ image: DecodedImage, into pixels: UnsafeMutableRawPointer, size box: PixelSize, stride: Int,
        fit: FitMode, background: PixelColor, fillsBars: Bool = true, faces: [FaceRegion] = []
    ) throws(ScalingError) {
        precondition(box.width > 0 && box.height > 0, "empty destination")
        precondition(stride % 4 == 0 && stride >= box.width * 4, "pixman needs a stride of whole pixels")
        precondition(Int(bitPattern: pixels) % 4 == 0, "pixman needs 4-byte aligned pixels")
        precondition(box.width <= ImageDecoder.maxSide && box.height <= ImageDecoder.maxSide)

        let target = placement(of: image.size, in: box, fit: fit, faces: faces)
        let boxRect = PixelRect(x: 0, y: 0, width: box.width, height: box.height)
        let visible = target.intersection(boxRect)

        guard let destination = pixman_image_create_bits_no_clear(
            PIXMAN_x8r8g8b8, Int32(box.width), Int32(box.height),
            pixels.assumingMemoryBound(to: UInt32.self), Int32(stride)
        ) else { throw .pixmanFailed(call: "pixman_image_create_bits_no_clear") }
        defer { pixman_image_unref(destination) }

        // Background: everywhere the image may let it show. An opaque image
        // covers `visible` itself, so only the bars around it are filled.
        let opaque = !image.hasAlpha
        let bars = !fillsBars ? [] : opaque ? boxRect.subtracting(visible) : [boxRect]
        if !bars.isEmpty {
            let premultiplied = background.premultipliedARGB
            func channel(_ shift: UInt32) -> UInt16 { UInt16((premultiplied >> shift) & 0xFF) * 257 }
            var color = pixman_color_t(red: channel(16), green: channel(8), blue: channel(0), alpha: 0xFFFF)
            var rects = bars.map {
                pixman_rectangle16_t(x: Int16($0.x), y: Int16($0.y), width: UInt16($0.width), height: UInt16($0.height))
            }
            guard pixman_image_fill_rectangles(PIXMAN_OP_SRC, destination, &color, Int32(rects.count), &rects) != 0 else {
                throw .pixmanFailed(call: "pixman_image_fill_rectangles")
            }
        }
        if visible.isEmpty { return }

        // Large reductions: halve with a 2x2 box average until less than 2x
        // is left. pixman's separable convolution costs (taps per axis)^2 per
        // output pixel, so a direct 8x reduction would be ~80 taps a pixel;
        // halving keeps the final filter at 2 or 3 taps per axis, and a chain
        // of box halvings is the classic mipmap area filter.
        var source = image
        while true {
            let halveX = source.width >= 2 * target.width
            let halveY = source.height >= 2 * target.height
            if !halveX && !halveY { break }
            source = try halved(source, x: halveX, y: halveY)
        }

        guard let sourceImage = pixman_image_create_bits_no_clear(
            pixman_format_code_t(source.format.pixmanFormatCode), Int32(source.width), Int32(source.height),
            source.base.assumingMemoryBound(to: UInt32.self), Int32(source.stride)
        ) else { throw .pixmanFailed(call: "pixman_image_create_bits_no_clear") }
        defer { pixman_image_unref(sourceImage) }

        // Scale factors source/destination: pixman's transform maps a
        // destination pixel centre back into the source.
        let scaleX = Double(source.width) / Double(target.width)
        let scaleY = Double(source.height) / Double(target.height)
        if scaleX != 1 || scaleY != 1 {
            var transform = pixman_transform_t()
            pixman_transform_init_scale(&transform, fixed(scaleX), fixed(scaleY))
            guard pixman_image_set_transform(sourceImage, &transform) != 0 else {
                throw .pixmanFailed(call: "pixman_image_set_transform")
            }
            try setFilter(sourceImage, scaleX: scaleX, scaleY: scaleY)
        } else {
            pixman_image_set_filter(sourceImage, PIXMAN_FILTER_NEAREST, nil, 0)
        }
        // PAD repeats the edge pixels for filter taps that fall outside the
        // image; the default (NONE) would blend transparent black into the
        // border and draw a dark frame around every picture.
        pixman_image_set_repeat(sourceImage, PIXMAN_REPEAT_PAD)

        pixman_image_composite32(
            opaque ? PIXMAN_OP_SRC : PIXMAN_OP_OVER, sourceImage, nil, destination,
            Int32(visible.x - target.x), Int32(visible.y - target.y), 0, 0,
            Int32(visible.x), Int32(visible.y), Int32(visible.width), Int32(visible.height)
        )
        withExtendedLifetime(source) {}
        withExtendedLifetime(image) {}
    }

    /// The largest reduction drawn bilinear (source pixels per output
    /// pixel); past it a separable convolution, some 25 times dearer a
    /// frame (issue 47's Ken Burns figures).
    public static let bilinearReductionLimit = 1.35

    /// Bilinear for enlargements and mild reductions (pixman's GOOD is
    /// bilinear); for reductions beyond 1/1.35 a separable convolution whose
    /// box kernel spans the source pixels under each output pixel (the
    /// threshold cairo uses for its GOOD filter). Per axis, since `stretch`
    /// can shrink one axis and enlarge the other.
    ///
    /// The corresponding C function is `pixman_filter_create_separable_convolution`.
    private static func setFilter(_ image: OpaquePointer, scaleX: Double, scaleY: Double) throws(ScalingError) {
        let threshold = bilinearReductionLimit
        if scaleX < threshold && scaleY < threshold {
            pixman_image_set_filter(image, PIXMAN_FILTER_BILINEAR, nil, 0)
            return
        }
        // Each source pixel is a unit square (box reconstruction) and each
        // output pixel averages the `scale`-wide box over it: the weights are
        // the overlapping areas, an exact area average. (An impulse
        // reconstruction would weigh point samples instead and alias.) On an
        // axis that is not shrunk, linear reconstruction sampled at a point is
        // plain linear interpolation.
        func kernels(_ scale: Double) -> (reconstruct: pixman_kernel_t, sample: pixman_kernel_t, scale: Double) {
            scale >= threshold ? (PIXMAN_KERNEL_BOX, PIXMAN_KERNEL_BOX, scale)
                               : (PIXMAN_KERNEL_LINEAR, PIXMAN_KERNEL_IMPULSE, 1)
        }
        let x = kernels(scaleX), y = kernels(scaleY)
        var count: Int32 = 0
        // 4 subsample bits: 16 filter phases per pixel, ample at these sizes.
        guard let parameters = pixman_filter_create_separable_convolution(
            &count, fixed(x.scale), fixed(y.scale), x.reconstruct, y.reconstruct, x.sample, y.sample, 4, 4
        ) else { throw .pixmanFailed(call: "pixman_filter_create_separable_convolution") }
        defer { free(parameters) }
        // pixman copies the parameters.
        guard pixman_image_set_filter(image, PIXMAN_FILTER_SEPARABLE_CONVOLUTION, parameters, count) != 0 else {
            throw .pixmanFailed(call: "pixman_image_set_filter")
        }
    }

    /// The filter for a zoom's draw: the same choice as for scaling.
    static func zoomFilter(_ image: OpaquePointer, scaleX: Double, scaleY: Double) throws(ScalingError) {
        try setFilter(image, scaleX: abs(scaleX), scaleY: abs(scaleY))
    }

    /// 16.16 fixed point, pixman's coordinate type.
    static func fixed(_ value: Double) -> pixman_fixed_t {
        pixman_fixed_t((value * 65536).rounded())
    }

    /// The image at half width and/or height, each output pixel the rounded
    /// mean of the 2 or 4 pixels under it (an odd last row or column is
    /// averaged with itself). Works on premultiplied or opaque pixels alike.
    static func halved(_ image: DecodedImage, x halveX: Bool, y halveY: Bool) throws(ScalingError) -> DecodedImage {
        let width = halveX ? (image.width + 1) / 2 : image.width
        let height = halveY ? (image.height + 1) / 2 : image.height
        let result: DecodedImage
        do {
            result = try DecodedImage(width: width, height: height, format: image.format,
                                      hasAlpha: image.hasAlpha, path: "<scaled>")
        } catch {
            throw .outOfMemory(bytes: width * height * 4)
        }
        let lastX = image.width - 1, lastY = image.height - 1
        for y in 0..<height {
            let y0 = halveY ? 2 * y : y
            let top = image.row(y0)
            let bottom = image.row(halveY ? min(y0 + 1, lastY) : y0)
            let out = result.row(y)
            for x in 0..<width {
                let x0 = halveX ? 2 * x : x
                let x1 = halveX ? min(x0 + 1, lastX) : x0
                // Two 8-bit channels per 32-bit half word lane: sums of four
                // stay below 2^16, so one add handles two channels at once.
                let a = top[x0], b = top[x1], c = bottom[x0], d = bottom[x1]
                let lowMask: UInt32 = 0x00FF_00FF
                let low = (a & lowMask) + (b & lowMask) + (c & lowMask) + (d & lowMask) + 0x0002_0002
                let high = ((a >> 8) & lowMask) + ((b >> 8) & lowMask) + ((c >> 8) & lowMask)
                    + ((d >> 8) & lowMask) + 0x0002_0002
                out[x] = ((low >> 2) & lowMask) | (((high >> 2) & lowMask) << 8)
            }
        }
        withExtendedLifetime(image) {}
        return result
    }
}

extension PixelRect {
    /// This rectangle minus `hole` (which must lie inside it) as up to four
    /// bands: above, below, left and right of the hole.
    func subtracting(_ hole: PixelRect) -> [PixelRect] {
        if hole.isEmpty { return [self] }
        var parts: [PixelRect] = []
        if hole.y > y { parts.append(PixelRect(x: x, y: y, width: width, height: hole.y - y)) }
        let holeBottom = hole.y + hole.height, bottom = y + height
        if holeBottom < bottom { parts.append(PixelRect(x: x, y: holeBottom, width: width, height: bottom - holeBottom)) }
        if hole.x > x { parts.append(PixelRect(x: x, y: hole.y, width: hole.x - x, height: hole.height)) }
        let holeRight = hole.x + hole.width, right = x + width
        if holeRight < right { parts.append(PixelRect(x: holeRight, y: hole.y, width: right - holeRight, height: hole.height)) }
        return parts
    }
}

extension ImageScaler {
    /// Draws part of `image` scaled into caller-owned XRGB8888 memory, as a
    /// zoom shows it: destination pixel (i, j) of the `width × height`
    /// rectangle at `pixels` (rows `stride` bytes apart) shows the picture
    /// at `((i + 0.5)·scaleX + offsetX, (j + 0.5)·scaleY + offsetY)` (picture
    /// pixel centres at +0.5), bilinear when enlarging, an area average when
    /// reducing; edge pixels repeat past the picture's border. Opaque
    /// pictures only (what the decode cache prepares): the destination is
    /// written with SRC and never read, so it may be scan-out memory.
    ///
    /// The corresponding C function is `pixman_image_composite32`.
    public static func drawTransformed(
        _ image: DecodedImage, into pixels: UnsafeMutableRawPointer, width: Int, height: Int, stride: Int,
        scaleX: Double, scaleY: Double, offsetX: Double, offsetY: Double
    ) throws(ScalingError) {
        guard width > 0, height > 0 else { return }
        precondition(stride % 4 == 0 && stride >= width * 4, "pixman needs a stride of whole pixels")
        precondition(Int(bitPattern: pixels) % 4 == 0, "pixman needs 4-byte aligned pixels")
        guard let destination = pixman_image_create_bits_no_clear(
            PIXMAN_x8r8g8b8, Int32(width), Int32(height), pixels.assumingMemoryBound(to: UInt32.self), Int32(stride)
        ) else { throw .pixmanFailed(call: "pixman_image_create_bits_no_clear") }
        defer { pixman_image_unref(destination) }
        guard let source = pixman_image_create_bits_no_clear(
            pixman_format_code_t(image.format.pixmanFormatCode), Int32(image.width), Int32(image.height),
            image.base.assumingMemoryBound(to: UInt32.self), Int32(image.stride)
        ) else { throw .pixmanFailed(call: "pixman_image_create_bits_no_clear") }
        defer { pixman_image_unref(source) }
        var transform = pixman_transform_t()
        pixman_transform_init_identity(&transform)
        transform.matrix.0.0 = fixed(scaleX)
        transform.matrix.0.2 = fixed(offsetX)
        transform.matrix.1.1 = fixed(scaleY)
        transform.matrix.1.2 = fixed(offsetY)
        guard pixman_image_set_transform(source, &transform) != 0 else {
            throw .pixmanFailed(call: "pixman_image_set_transform")
        }
        try zoomFilter(source, scaleX: scaleX, scaleY: scaleY)
        pixman_image_set_repeat(source, PIXMAN_REPEAT_PAD)
        pixman_image_composite32(PIXMAN_OP_SRC, source, nil, destination, 0, 0, 0, 0, 0, 0, Int32(width), Int32(height))
        withExtendedLifetime(image) {}
    }
}
