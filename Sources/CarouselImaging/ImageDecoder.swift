import CarouselCore

/// Decodes JPEG, PNG, WebP, GIF, HEIF and AVIF files into upright pixels
/// that pixman can use. Animated WebP and GIF show their first frame.
///
/// Pure functions of their inputs, safe to call from any thread: each call
/// has its own codec state. Decoding is meant to run off the render loop.
public enum ImageDecoder {
    /// The `[images] max_pixels` default: 64 MP, a large camera photo.
    public static let defaultMaxPixels = 64_000_000
    /// The most `[images] max_pixels` takes (the schema's range ends here).
    public static let maxPixelsCeiling = 1_000_000_000

    /// The longest side a decoded image may have. pixman positions samples
    /// in 16.16 fixed point, so coordinates past 32767 wrap around.
    public static let maxSide = 32767

    /// Files above this size are refused before they are read into memory.
    /// 1 GiB is far beyond any 64 MP photo, even a 16-bit PNG.
    public static let maxFileBytes = 1 << 30

    /// Where HEIF and AVIF pictures are decoded: nil in this process, else
    /// by a helper process (see `DecodingProcess`). The daemon's commands set
    /// it once at start, before any decode; tests and tools leave it nil.
    nonisolated(unsafe) public static var heifProcess: DecodingProcess?

    /// Decodes the image at `path`, turned upright per its EXIF orientation.
    ///
    /// - Parameters:
    ///   - targetSize: the upright size the image will be drawn into, or nil
    ///     for full resolution. JPEG (DCT scaling, n/8) and WebP (libwebp's
    ///     rescaler) then decode to the smallest size that still covers what
    ///     `fit` draws in that box, never smaller; PNG (rows area-averaged as
    ///     libpng delivers them) to exactly the size `fit` draws it at. No
    ///     decode of these holds a full-size picture: a 62 MP PNG for a
    ///     1280x800 screen needs a few MB, not 250. GIF and HEIF/AVIF are
    ///     decoded at their full size (giflib and libheif 1.15 cannot scale
    ///     while decoding), like an animated WebP whose first frame does not
    ///     cover its canvas; the scaler reduces them afterwards.
    ///   - fit: how the image will fill `targetSize`; `.cover` and `.stretch`
    ///     need both sides covered, `.contain` only the letterboxed size,
    ///     `.none` full resolution.
    ///   - maxPixels: images whose header says more pixels than this are
    ///     refused before any pixel memory is allocated (decompression bombs).
    ///   - decodeBudget: bytes the decode may hold at its peak (`[images]
    ///     decode_mb`): the file's bytes, what the codec keeps and the decoded
    ///     pixels, counted from the header before anything is allocated for
    ///     them (`DecodeCost`). A picture that needs more is refused with a
    ///     reason that says what takes the memory and how to make it fit.
    /// - Throws: `ImageError` naming the file and a reason a person can act on.
    ///
    /// `packedAt`: a picture that comes out exactly this size, upright and
    /// opaque, is decoded at 3 bytes a pixel (`PixelFormat.rgb888`), as the
    /// decode cache keeps it, with no 32-bit copy on the way: for a caller
    /// that uses a picture of that size as it is. Only a JPEG does so now.
    public static func decode(
        path: String, targetSize: PixelSize? = nil, fit: FitMode = .cover,
        maxPixels: Int = defaultMaxPixels, decodeBudget: Int = .max, packedAt: PixelSize? = nil
    ) throws(ImageError) -> DecodedImage {
        try refuseUnread(path: path, maxPixels: maxPixels, decodeBudget: decodeBudget)
        let contents = try FileContents(readingFile: path, maxBytes: maxFileBytes)
        return try decode(contents, path: path, targetSize: targetSize, fit: fit, maxPixels: maxPixels,
                          decodeBudget: decodeBudget, packedAt: packedAt)
    }

    /// Refuses, before the file is read into memory, what its size or its
    /// header already refuse: more pixels than `max_pixels` (the header,
    /// read in a few small reads: `ImageShape`), or a file larger by itself
    /// than the decode budget. A 218 MB PNG over max_pixels took 218 MB of
    /// a 512 MB board just to be refused. Anything it cannot tell (no such
    /// file, a header it cannot read) is left to the decode, which says why.
    static func refuseUnread(path: String, maxPixels: Int, decodeBudget: Int) throws(ImageError) {
        let upright = ImageShape.uprightSize(path: path)
        if let upright, Int64(upright.width) * Int64(upright.height) > Int64(maxPixels) {
            throw ImageError(path: path, reason: .tooManyPixels(width: upright.width, height: upright.height, limit: maxPixels))
        }
        guard decodeBudget < .max, let size = FileContents.regularFileSize(path), size > decodeBudget else { return }
        let cost = DecodeCost(format: nil, stored: upright ?? PixelSize(width: 0, height: 0), file: size, codec: 0, pixels: 0)
        throw ImageError(path: path, reason: cost.refusal(budget: decodeBudget))
    }

    /// Decodes an image held in memory; `name` stands for the path in errors.
    public static func decode(
        bytes: some Collection<UInt8>, name: String, targetSize: PixelSize? = nil,
        fit: FitMode = .cover, maxPixels: Int = defaultMaxPixels, decodeBudget: Int = .max
    ) throws(ImageError) -> DecodedImage {
        if bytes.isEmpty { throw ImageError(path: name, reason: .emptyFile) }
        if bytes.count > maxFileBytes { throw ImageError(path: name, reason: .fileTooLarge(bytes: bytes.count)) }
        return try decode(FileContents(copying: bytes), path: name, targetSize: targetSize, fit: fit, maxPixels: maxPixels,
                          decodeBudget: decodeBudget)
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
        _ contents: FileContents, path: String, targetSize: PixelSize?, fit: FitMode, maxPixels: Int,
        decodeBudget: Int = .max, process: DecodingProcess? = heifProcess, packedAt: PixelSize? = nil
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

        /// Refuses a decode whose `cost` passes the budget (`DecodeCost`).
        func afford(_ cost: DecodeCost) throws(ImageError) {
            guard cost.total > decodeBudget else { return }
            throw ImageError(path: path, reason: cost.refusal(budget: decodeBudget))
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
            let packed = output == packedAt && orientation == .identity && !jpeg.isCMYK
            try afford(DecodeCost(format: .jpeg, stored: stored, file: contents.count, codec: jpeg.coefficientBytes,
                                  pixels: output.width * output.height * (packed ? 3 : 4)))
            image = try allocate(output, format: packed ? .rgb888 : .xrgb8888, hasAlpha: false)
            try jpeg.decode(into: image)
        case .png:
            let png = try PNGReader(contents, path: path)
            let (stored, hasAlpha) = try png.readHeader()
            let minimum = try admit(stored)
            // The reduction addresses source columns and rows up to maxSide,
            // as the full-size decode it replaces did.
            if stored.width > maxSide || stored.height > maxSide {
                let upright = orientation.uprightSize(of: stored)
                throw ImageError(path: path, reason: .sideTooLong(width: upright.width, height: upright.height))
            }
            // Straight to the size `fit` draws the picture at (the scaler then
            // only crops or letterboxes): one exact area average, and the
            // placement is the full picture's, not a rounded reduction's.
            // Each axis only shrinks; enlarging is the scaler's job.
            let drawn = drawnSize(upright: orientation.uprightSize(of: stored), targetSize: targetSize, fit: fit)
            let drawnStored = orientation.swapsAxes ? drawn.transposed : drawn
            let output = PixelSize(width: min(stored.width, max(drawnStored.width, minimum.width)),
                                   height: min(stored.height, max(drawnStored.height, minimum.height)))
            // libpng's rows and the shim's accumulators: a few rows of the
            // stored width at up to 16 bits a channel.
            try afford(DecodeCost(format: .png, stored: stored, file: contents.count, codec: stored.width * 8 * 4,
                                  pixels: output.width * output.height * 4))
            image = try allocate(output, format: hasAlpha ? .argb8888Premultiplied : .xrgb8888, hasAlpha: hasAlpha)
            // The shim's rows and accumulators count as the decode's pixel memory too.
            let scratch = try png.decode(into: image)
            if scratch > 0 { DecodedImage.allocationObserver?(scratch) }
        case .webp:
            let header = try WebPCodec.readHeader(contents, path: path)
            let minimum = try admit(header.size)
            let output = header.frame == nil ? WebPCodec.scaledSize(for: header.size, covering: minimum) : header.size
            try afford(DecodeCost(format: .webp, stored: header.size, file: contents.count,
                                  codec: header.lossless ? header.size.width * header.size.height * 4 : 0,
                                  pixels: output.width * output.height * 4, lossless: header.lossless))
            image = try allocate(output, format: header.hasAlpha ? .argb8888Premultiplied : .xrgb8888,
                                 hasAlpha: header.hasAlpha)
            try WebPCodec.decode(contents, header: header, into: image, path: path)
        case .gif:
            let gif = try GIFReader(contents, path: path)
            let frame = try gif.readFirstFrame()
            _ = try admit(frame.canvas)
            try afford(DecodeCost(format: .gif, stored: frame.canvas, file: contents.count, codec: 0,
                                  pixels: frame.canvas.width * frame.canvas.height * 4))
            image = try allocate(frame.canvas, format: frame.hasAlpha ? .argb8888Premultiplied : .xrgb8888,
                                 hasAlpha: frame.hasAlpha)
            try gif.decode(frame, into: image)
        case .heif, .avif:
            if let process {
                // Decoded whole and upright there, as below (libheif turns it).
                return try process.decode(contents, format: format, path: path, maxPixels: maxPixels,
                                          decodeBudget: decodeBudget)
            }
            let heif = try HEIFReader(contents, format: format, path: path)
            let header = heif.readHeader()
            _ = try admit(header.size)
            // libheif allocates the coded size before it crops and turns.
            _ = try admit(header.codedSize)
            try afford(DecodeCost.heif(format: format, coded: header.codedSize, hasAlpha: header.hasAlpha,
                                       deep: header.lumaBits > 8, file: contents.count))
            let pixelFormat: PixelFormat = header.hasAlpha ? .argb8888Premultiplied : .xrgb8888
            image = try heif.decode(header) { (size: PixelSize) throws(ImageError) -> DecodedImage in
                _ = try admit(size)
                return try allocate(size, format: pixelFormat, hasAlpha: header.hasAlpha)
            }
        }
        return try image.oriented(orientation, path: path)
    }

    /// The smallest size with the stored aspect ratio that is at least
    /// `minimum` on both axes, never larger than `size`: what PNG and WebP
    /// decode to (reducing further is the scaler's job, with the exact box).
    static func reducedSize(of size: PixelSize, covering minimum: PixelSize) -> PixelSize {
        let mw = max(1, minimum.width), mh = max(1, minimum.height)
        guard mw < size.width && mh < size.height else { return size }
        // Width binds when mw / w >= mh / h; the other side is rounded up.
        if mw * size.height >= mh * size.width {
            return PixelSize(width: mw, height: min(size.height, (size.height * mw + size.width - 1) / size.width))
        }
        return PixelSize(width: min(size.width, (size.width * mh + size.height - 1) / size.height), height: mh)
    }

    /// The target clamped to what pixman can address.
    private static func clampedBox(_ targetSize: PixelSize) -> PixelSize {
        PixelSize(width: min(max(targetSize.width, 1), maxSide), height: min(max(targetSize.height, 1), maxSide))
    }

    /// The upright size `ImageScaler` draws a picture of `upright` size at
    /// for `fit` in `targetSize` (before cropping to the box).
    static func drawnSize(upright: PixelSize, targetSize: PixelSize?, fit: FitMode) -> PixelSize {
        guard let targetSize, fit != .none else { return upright }
        return ImageScaler.placement(of: upright, in: clampedBox(targetSize), fit: fit).size
    }

    /// The upright size a decode must reach so that drawing it with `fit`
    /// into `targetSize` never upscales what a full decode would not.
    static func minimumSize(upright: PixelSize, targetSize: PixelSize?, fit: FitMode) -> PixelSize {
        guard let targetSize, fit != .none else { return upright }
        let box = clampedBox(targetSize)
        switch fit {
        case .cover, .stretch:
            return box
        case .contain, .blur:
            // The blurred fill is drawn from the same decode, shrunk first:
            // it needs no more pixels than the sharp picture over it.
            return ImageScaler.placement(of: upright, in: box, fit: .contain).size
        case .none:
            return upright
        }
    }
}
