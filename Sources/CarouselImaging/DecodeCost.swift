/// What one decode holds at its peak, counted from the file's header before
/// anything is allocated for it (issue 31: a board of 512 MB must not lose
/// the carousel to one large file). Three parts:
///
/// * the file's bytes, read into memory for the decode;
/// * what the codec keeps beside our pixels: libjpeg every coefficient of a
///   progressive file (2 bytes a sample, at full size whatever the scale),
///   libwebp every pixel of a lossless file (4 bytes), libpng a few rows;
///   a baseline JPEG, a lossy WebP and a GIF are decoded a few rows at a
///   time into our pixels;
/// * the decoded pixels, at the size the picture is decoded to (JPEG, PNG
///   and WebP decode reduced for a smaller screen).
///
/// HEIF and AVIF are decoded whole by libheif, in the helper process: the
/// codec's picture, libheif's copy of its planes, the 8-bit RGB it converts
/// to and ours, about 12 bytes a pixel (8-bit 4:2:0, the phone's HEIC) and
/// 22 with alpha or more than 8 bits, counted from the buffers; then the
/// parent's copy through the memory file (8 bytes a pixel) after the helper
/// ended. Generous: an 8K AVIF measured about 7.2 on the 512 MB VM.
struct DecodeCost {
    /// nil: the file is not read yet (only its size is known).
    var format: ImageFormat?
    /// The picture's stored size.
    var stored: PixelSize
    var file: Int
    var codec: Int
    var pixels: Int
    /// A lossless WebP (what to say about it).
    var lossless = false

    /// Bytes a pixel libheif's decode holds at its peak: 8-bit, and with
    /// alpha or more than 8 bits a sample (`deep`).
    static let heifBytesPerPixel = 12
    static let heifAlphaBytesPerPixel = 22

    static func heif(format: ImageFormat, coded: PixelSize, hasAlpha: Bool, deep: Bool, file: Int) -> DecodeCost {
        let area = coded.width * coded.height
        let perPixel = hasAlpha || deep ? heifAlphaBytesPerPixel : heifBytesPerPixel
        // Ours (4 bytes a pixel) is one part of the whole.
        return DecodeCost(format: format, stored: coded, file: file, codec: area * (perPixel - 4), pixels: area * 4)
    }

    /// The three parts together (saturating: header sizes are bounded
    /// before this, but a sum must not trap).
    var total: Int {
        let (a, o1) = file.addingReportingOverflow(codec)
        let (b, o2) = a.addingReportingOverflow(pixels)
        return o1 || o2 ? .max : b
    }

    /// Why a decode of this cost is refused under `budget`, and how to make
    /// the file fit: a smaller picture (all parts shrink about with its
    /// pixels, so about `budget / total` of them fit), a baseline JPEG or
    /// a lossy WebP, or a larger budget.
    func refusal(budget: Int) -> ImageError.Reason {
        let megapixels = formatMegapixels(Int64(stored.width) * Int64(stored.height))
        let share = Double(max(budget, 0)) / Double(max(total, 1))
        let fitting = Int64(Double(stored.width) * Double(stored.height) * share * 0.9)
        let smaller = fitting >= 100_000 ? "at \(formatMegapixels(fitting)) or less" : "much smaller"
        let cause: String
        var fix: String
        switch format {
        case .jpeg? where codec > 0:
            cause = "a progressive JPEG: libjpeg keeps all of its \(megapixels)'s coefficients, \(formatBytes(codec))"
            fix = file + pixels <= budget ? "save it as a baseline JPEG (not progressive), or \(smaller)" : "save it \(smaller)"
        case .webp? where lossless:
            cause = "a lossless WebP: libwebp keeps all of its \(megapixels) at 4 bytes a pixel, \(formatBytes(codec))"
            fix = file + pixels <= budget ? "save it as a lossy WebP or a JPEG, or \(smaller)" : "save it \(smaller)"
        case let format? where (format == .heif || format == .avif) && codec > 0:
            cause = "\(megapixels) decoded whole by libheif, about \(total / max(stored.width * stored.height, 1)) bytes a pixel"
            fix = "save it \(smaller), or as a JPEG"
        case nil:
            cause = "the file alone is \(formatBytes(file)), read into memory to decode it"
            fix = "save it \(smaller)"
        default:
            cause = "the file's \(formatBytes(file)) and its \(megapixels) decoded"
            fix = "save it \(smaller)"
        }
        fix += ", or raise decode_mb if the board has the memory"
        return .overDecodeBudget(needs: total, budget: budget, cause: cause, fix: fix)
    }
}
