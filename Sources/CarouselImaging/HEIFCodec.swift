import CHeifLoader
import CarouselPlatform

/// Owner of a libheif context (`heif_context`) and its primary image's
/// handle, released exactly once. Reads HEIF (HEVC, phones' `.heic`) and
/// AVIF (AV1): libheif reports errors by value, never by longjmp or exit,
/// so Swift calls it directly.
///
/// libheif turns the picture itself: `heif_decode_image` applies the
/// image item's clean aperture (clap), rotation (irot) and mirror (imir)
/// unless `ignore_transformations` is set, which we never set. The
/// handle's width and height are already those of the turned picture, and
/// EXIF's Orientation is not read for these formats (`ExifReader`).
///
/// libheif 1.15 decodes only at the stored size (its `heif_image_scale_image`
/// is a nearest-neighbour copy after a full decode), so a HEIF picture is
/// decoded whole and the scaler reduces it, as a JPEG too large for DCT
/// scaling is. A 12 MP phone photo costs its 48 MB of pixels twice while
/// it is converted: libheif's planes, then ours.
final class HEIFReader {
    struct Header {
        /// The picture as shown, after clap, irot and imir.
        var size: PixelSize
        /// The coded size (`ispe`), what libheif allocates before turning.
        var codedSize: PixelSize
        var hasAlpha: Bool
        /// Bits a luma sample has in the coded stream (8, or 10 and 12 for
        /// HDR; -1 when the file does not say).
        var lumaBits: Int
        /// libheif then hands out premultiplied colour already.
        var isPremultiplied: Bool
    }

    /// libheif, opened (and `heif_init` called) by the first HEIF or AVIF
    /// decode of the process: not linked, so that a start of carouseld does
    /// not load it and its codecs (CHeifLoader.h). From libheif 1.14
    /// `heif_init` loads codec plugins (Debian 12's 1.15 has libde265, dav1d
    /// and libaom built in; later Debian releases ship them as
    /// libheif-plugin-* packages). Never paired with `heif_deinit`.
    private static let library = loadLibrary(cheif_load)

    /// libheif's functions, or the error every HEIF/AVIF picture gets when
    /// the library cannot be loaded (libheif1 not installed).
    static func loadedLibrary(format: ImageFormat, path: String) throws(ImageError) -> cheif_library {
        switch library {
        case .success(let table):
            return table
        case .failure(let failure):
            throw ImageError(path: path, reason: .unsupportedVariant(
                format, detail: "libheif cannot be loaded (install libheif1): \(failure.message)"))
        }
    }

    private let heif: cheif_library

    /// The longest side libheif may allocate (its security limit).
    static let maximumSide = 16384

    private let context: OpaquePointer
    private var handle: OpaquePointer?
    /// libheif reads the file's bytes in place (`_without_copy`) for as long as the context lives.
    private let contents: FileContents
    private let format: ImageFormat
    private let path: String

    /// Parses the boxes (nothing is decoded) and finds the primary image.
    /// The corresponding C functions are `heif_context_read_from_memory_without_copy`
    /// and `heif_context_get_primary_image_handle`.
    init(_ contents: FileContents, format: ImageFormat, path: String) throws(ImageError) {
        heif = try Self.loadedLibrary(format: format, path: path)
        guard let context = heif.heif_context_alloc() else { throw ImageError(path: path, reason: .outOfMemory(bytes: 0)) }
        self.context = context
        self.contents = contents
        self.format = format
        self.path = path
        var status = heif.heif_context_read_from_memory_without_copy(context, contents.base, contents.count, nil)
        guard status.code == heif_error_Ok else { throw error(status) }
        var handle: OpaquePointer?
        status = heif.heif_context_get_primary_image_handle(context, &handle)
        guard status.code == heif_error_Ok, handle != nil else { throw error(status) }
        self.handle = handle
    }

    deinit {
        if let handle { heif.heif_image_handle_release(handle) }
        heif.heif_context_free(context)
    }

    /// The corresponding C functions are `heif_image_handle_get_width`/`_height`,
    /// `heif_image_handle_get_ispe_width`/`_height`, `heif_image_handle_has_alpha_channel`
    /// and `heif_image_handle_get_luma_bits_per_pixel`.
    func readHeader() -> Header {
        Header(size: PixelSize(width: Int(heif.heif_image_handle_get_width(handle)),
                               height: Int(heif.heif_image_handle_get_height(handle))),
               codedSize: PixelSize(width: Int(heif.heif_image_handle_get_ispe_width(handle)),
                                    height: Int(heif.heif_image_handle_get_ispe_height(handle))),
               hasAlpha: heif.heif_image_handle_has_alpha_channel(handle) != 0,
               lumaBits: Int(heif.heif_image_handle_get_luma_bits_per_pixel(handle)),
               isPremultiplied: heif.heif_image_handle_is_premultiplied_alpha(handle) != 0)
    }

    /// Decodes the turned picture to 8-bit RGB(A) and converts it into the
    /// image `allocate` gives for the decoded size (which the caller checks
    /// against its limits: it is the header's, but libheif has the last word).
    /// The corresponding C functions are `heif_decode_image` and `heif_image_get_plane_readonly`.
    func decode(_ header: Header,
                allocate: (PixelSize) throws(ImageError) -> DecodedImage) throws(ImageError) -> DecodedImage {
        // libheif 1.15 (Debian 12) allocates a grid picture at the size its
        // grid box declares, whatever the item's own size says, and crashes
        // (SIGSEGV, heif-convert too) once that size's bytes pass 2^31: a
        // 38-byte change to a 32x64 HEIC declared 26992x28001 (the heif fuzz
        // target). Its own limit, checked before that allocation, keeps every
        // picture within 16384 a side (1 GiB of RGBA at most). Set here, after
        // the header was read and checked against max_pixels, so that an
        // honest header that is too large is refused by that rule first.
        heif.heif_context_set_maximum_image_size_limit(context, Int32(Self.maximumSide))
        guard let options = heif.heif_decoding_options_alloc() else {
            throw ImageError(path: path, reason: .outOfMemory(bytes: 0))
        }
        defer { heif.heif_decoding_options_free(options) }
        // Stated although it is the default: the transforms are what turns a
        // HEIF upright, and nothing else in carouseld turns one.
        options.pointee.ignore_transformations = 0
        // 10- and 12-bit pictures (HDR AVIF, some iPhone HEICs) as 8 bits.
        options.pointee.convert_hdr_to_8bit = 1
        let chroma = header.hasAlpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB
        var decoded: OpaquePointer?
        let status = heif.heif_decode_image(handle, &decoded, heif_colorspace_RGB, chroma, options)
        guard status.code == heif_error_Ok, let decoded else { throw error(status) }
        defer { heif.heif_image_release(decoded) }

        let size = PixelSize(width: Int(heif.heif_image_get_width(decoded, heif_channel_interleaved)),
                             height: Int(heif.heif_image_get_height(decoded, heif_channel_interleaved)))
        guard heif.heif_image_get_bits_per_pixel_range(decoded, heif_channel_interleaved) == 8 else {
            throw ImageError(path: path, reason: .unsupportedVariant(format, detail: "libheif gave no 8-bit RGB for it"))
        }
        var stride: Int32 = 0
        guard size.width > 0, size.height > 0,
              let plane = heif.heif_image_get_plane_readonly(decoded, heif_channel_interleaved, &stride) else {
            throw ImageError(path: path, reason: .corrupt(format, detail: "libheif decoded no pixels"))
        }
        let image = try allocate(size)
        let channels = header.hasAlpha ? 4 : 3
        for y in 0..<size.height {
            let source = plane + y * Int(stride)
            let row = image.row(y)
            if header.hasAlpha && !header.isPremultiplied {
                for x in 0..<size.width {
                    let p = source + x * channels
                    row[x] = DecodedImage.premultipliedPixel(red: UInt32(p[0]), green: UInt32(p[1]),
                                                             blue: UInt32(p[2]), alpha: UInt32(p[3]))
                }
            } else {
                for x in 0..<size.width {
                    let p = source + x * channels
                    let alpha: UInt32 = header.hasAlpha ? UInt32(p[3]) : 0xFF
                    row[x] = alpha << 24 | UInt32(p[0]) << 16 | UInt32(p[1]) << 8 | UInt32(p[2])
                }
            }
        }
        return image
    }

    /// libheif's error as an `ImageError`. Its message may quote box types
    /// read from the file, so it is cut to printable ASCII: one log line.
    private func error(_ status: heif_error) -> ImageError {
        Self.imageError(status, format: format, path: path)
    }

    static func imageError(_ status: heif_error, format: ImageFormat, path: String) -> ImageError {
        let message = (status.message.map { String(cString: $0) } ?? "").trimmingWhitespace
        let detail = String(message.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" }
            .prefix(200))
        switch (status.code, status.subcode) {
        case (heif_error_Memory_allocation_error, heif_suberror_Security_limit_exceeded):
            return ImageError(path: path, reason: .unsupportedVariant(format, detail: detail))
        case (heif_error_Memory_allocation_error, _):
            return ImageError(path: path, reason: .outOfMemory(bytes: 0))
        case (heif_error_Unsupported_feature, heif_suberror_Unsupported_codec):
            // libheif 1.15 finds no plugin for an hvc1 or av01 picture.
            return ImageError(path: path, reason: .unsupportedVariant(format, detail: missingDecoder(format)))
        case (heif_error_Unsupported_feature, _):
            return ImageError(path: path, reason: .unsupportedVariant(format, detail: detail))
        // Unsupported_filetype: no HEIF brand among the compatible ones,
        // which every HEIF writer lists; the ftyp box we sniffed is broken.
        case (heif_error_Invalid_input, heif_suberror_End_of_data):
            return ImageError(path: path, reason: .corrupt(format, detail: "file is truncated"))
        default:
            return ImageError(path: path, reason: .corrupt(format, detail: detail.isEmpty ? "libheif error \(status.code.rawValue)" : detail))
        }
    }

    /// What to install when libheif has no decoder for the picture's codec.
    /// The corresponding C function is `heif_have_decoder_for_format`.
    static func missingDecoder(_ format: ImageFormat) -> String {
        guard case .success(let heif) = library else { return "libheif is not loaded" }
        let version = heif.heif_get_version().map { String(cString: $0) } ?? "?"
        if format == .avif && heif.heif_have_decoder_for_format(heif_compression_AV1) == 0 {
            return "libheif \(version) has no AV1 decoder (install libheif-plugin-dav1d or libheif-plugin-aomdec)"
        }
        if format == .heif && heif.heif_have_decoder_for_format(heif_compression_HEVC) == 0 {
            return "libheif \(version) has no HEVC decoder (install libheif-plugin-libde265)"
        }
        return "libheif \(version) has no decoder for this picture's codec (neither HEVC nor AV1)"
    }
}

private extension String {
    var trimmingWhitespace: Substring {
        let isSpace: (Character) -> Bool = { $0.isWhitespace }
        let start = firstIndex { !isSpace($0) } ?? endIndex
        let end = lastIndex { !isSpace($0) }.map(index(after:)) ?? start
        return self[start..<max(start, end)]
    }
}

extension ImageShape {
    /// What libheif's own reading of the boxes says of the primary item:
    /// the picture's size (its `ispe`, cropped by `clap` and turned by
    /// `irot`) and the coded size (`ispe`); nil when libheif cannot read
    /// them. libheif 1.15 decodes the coded picture at whatever size its
    /// stream (or a grid's box) says, even when that contradicts `ispe`:
    /// the fuzz targets tell such a damaged file from a probe that misreads
    /// the header by these.
    /// The corresponding C functions are `heif_image_handle_get_width`,
    /// `_height`, `heif_image_handle_get_ispe_width` and `_height`.
    public static func libheifHeaderSizes(bytes: [UInt8], format: ImageFormat) -> (declared: PixelSize, coded: PixelSize)? {
        guard !bytes.isEmpty, let reader = try? HEIFReader(FileContents(copying: bytes), format: format, path: "-") else {
            return nil
        }
        let header = reader.readHeader()
        return (header.size, header.codedSize)
    }
}
