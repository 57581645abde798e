import CImageCodecs
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The pixel layout of a `DecodedImage`: 32 bits a pixel, a native-endian
/// 0xAARRGGBB word (B, G, R, A in memory on little-endian machines), or 24
/// bits for a picture kept (`rgb888`).
public enum PixelFormat: Sendable, Hashable {
    /// Opaque; the top byte is 0xFF (pixman ignores it either way).
    case xrgb8888
    /// Colour channels premultiplied by alpha, as pixman composites them.
    case argb8888Premultiplied
    /// Opaque, 3 bytes a pixel: the value 0xRRGGBB in the machine's byte
    /// order (pixman's r8g8b8; B, G, R in memory on little-endian machines).
    /// How the decode cache keeps pictures (`DecodedImage.packed`), as
    /// compactly as fbi keeps its own; the screen writer widens them to
    /// 32 bits as it lays them out (`cic_widen_rgb_row`). Rows start on
    /// 4-byte boundaries (pixman's rule).
    case rgb888

    /// Bytes a pixel: 4, or 3 for `rgb888`.
    public var bytesPerPixel: Int { self == .rgb888 ? 3 : 4 }

    /// Bytes of a row of `width` pixels, rounded up to 4 (pixman's rule:
    /// only `rgb888` rows are ever rounded); nil when that overflows.
    public func rowBytes(width: Int) -> Int? {
        let (bytes, overflow) = width.multipliedReportingOverflow(by: bytesPerPixel)
        guard !overflow, bytes <= Int.max - 3 else { return nil }
        return (bytes + 3) & ~3
    }

    /// The `pixman_format_code_t` for this layout (`PIXMAN_x8r8g8b8`, `PIXMAN_a8r8g8b8` or `PIXMAN_r8g8b8`).
    public var pixmanFormatCode: UInt32 {
        // PIXMAN_FORMAT(32, PIXMAN_TYPE_ARGB, a, 8, 8, 8)
        switch self {
        case .xrgb8888: return 0x2002_0888
        case .argb8888Premultiplied: return 0x2002_8888
        // PIXMAN_FORMAT(24, PIXMAN_TYPE_ARGB, 0, 8, 8, 8)
        case .rgb888: return 0x1802_0888
        }
    }

    /// The DRM fourcc for this layout (`DRM_FORMAT_XRGB8888` "XR24", `DRM_FORMAT_ARGB8888` "AR24",
    /// `DRM_FORMAT_RGB888` "RG24").
    public var drmFourCC: UInt32 {
        func fourcc(_ s: StaticString) -> UInt32 {
            let p = s.utf8Start
            return UInt32(p[0]) | UInt32(p[1]) << 8 | UInt32(p[2]) << 16 | UInt32(p[3]) << 24
        }
        switch self {
        case .xrgb8888: return fourcc("XR24")
        case .argb8888Premultiplied: return fourcc("AR24")
        case .rgb888: return fourcc("RG24")
        }
    }
}

/// Decoded pixels and the memory that holds them, released exactly once in `deinit`.
///
/// The pixels are written only while the image is being built inside this
/// module; afterwards they are read-only, which is why an image may be handed
/// from the decoder thread to the render loop (`Sendable`).
public final class DecodedImage: @unchecked Sendable {
    public let width: Int
    public let height: Int
    /// Bytes from one row to the next; a multiple of 4, at least `width`
    /// times the format's bytes a pixel.
    public let stride: Int
    public let format: PixelFormat
    /// Whether any pixel may be less than opaque (PNG alpha or tRNS, WebP alpha).
    public let hasAlpha: Bool

    let base: UnsafeMutableRawPointer
    /// Whether `deinit` releases `base`: false once `reissued()` or `packed()` handed the pixels on.
    private var ownsPixels = true
    /// The bytes mapped at `base` (`byteCount`, or more for a picture
    /// packed in place whose tail pages could not be returned).
    private let mappedBytes: Int
    /// Unique among the images of this process, never reused: a renderer
    /// remembers which picture it wrote where without keeping it alive.
    public let identity: UInt64
    private static let identities = Atomic<UInt64>(0)
    public var byteCount: Int { stride * height }
    public var size: PixelSize { PixelSize(width: width, height: height) }

    /// Test hook: called with the byte count of every pixel buffer about to be
    /// allocated. Scoped to a task (no global state); production code never sets it.
    @TaskLocal static var allocationObserver: (@Sendable (Int) -> Void)?

    /// Allocates uninitialised pixels. Throws `outOfMemory` rather than
    /// trapping: a board with 512 MB may well fail a 64 MP allocation.
    init(width: Int, height: Int, format: PixelFormat, hasAlpha: Bool, path: String) throws(ImageError) {
        precondition(width > 0 && height > 0, "DecodedImage needs a positive size")
        guard let rowBytes = format.rowBytes(width: width) else { throw ImageError(path: path, reason: .outOfMemory(bytes: Int.max)) }
        let (total, overflow) = rowBytes.multipliedReportingOverflow(by: height)
        if overflow { throw ImageError(path: path, reason: .outOfMemory(bytes: Int.max)) }
        Self.allocationObserver?(total)
        // Page-aligned (more than pixman's SIMD paths need), and returned to
        // the kernel on release: see PixelMemory.
        guard let memory = PixelMemory.allocate(total) else {
            throw ImageError(path: path, reason: .outOfMemory(bytes: total))
        }
        memory.bindMemory(to: UInt32.self, capacity: total / 4)
        self.base = memory
        mappedBytes = total
        identity = Self.identities.wrappingAdd(1, ordering: .relaxed).newValue
        self.width = width
        self.height = height
        self.stride = rowBytes
        self.format = format
        self.hasAlpha = hasAlpha
    }

    /// Builds an image from pixels the caller writes: `fill` gets the buffer
    /// (`height` rows of `stride` bytes) and the stride. For tests and for
    /// other rooms that draw their own pictures (the page indicator, say).
    public convenience init(
        width: Int, height: Int, format: PixelFormat,
        fill: (UnsafeMutableRawBufferPointer, _ stride: Int) -> Void
    ) throws(ImageError) {
        try self.init(width: width, height: height, format: format,
                      hasAlpha: format == .argb8888Premultiplied, path: "<memory>")
        fill(UnsafeMutableRawBufferPointer(start: base, count: byteCount), stride)
    }

    /// Takes over `other`'s pixels under a new identity (`reissued`).
    private init(adopting other: DecodedImage) {
        base = other.base
        mappedBytes = other.mappedBytes
        identity = Self.identities.wrappingAdd(1, ordering: .relaxed).newValue
        width = other.width
        height = other.height
        stride = other.stride
        format = other.format
        hasAlpha = other.hasAlpha
        other.ownsPixels = false
    }

    /// Takes over `other`'s pixels, packed in place to `rgb888` rows of `stride` bytes (`packed`).
    private init(packing other: DecodedImage, stride: Int, mappedBytes: Int) {
        base = other.base
        self.mappedBytes = mappedBytes
        identity = other.identity
        width = other.width
        height = other.height
        self.stride = stride
        format = .rgb888
        hasAlpha = false
        other.ownsPixels = false
    }

    deinit {
        if ownsPixels { PixelMemory.release(base, mappedBytes) }
    }

    /// A copy of this packed (`rgb888`) picture at 4 bytes a pixel
    /// (`xrgb8888`): for drawing it where 3-byte pixels cost more than the
    /// copy, frame after frame (pixman's scaling, a crossfade's blend).
    public func widened() throws(ImageError) -> DecodedImage {
        precondition(format == .rgb888, "widened() makes a 4-byte copy of a packed picture")
        let wide = try DecodedImage(width: width, height: height, format: .xrgb8888, hasAlpha: false, path: "<widened>")
        for y in 0..<height {
            cic_widen_rgb_row((base + y * stride).assumingMemoryBound(to: UInt8.self), wide.row(y), width)
        }
        withExtendedLifetime(self) {}
        return wide
    }

    /// This opaque picture at 3 bytes a pixel (`PixelFormat.rgb888`), packed
    /// in place: no second buffer, and the pages the packing frees are
    /// returned to the kernel. Only for a picture nothing else holds (the
    /// decode cache's own, once prepared): this one must not be used
    /// afterwards. A picture that may be less than opaque, or is packed
    /// already, is returned as it is.
    public func packed() -> DecodedImage {
        guard format == .xrgb8888, !hasAlpha else { return self }
        // Never nil: the picture's 4-byte rows of this width exist.
        let rowBytes = PixelFormat.rgb888.rowBytes(width: width) ?? stride
        for y in 0..<height {
            cic_pack_xrgb_row(row(y), (base + y * rowBytes).assumingMemoryBound(to: UInt8.self), width)
        }
        let kept = PixelMemory.shrink(base, from: mappedBytes, to: rowBytes * height)
        return DecodedImage(packing: self, stride: rowBytes, mappedBytes: kept)
    }

    /// The same memory as a new picture (a new `identity`), to be written
    /// again: a video frame's buffer used for the next frame without
    /// mapping new pages. Only for a picture nothing else holds: the
    /// caller checks `isKnownUniquelyReferenced` and lets this one go.
    public func reissued() -> DecodedImage {
        DecodedImage(adopting: self)
    }

    /// Writes the pixels (`height` rows of `stride` bytes) of a picture
    /// being built that nothing else holds yet (a video frame before it is
    /// handed to the screen): afterwards it is read-only like every other.
    public func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        defer { withExtendedLifetime(self) {} }
        return try body(UnsafeMutableRawBufferPointer(start: base, count: byteCount))
    }

    /// Copies from `template` (the same size and format) every pixel
    /// outside `rect`: what a video frame drawn into `rect` leaves of the
    /// picture around it (the blurred fill, the background).
    public func copyOutside(_ rect: PixelRect, from template: DecodedImage) {
        precondition(template.width == width && template.height == height && template.format == format,
                     "copyOutside needs pictures of one size and format")
        let inside = rect.intersection(PixelRect(x: 0, y: 0, width: width, height: height))
        let rowBytes = width * 4
        for y in 0..<height {
            let to = base + y * stride, from = template.base + y * template.stride
            if inside.width == 0 || inside.height == 0 || y < inside.y || y >= inside.y + inside.height {
                to.copyMemory(from: from, byteCount: rowBytes)
            } else {
                to.copyMemory(from: from, byteCount: inside.x * 4)
                let right = (inside.x + inside.width) * 4
                (to + right).copyMemory(from: from + right, byteCount: rowBytes - right)
            }
        }
        withExtendedLifetime(template) {}
    }

    /// Reads the pixels; the buffer is `height` rows of `stride` bytes.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        defer { withExtendedLifetime(self) {} }
        return try body(UnsafeRawBufferPointer(start: base, count: byteCount))
    }

    /// The pixel at (x, y) as 0xAARRGGBB (premultiplied if the format is;
    /// opaque for `rgb888`).
    public func pixel(x: Int, y: Int) -> UInt32 {
        precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel (\(x), \(y)) outside \(width)x\(height)")
        defer { withExtendedLifetime(self) {} }
        guard format == .rgb888 else { return base.load(fromByteOffset: y * stride + x * 4, as: UInt32.self) }
        var value: UInt32 = 0
        cic_widen_rgb_row((base + y * stride + x * 3).assumingMemoryBound(to: UInt8.self), &value, 1)
        return value
    }

    /// Row `y` as native 0xAARRGGBB words, for code in this module that
    /// writes pixels (of a 32-bit picture: never of an `rgb888` one).
    func row(_ y: Int) -> UnsafeMutablePointer<UInt32> {
        (base + y * stride).assumingMemoryBound(to: UInt32.self)
    }
}

extension DecodedImage {
    /// A pixel as this module stores it: 0xAARRGGBB with the colour
    /// premultiplied by alpha, c' = round(c * a / 255), the exact
    /// add-and-shift division the PNG shim uses too.
    @inline(__always)
    static func premultipliedPixel(red: UInt32, green: UInt32, blue: UInt32, alpha: UInt32) -> UInt32 {
        @inline(__always) func times(_ c: UInt32) -> UInt32 {
            let t = c * alpha + 128
            return (t + (t >> 8)) >> 8
        }
        if alpha == 255 { return 0xFF00_0000 | red << 16 | green << 8 | blue }
        return alpha << 24 | times(red) << 16 | times(green) << 8 | times(blue)
    }
}
