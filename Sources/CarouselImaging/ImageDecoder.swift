import CarouselCore

/// Decodes JPEG, PNG and WebP files into upright pixels that pixman can use.
///
/// Pure functions of their inputs, safe to call from any thread: each call
/// has its own codec state. Decoding is meant to run off the render loop.
public enum ImageDecoder {
    /// The `[images] max_pixels` default: 64 MP, a large camera photo.
    public static let defaultMaxPixels = 64_000_000

    /// The longest side a decoded image may have. pixman positions samples
    /// in 16.16 fixed point, so coordinates past 32767 wrap around.
    public static let maxSide = 32767

    /// Files above this size are refused before they are read into memory.
    /// 1 GiB is far beyond any 64 MP photo, even a 16-bit PNG.
    public static let maxFileBytes = 1 << 30

    /// Decodes the image at `path`, turned upright per its EXIF orientation.
    ///
    /// - Parameters:
    ///   - targetSize: the upright size the image will be drawn into, or nil
    ///     for full resolution. JPEG (DCT scaling, n/8) and WebP (libwebp's
    ///     rescaler) then decode to the smallest size that still covers what
    ///     `fit` draws in that box, never smaller. PNG decodes at full size.
    ///   - fit: how the image will fill `targetSize`; `.cover` and `.stretch`
    ///     need both sides covered, `.contain` only the letterboxed size,
    ///     `.none` full resolution.
    ///   - maxPixels: images whose header says more pixels than this are
    ///     refused before any pixel memory is allocated (decompression bombs).
    /// - Throws: `ImageError` naming the file and a reason a person can act on.
    public static func decode(
        path: String, targetSize: PixelSize? = nil, fit: FitMode = .cover,
        maxPixels: Int = defaultMaxPixels
    ) throws(ImageError) -> DecodedImage {
        let contents = try FileContents(readingFile: path, maxBytes: maxFileBytes)
        return try decode(contents, path: path, targetSize: targetSize, fit: fit, maxPixels: maxPixels)
    }

    /// Decodes an image held in memory; `name` stands for the path in errors.
    public static func decode(
        bytes: some Collection<UInt8>, name: String, targetSize: PixelSize? = nil,
        fit: FitMode = .cover, maxPixels: Int = defaultMaxPixels
    ) throws(ImageError) -> DecodedImage {
        if bytes.isEmpty { throw ImageError(path: name, reason: .emptyFile) }
        if bytes.count > maxFileBytes { throw ImageError(path: name, reason: .fileTooLarge(bytes: bytes.count)) }
        return try decode(FileContents(copying: bytes), path: name, targetSize: targetSize, fit: fit, maxPixels: maxPixels)
    }

    /// The format by magic bytes and the EXIF orientation, without decoding.
    public static func inspect(bytes: some Collection<UInt8>, name: String) throws(ImageError) -> (format: ImageFormat, orientation: ExifOrientation) {
        let contents = FileContents(copying: bytes)
        let format = try sniff(contents, path: name)
        return (format, ExifReader.orientation(in: contents.bytes, format: format) ?? .identity)
    }

    private static func sniff(_ contents: FileContents, path: String) throws(ImageError) -> ImageFormat {
        switch ImageFormat.sniff(contents.bytes) {
        case let .supported(format):
            return format
        case let .truncated(format):
            throw ImageError(path: path, reason: .corrupt(format, detail: "file is truncated (\(contents.count) bytes)"))
        case let .unsupported(detected):
            throw ImageError(path: path, reason: .unsupportedFormat(detected: detected))
        }
    }

    static func decode(
        _ contents: FileContents, path: String, targetSize: PixelSize?, fit: FitMode, maxPixels: Int
    ) throws(ImageError) -> DecodedImage {
        if contents.count == 0 { throw ImageError(path: path, reason: .emptyFile) }
        let format = try sniff(contents, path: path)
        // A missing or malformed EXIF block means "upright", never an error.
        let orientation = ExifReader.orientation(in: contents.bytes, format: format) ?? .identity

        /// Refuses a header size before anything is allocated for it, and
        /// gives the size the decode must cover, in stored (not upright) axes.
        func admit(_ stored: PixelSize) throws(ImageError) -> PixelSize {
            let upright = orientation.uprightSize(of: stored)
            guard stored.width > 0, stored.height > 0 else {
                throw ImageError(path: path, reason: .invalidDimensions(width: upright.width, height: upright.height))
            }
            if Int64(stored.width) * Int64(stored.height) > Int64(maxPixels) {
                throw ImageError(path: path, reason: .tooManyPixels(width: upright.width, height: upright.height, limit: maxPixels))
            }
            let minimum = minimumSize(upright: upright, targetSize: targetSize, fit: fit)
            // Back to the stored axes: a portrait phone photo (orientation 6)
            // is stored landscape, so a 1080x1920 target covers 1920x1080 pixels.
            return orientation.swapsAxes ? minimum.transposed : minimum
        }

        /// Allocates the output, after checking what pixman can address.
        func allocate(_ size: PixelSize, format pixelFormat: PixelFormat, hasAlpha: Bool) throws(ImageError) -> DecodedImage {
            if size.width > maxSide || size.height > maxSide {
                let upright = orientation.uprightSize(of: size)
                throw ImageError(path: path, reason: .sideTooLong(width: upright.width, height: upright.height))
            }
            return try DecodedImage(width: size.width, height: size.height, format: pixelFormat, hasAlpha: hasAlpha, path: path)
        }

        let image: DecodedImage
        switch format {
        case .jpeg:
            let jpeg = try JPEGDecompressor(contents, path: path)
            let stored = try jpeg.readHeader()
            let minimum = try admit(stored)
            let output = try jpeg.setScale(eighths: JPEGDecompressor.scaleEighths(for: stored, covering: minimum))
            image = try allocate(output, format: .xrgb8888, hasAlpha: false)
            try jpeg.decode(into: image)
        case .png:
            let png = try PNGReader(contents, path: path)
            let (stored, hasAlpha) = try png.readHeader()
            _ = try admit(stored)
            image = try allocate(stored, format: hasAlpha ? .argb8888Premultiplied : .xrgb8888, hasAlpha: hasAlpha)
            try png.decode(into: image)
        case .webp:
            let header = try WebPCodec.readHeader(contents, path: path)
            let minimum = try admit(header.size)
            let output = WebPCodec.scaledSize(for: header.size, covering: minimum)
            image = try allocate(output, format: header.hasAlpha ? .argb8888Premultiplied : .xrgb8888,
                                 hasAlpha: header.hasAlpha)
            try WebPCodec.decode(contents, header: header, into: image, path: path)
        }
        return try image.oriented(orientation, path: path)
    }

    /// The upright size a decode must reach so that drawing it with `fit`
    /// into `targetSize` never upscales what a full decode would not.
    static func minimumSize(upright: PixelSize, targetSize: PixelSize?, fit: FitMode) -> PixelSize {
        guard let targetSize, fit != .none else { return upright }
        let box = PixelSize(width: min(max(targetSize.width, 1), maxSide),
                            height: min(max(targetSize.height, 1), maxSide))
        switch fit {
        case .cover, .stretch:
            return box
        case .contain:
            return ImageScaler.placement(of: upright, in: box, fit: .contain).size
        case .none:
            return upright
        }
    }
}
