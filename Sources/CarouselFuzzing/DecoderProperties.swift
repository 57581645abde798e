import CFuzzSupport
import CarouselCore
import CarouselImaging

/// One image decoder through its C library. The first three input bytes
/// choose how the daemon would ask (fit, `max_pixels`, the box to fill);
/// the rest is the file, its leading bytes set to the format's signature so
/// that every input reaches the decoder under test.
///
/// * A decoded image has a size (1 to `maxSide` on each axis), never more
///   pixels than `max_pixels`, and rows that hold its width.
/// * Asked for a box, it is never larger than the full-size decode, and
///   with cover or stretch it covers the box (or is the full size).
/// * PNG at full size is exactly IHDR's size, turned upright (libpng skips
///   unknown ancillary chunks before IHDR, so IHDR is looked for).
/// * HEIF and AVIF decode under the daemon's helper's memory cap
///   (`DecodingProcess.addressSpaceAllowance`, its address space above what
///   it has mapped at its start): in the sanitized build scripts/fuzz.sh
///   makes, AddressSanitizer refuses any allocation past it, as the helper's
///   RLIMIT_AS does (max_allocation_size_mb, allocator_may_return_null), so
///   the decoders' paths for a refused allocation run; and no allocation a
///   decode makes is larger than the cap (which fails should the refusal be
///   missing: the 3 GB frame dav1d asks for in Fuzz/regressions/avif). What
///   several allocations hold together is the helper's cap alone to stop:
///   in-process, under AddressSanitizer, no limit can refuse a sum.
///   The checks before the decode are the helper's own: it runs the same
///   `ImageDecoder.decode`, declared sizes against max_pixels, libheif's
///   size limit.
/// * `ImageShape`, the probe that reads a picture's upright size from its
///   header, runs on every input (it must never trap or hang), and when the
///   full-size decode succeeds its answer is that decode's size. HEIF and
///   AVIF are allowed two exceptions: nil (a clean aperture the probe does
///   not round, which libheif rounds its own way), and, where the decoded
///   picture is neither the item's `ispe` nor that turned (a coded stream
///   or grid that contradicts it: libheif 1.15 then decodes the stream's
///   size), a size read from the boxes.
enum DecoderProperties {
    static let maxPixelsChoices = [4096, 65536, 1 << 20, 4 << 20]

    static func check(_ input: [UInt8], format: ImageFormat) throws(PropertyFailure) {
        guard input.count >= 3 else { return }
        let fit = FitMode.allCases[Int(input[0] & 3)]
        let maxPixels = maxPixelsChoices[Int(input[0] >> 2 & 3)]
        let target = input[0] & 0x10 == 0 ? nil : PixelSize(width: Int(input[1]) * 8 + 1, height: Int(input[2]) * 8 + 1)
        var file = Array(input.dropFirst(3))
        switch format {
        case .jpeg: overwrite(&file, [0xFF, 0xD8, 0xFF], at: 0)
        case .png: overwrite(&file, [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], at: 0)
        case .webp:
            if file.count >= 12 {
                overwrite(&file, Array("RIFF".utf8), at: 0)
                overwrite(&file, Array("WEBP".utf8), at: 8)
            }
        case .gif: overwrite(&file, Array("GIF89a".utf8), at: 0)
        // The ftyp box's type and major brand; the box size and the
        // compatible brands stay the fuzzer's.
        case .heif: overwrite(&file, Array("ftypheic".utf8), at: 4)
        case .avif: overwrite(&file, Array("ftypavif".utf8), at: 4)
        }

        let probed = file.withUnsafeBytes { ImageShape.uprightSize(bytes: $0) }
        guard let image = try decode(file, format: format, target: target, fit: fit, maxPixels: maxPixels) else { return }
        try require(image.width > 0 && image.height > 0, "decoded \(image.size)")
        try require(image.width <= ImageDecoder.maxSide && image.height <= ImageDecoder.maxSide,
                    "decoded \(image.size), longer than \(ImageDecoder.maxSide)")
        try require(image.width * image.height <= maxPixels, "decoded \(image.size) with max_pixels \(maxPixels)")
        try require(image.stride >= image.width * 4 && image.byteCount == image.stride * image.height,
                    "stride \(image.stride) for \(image.size)")

        let full = target == nil || fit == .none ? image : try decode(file, format: format, target: nil, fit: fit, maxPixels: maxPixels)
        if let full, full !== image {
            try require(image.width <= full.width && image.height <= full.height,
                        "decoded \(image.size) for \(target!) \(fit), larger than the full \(full.size)")
            if fit == .cover || fit == .stretch, let target {
                let box = PixelSize(width: min(target.width, ImageDecoder.maxSide), height: min(target.height, ImageDecoder.maxSide))
                try require(image.width >= min(box.width, full.width) && image.height >= min(box.height, full.height),
                            "decoded \(image.size) does not cover \(box) (\(fit)); the full size is \(full.size)")
            }
        }
        if let full, probed != full.size {
            let said = probed.map { "\($0)" } ?? "nil"
            switch format {
            case .heif, .avif:
                // The coded picture contradicts the item's ispe (a damaged
                // stream or grid): the probe may answer from the header,
                // libheif's way (irot and clap after ispe only) or the
                // decoder's (every irot and clap, in order).
                let header = ImageShape.libheifHeaderSizes(bytes: file, format: format)
                let contradicted = header.map { full.size != $0.coded && full.size != $0.coded.transposed } ?? false
                let fromHeader = header.map { probed == $0.declared || probed == $0.coded || probed == $0.coded.transposed } ?? false
                try require(probed == nil || (contradicted && fromHeader),
                            "decoded at \(full.size) but the header probe says \(said) (libheif's boxes: \(header.map { "\($0)" } ?? "nil"))")
            default:
                try require(false, "decoded at \(full.size) but the header probe says \(said)")
            }
        }
        if format == .png, let full, let stored = ihdrSize(file) {
            let orientation = (try? ImageDecoder.inspect(bytes: file, name: "fuzz"))?.orientation ?? .identity
            try require(full.size == orientation.uprightSize(of: stored),
                        "PNG decoded at \(full.size) but IHDR says \(stored), orientation \(orientation)")
        }
    }

    /// The decode, in this process; for HEIF and AVIF held to the helper's cap.
    static func decode(_ file: [UInt8], format: ImageFormat, target: PixelSize?, fit: FitMode,
                       maxPixels: Int) throws(PropertyFailure) -> DecodedImage? {
        let metered = (format == .heif || format == .avif) && cfuzz_meter_start() == 0
        let image = try? ImageDecoder.decode(bytes: file, name: "fuzz", targetSize: target, fit: fit, maxPixels: maxPixels)
        if metered {
            let largest = Int(cfuzz_meter_largest())
            let cap = DecodingProcess.addressSpaceAllowance(maxPixels: maxPixels)
            try require(largest <= cap, "decoding allocated \(largest) bytes at once; the helper's cap is \(cap) with max_pixels \(maxPixels)")
        }
        return image
    }

    static func overwrite(_ file: inout [UInt8], _ bytes: [UInt8], at offset: Int) {
        guard file.count >= offset + bytes.count else { return }
        file.replaceSubrange(offset..<offset + bytes.count, with: bytes)
    }

    /// The size in the first IHDR chunk, walking the chunks from the signature.
    static func ihdrSize(_ file: [UInt8]) -> PixelSize? {
        var i = 8
        while i + 16 <= file.count {
            if file[i + 4..<i + 8].elementsEqual("IHDR".utf8) {
                return PixelSize(width: bigEndian(file, i + 8), height: bigEndian(file, i + 12))
            }
            i += 12 + bigEndian(file, i)
        }
        return nil
    }

    static func bigEndian(_ b: [UInt8], _ o: Int) -> Int {
        Int(b[o]) << 24 | Int(b[o + 1]) << 16 | Int(b[o + 2]) << 8 | Int(b[o + 3])
    }
}
