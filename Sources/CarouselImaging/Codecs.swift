import CImageCodecs
import CWebP

/// Turns the shim's error record into an `ImageError`.
private func imageError(_ err: cic_error, _ format: ImageFormat, path: String, pixelBytes: Int = 0) -> ImageError {
    var detail = withUnsafeBytes(of: err.message) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
    // libjpeg words many messages "Corrupt JPEG data: ..."; ours already says that.
    let redundant = "Corrupt JPEG data: "
    if detail.hasPrefix(redundant) { detail.removeFirst(redundant.count) }
    if detail.isEmpty { detail = "unknown error" }
    switch err.kind {
    case CIC_NO_MEMORY: return ImageError(path: path, reason: .outOfMemory(bytes: pixelBytes))
    case CIC_UNSUPPORTED: return ImageError(path: path, reason: .unsupportedVariant(format, detail: detail))
    default: return ImageError(path: path, reason: .corrupt(format, detail: detail))
    }
}

/// Owner of a libjpeg-turbo decompressor (`cic_jpeg`), destroyed exactly once.
/// Keeps the file's bytes alive, since libjpeg reads them across calls.
final class JPEGDecompressor {
    private let handle: OpaquePointer
    private let contents: FileContents
    private let path: String

    /// The corresponding C function is `cic_jpeg_create` (jpeg_create_decompress).
    init(_ contents: FileContents, path: String) throws(ImageError) {
        let data = contents.base?.assumingMemoryBound(to: UInt8.self)
        guard let handle = cic_jpeg_create(data, contents.count) else {
            throw ImageError(path: path, reason: .outOfMemory(bytes: 0))
        }
        self.handle = handle
        self.contents = contents
        self.path = path
    }

    deinit {
        cic_jpeg_destroy(handle)
    }

    /// The stored size. The corresponding C function is `cic_jpeg_read_header` (jpeg_read_header).
    func readHeader() throws(ImageError) -> PixelSize {
        var err = cic_error()
        var width: UInt32 = 0, height: UInt32 = 0
        var isCMYK: Int32 = 0
        guard cic_jpeg_read_header(handle, &width, &height, &isCMYK, &err) == 0 else {
            throw imageError(err, .jpeg, path: path)
        }
        return PixelSize(width: Int(width), height: Int(height))
    }

    /// Sets DCT scaling to `eighths`/8 and returns the output size.
    /// The corresponding C function is `cic_jpeg_set_scale` (jpeg_calc_output_dimensions).
    func setScale(eighths: Int) throws(ImageError) -> PixelSize {
        var err = cic_error()
        var width: UInt32 = 0, height: UInt32 = 0
        guard cic_jpeg_set_scale(handle, UInt32(eighths), &width, &height, &err) == 0 else {
            throw imageError(err, .jpeg, path: path)
        }
        return PixelSize(width: Int(width), height: Int(height))
    }

    /// Bytes of coefficients libjpeg keeps for the whole picture while it
    /// decodes a progressive (or otherwise multi-scan) file, whatever the
    /// output's scale; 0 for a baseline one (after `readHeader`).
    /// The corresponding C function is `cic_jpeg_coefficient_bytes`.
    var coefficientBytes: Int { Int(cic_jpeg_coefficient_bytes(handle)) }

    /// Whether the file is CMYK, which decodes to 32-bit pixels only
    /// (after `readHeader`). The corresponding C function is `cic_jpeg_is_cmyk`.
    var isCMYK: Bool { cic_jpeg_is_cmyk(handle) != 0 }

    /// Decodes into `image`, which must have the output size: 32-bit
    /// pixels, or 3 bytes a pixel for an `rgb888` one (not for a CMYK file).
    /// The corresponding C function is `cic_jpeg_decode` (jpeg_start_decompress, jpeg_read_scanlines).
    func decode(into image: DecodedImage) throws(ImageError) {
        var err = cic_error()
        let status = cic_jpeg_decode(handle, image.base.assumingMemoryBound(to: UInt8.self), image.stride,
                                     image.format == .rgb888 ? 1 : 0, &err)
        guard status == 0 else { throw imageError(err, .jpeg, path: path, pixelBytes: image.byteCount) }
    }

    /// The smallest DCT scale n/8 whose output, ceil(size * n / 8) on each
    /// axis, is at least `minimum`; 8/8 when even full size is smaller.
    static func scaleEighths(for size: PixelSize, covering minimum: PixelSize) -> Int {
        for n in 1...8 {
            let w = (size.width * n + 7) / 8
            let h = (size.height * n + 7) / 8
            if w >= minimum.width && h >= minimum.height { return n }
        }
        return 8
    }
}

/// Owner of a libpng reader (`cic_png`), destroyed exactly once.
final class PNGReader {
    private let handle: OpaquePointer
    private let contents: FileContents
    private let path: String

    /// The corresponding C function is `cic_png_create` (png_create_read_struct).
    init(_ contents: FileContents, path: String) throws(ImageError) {
        let data = contents.base?.assumingMemoryBound(to: UInt8.self)
        guard let handle = cic_png_create(data, contents.count) else {
            throw ImageError(path: path, reason: .outOfMemory(bytes: 0))
        }
        self.handle = handle
        self.contents = contents
        self.path = path
    }

    deinit {
        cic_png_destroy(handle)
    }

    /// The size and whether pixels may be translucent.
    /// The corresponding C function is `cic_png_read_header` (png_read_info).
    func readHeader() throws(ImageError) -> (size: PixelSize, hasAlpha: Bool) {
        var err = cic_error()
        var width: UInt32 = 0, height: UInt32 = 0
        var hasAlpha: Int32 = 0
        guard cic_png_read_header(handle, &width, &height, &hasAlpha, &err) == 0 else {
            throw imageError(err, .png, path: path)
        }
        // PNG sizes are at most 2^31 - 1, but Int is 32 bits on ARMv7.
        guard let w = Int(exactly: width), let h = Int(exactly: height) else {
            throw ImageError(path: path, reason: .invalidDimensions(width: Int(clamping: width), height: Int(clamping: height)))
        }
        return (PixelSize(width: w, height: h), hasAlpha != 0)
    }

    /// Decodes into `image` (premultiplied): at the stored size straight from
    /// libpng; at a smaller size row by row through a streaming area average,
    /// so no full-size buffer exists. Returns the scratch bytes the shim
    /// allocated besides `image` (rows and accumulators).
    /// The corresponding C function is `cic_png_decode` (png_read_image or png_read_row).
    func decode(into image: DecodedImage) throws(ImageError) -> Int {
        var err = cic_error()
        var scratch = 0
        let status = cic_png_decode(handle, image.base.assumingMemoryBound(to: UInt8.self), image.stride,
                                    UInt32(image.width), UInt32(image.height), &scratch, &err)
        guard status == 0 else { throw imageError(err, .png, path: path, pixelBytes: image.byteCount + scratch) }
        return scratch
    }
}

/// libwebp needs no shim: it reports errors by return value, never by
/// longjmp or exit, so Swift calls it directly.
enum WebPCodec {
    struct Header {
        /// The picture: a still image's size, an animation's canvas.
        var size: PixelSize
        var hasAlpha: Bool
        /// The bytes `WebPDecode` reads: the whole file for a still
        /// picture, the first frame's ALPH and VP8/VP8L chunks for an
        /// animation (libwebp decodes those without their RIFF container).
        var payload: Range<Int>
        /// Where the first frame lies on the canvas when it does not cover
        /// all of it; nil when it does (and for still pictures).
        var frame: PixelRect?
        /// Lossless (VP8L): libwebp keeps every pixel of it at 4 bytes
        /// while it decodes, whatever the output's scale (its LZ77
        /// references may reach any earlier pixel).
        var lossless = false
    }

    /// The corresponding C function is `WebPGetFeatures`.
    static func readHeader(_ contents: FileContents, path: String) throws(ImageError) -> Header {
        var features = WebPBitstreamFeatures()
        let data = contents.base?.assumingMemoryBound(to: UInt8.self)
        let status = WebPGetFeatures(data, contents.count, &features)
        guard status == VP8_STATUS_OK else { throw error(status, path: path) }
        if features.has_animation != 0 { return try firstFrame(contents, path: path) }
        return Header(size: PixelSize(width: Int(features.width), height: Int(features.height)),
                      hasAlpha: features.has_alpha != 0, payload: 0..<contents.count, frame: nil,
                      lossless: features.format == 2)
    }

    /// An animation shows as its first frame, drawn on a transparent canvas
    /// as libwebp's own WebPAnimDecoder draws it (the ANIM chunk's
    /// background colour is only a hint, which browsers ignore too). Only
    /// that frame is decoded: WebPAnimDecoder would keep a canvas-sized
    /// buffer of its own and could not scale.
    /// The corresponding C functions are `WebPDemuxPartial` and `WebPDemuxGetFrame`.
    private static func firstFrame(_ contents: FileContents, path: String) throws(ImageError) -> Header {
        guard let base = contents.base?.assumingMemoryBound(to: UInt8.self) else {
            throw ImageError(path: path, reason: .emptyFile)
        }
        var data = WebPData(bytes: base, size: contents.count)
        // Partial, to tell a cut file (state short of DONE) from a broken one.
        var state = WEBP_DEMUX_PARSING_HEADER
        let demuxer = WebPDemuxPartial(&data, &state)
        defer { WebPDemuxDelete(demuxer) }
        guard let demuxer, state == WEBP_DEMUX_DONE else {
            let detail = state == WEBP_DEMUX_PARSE_ERROR ? "invalid animation (RIFF chunks)" : "file is truncated"
            throw ImageError(path: path, reason: .corrupt(.webp, detail: detail))
        }
        let canvas = PixelSize(width: Int(WebPDemuxGetI(demuxer, WEBP_FF_CANVAS_WIDTH)),
                               height: Int(WebPDemuxGetI(demuxer, WEBP_FF_CANVAS_HEIGHT)))
        var iterator = WebPIterator()
        guard WebPDemuxGetFrame(demuxer, 1, &iterator) != 0 else {
            throw ImageError(path: path, reason: .corrupt(.webp, detail: "animation without frames"))
        }
        defer { WebPDemuxReleaseIterator(&iterator) }
        let rect = PixelRect(x: Int(iterator.x_offset), y: Int(iterator.y_offset),
                             width: Int(iterator.width), height: Int(iterator.height))
        // The demuxer has checked that every frame lies on the canvas; a
        // frame that does not is refused rather than written outside the image.
        guard rect.width > 0, rect.height > 0, rect.x >= 0, rect.y >= 0,
              rect.x + rect.width <= canvas.width, rect.y + rect.height <= canvas.height,
              let fragment = iterator.fragment.bytes else {
            throw ImageError(path: path, reason: .corrupt(.webp, detail: "first frame outside the canvas"))
        }
        let start = fragment - UnsafePointer(base)
        let covers = rect.size == canvas
        // The frame's own bitstream says whether it is lossless (2).
        var features = WebPBitstreamFeatures()
        let lossless = WebPGetFeatures(fragment, iterator.fragment.size, &features) == VP8_STATUS_OK && features.format == 2
        return Header(size: canvas, hasAlpha: iterator.has_alpha != 0 || !covers,
                      payload: start..<start + iterator.fragment.size, frame: covers ? nil : rect, lossless: lossless)
    }

    /// Decodes, scaled by libwebp to `outputSize` when that differs from the
    /// stored size, into premultiplied pixels. An animation's first frame
    /// that leaves part of the canvas uncovered is decoded at full size
    /// into its place on a transparent canvas.
    /// The corresponding C functions are `WebPInitDecoderConfig` and `WebPDecode`.
    static func decode(_ contents: FileContents, header: Header, into image: DecodedImage,
                       path: String) throws(ImageError) {
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else {
            throw ImageError(path: path, reason: .unsupportedVariant(.webp, detail: "libwebp version mismatch"))
        }
        var offset = 0
        if let frame = header.frame {
            precondition(image.size == header.size, "a partial frame is decoded at the canvas's size")
            for y in 0..<image.height { image.row(y).update(repeating: 0, count: image.width) }
            offset = frame.y * image.stride + frame.x * 4
        } else if image.size != header.size {
            // libwebp's rescaler averages the source pixels under each output
            // pixel when shrinking: a proper area filter, at a fraction of
            // the memory of a full-size decode for lossy files. A lossless
            // (VP8L) file still costs its full size, 4 bytes a pixel,
            // inside libwebp: its LZ77 references may reach any earlier
            // pixel, so the decoder keeps them all (a 62 MP file peaks
            // carouseld render at 270 MB). The decode budget counts that
            // (`DecodeCost`, `Header.lossless`) before anything is allocated.
            config.options.use_scaling = 1
            config.options.scaled_width = Int32(image.width)
            config.options.scaled_height = Int32(image.height)
        }
        // "bgrA": B, G, R, A in memory with premultiplied colour, the native
        // 0xAARRGGBB word on little-endian; "Argb" is the same word on big-endian.
        #if _endian(little)
        config.output.colorspace = MODE_bgrA
        #else
        config.output.colorspace = MODE_Argb
        #endif
        config.output.is_external_memory = 1
        config.output.u.RGBA.rgba = (image.base + offset).assumingMemoryBound(to: UInt8.self)
        config.output.u.RGBA.stride = Int32(image.stride)
        config.output.u.RGBA.size = image.byteCount - offset
        let data = contents.base.map { ($0 + header.payload.lowerBound).assumingMemoryBound(to: UInt8.self) }
        let status = WebPDecode(data, header.payload.count, &config)
        // Frees nothing of ours (the memory is external) but is the documented pairing.
        WebPFreeDecBuffer(&config.output)
        withExtendedLifetime(contents) {}
        guard status == VP8_STATUS_OK else { throw error(status, path: path, pixelBytes: image.byteCount) }
    }

    private static func error(_ status: VP8StatusCode, path: String, pixelBytes: Int = 0) -> ImageError {
        switch status {
        case VP8_STATUS_OUT_OF_MEMORY:
            return ImageError(path: path, reason: .outOfMemory(bytes: pixelBytes))
        case VP8_STATUS_UNSUPPORTED_FEATURE:
            return ImageError(path: path, reason: .unsupportedVariant(.webp, detail: "a feature libwebp cannot decode"))
        case VP8_STATUS_NOT_ENOUGH_DATA:
            return ImageError(path: path, reason: .corrupt(.webp, detail: "file is truncated"))
        case VP8_STATUS_BITSTREAM_ERROR:
            return ImageError(path: path, reason: .corrupt(.webp, detail: "bitstream error"))
        default:
            return ImageError(path: path, reason: .corrupt(.webp, detail: "decoder error \(status.rawValue)"))
        }
    }

    /// The size libwebp scales to: `ImageDecoder.reducedSize` (libwebp
    /// would upscale, which the scaler does better later).
    static func scaledSize(for size: PixelSize, covering minimum: PixelSize) -> PixelSize {
        ImageDecoder.reducedSize(of: size, covering: minimum)
    }
}
