import CGIF

/// The bytes giflib reads through `gifRead`, and how far it has read.
private final class GIFSource {
    let contents: FileContents
    var offset = 0

    init(_ contents: FileContents) { self.contents = contents }
}

/// giflib's `InputFunc`: copies up to `length` bytes of the file. A short
/// count is how giflib learns that the file ended (D_GIF_ERR_READ_FAILED).
private func gifRead(_ file: UnsafeMutablePointer<GifFileType>?, _ buffer: UnsafeMutablePointer<GifByteType>?,
                     _ length: Int32) -> Int32 {
    guard let file, let buffer, length > 0, let user = file.pointee.UserData else { return 0 }
    let source = Unmanaged<GIFSource>.fromOpaque(user).takeUnretainedValue()
    let count = min(Int(length), source.contents.count - source.offset)
    guard count > 0, let base = source.contents.base else { return 0 }
    buffer.update(from: (base + source.offset).assumingMemoryBound(to: UInt8.self), count: count)
    source.offset += count
    return Int32(count)
}

/// Owner of a giflib decoder (`GifFileType`), closed exactly once. Reads the
/// first frame only, record by record (`DGifGetRecordType`), so an
/// animation's later frames are never decoded or even held: `DGifSlurp`
/// would keep every frame of a long animation in memory.
///
/// giflib reports errors by return value and `Error`, never by longjmp or
/// exit, so Swift calls it directly.
final class GIFReader {
    /// The first frame, as its image descriptor and the extensions before it say.
    struct Frame {
        /// The picture the frame is drawn on: the logical screen, grown to
        /// hold the frame when a writer declared a smaller screen (browsers
        /// do the same).
        var canvas: PixelSize
        var left: Int, top: Int, width: Int, height: Int
        var interlaced: Bool
        /// 256 premultiplied pixels: the frame's local colour map, else the
        /// global one; the transparent index is 0, indices past the map are
        /// opaque black.
        var palette: [UInt32]
        /// Pixels of the canvas may be see-through: a transparent index, or
        /// a frame that leaves part of the canvas uncovered (drawn
        /// transparent, as browsers draw it, not in the background colour).
        var hasAlpha: Bool
    }

    private let file: UnsafeMutablePointer<GifFileType>
    private let source: GIFSource
    private let path: String

    /// Reads the screen descriptor and the global colour map.
    /// The corresponding C function is `DGifOpen`.
    init(_ contents: FileContents, path: String) throws(ImageError) {
        let source = GIFSource(contents)
        var code: Int32 = 0
        guard let file = DGifOpen(Unmanaged.passUnretained(source).toOpaque(), gifRead, &code) else {
            throw Self.error(code, path: path)
        }
        self.file = file
        self.source = source
        self.path = path
    }

    deinit {
        var code: Int32 = 0
        DGifCloseFile(file, &code)
    }

    /// Reads records up to the first image descriptor: the graphics control
    /// extension before it gives the transparent index.
    /// The corresponding C functions are `DGifGetRecordType`, `DGifGetExtension` and `DGifGetImageDesc`.
    func readFirstFrame() throws(ImageError) -> Frame {
        var transparentIndex: Int?
        while true {
            var record = UNDEFINED_RECORD_TYPE
            guard DGifGetRecordType(file, &record) == GIF_OK else { throw lastError() }
            switch record {
            case EXTENSION_RECORD_TYPE:
                var function: Int32 = 0
                var block: UnsafeMutablePointer<GifByteType>?
                guard DGifGetExtension(file, &function, &block) == GIF_OK else { throw lastError() }
                // Graphics control: size 4, packed flags (bit 0: transparency), delay, index.
                if function == GRAPHICS_EXT_FUNC_CODE, let block, block[0] >= 4 {
                    transparentIndex = block[1] & 1 == 1 ? Int(block[4]) : nil
                }
                while block != nil {
                    guard DGifGetExtensionNext(file, &block) == GIF_OK else { throw lastError() }
                }
            case IMAGE_DESC_RECORD_TYPE:
                guard DGifGetImageDesc(file) == GIF_OK else { throw lastError() }
                return try frame(transparentIndex: transparentIndex)
            case TERMINATE_RECORD_TYPE:
                throw ImageError(path: path, reason: .corrupt(.gif, detail: "the file ends before its first frame"))
            default:
                throw ImageError(path: path, reason: .corrupt(.gif, detail: "unknown record type"))
            }
        }
    }

    private func frame(transparentIndex: Int?) throws(ImageError) -> Frame {
        let desc = file.pointee.Image
        let left = Int(desc.Left), top = Int(desc.Top), width = Int(desc.Width), height = Int(desc.Height)
        guard width > 0, height > 0 else {
            throw ImageError(path: path, reason: .invalidDimensions(width: width, height: height))
        }
        let canvas = PixelSize(width: max(Int(file.pointee.SWidth), left + width),
                               height: max(Int(file.pointee.SHeight), top + height))
        guard let map = desc.ColorMap ?? file.pointee.SColorMap, let colors = map.pointee.Colors else {
            throw ImageError(path: path, reason: .corrupt(.gif, detail: "the first frame has no colour map"))
        }
        var palette = [UInt32](repeating: 0xFF00_0000, count: 256)
        for i in 0..<min(Int(map.pointee.ColorCount), 256) {
            let c = colors[i]
            palette[i] = 0xFF00_0000 | UInt32(c.Red) << 16 | UInt32(c.Green) << 8 | UInt32(c.Blue)
        }
        if let transparentIndex { palette[transparentIndex] = 0 }
        let covers = left == 0 && top == 0 && width == canvas.width && height == canvas.height
        return Frame(canvas: canvas, left: left, top: top, width: width, height: height,
                     interlaced: desc.Interlace, palette: palette, hasAlpha: transparentIndex != nil || !covers)
    }

    /// Decodes the frame's rows onto `image`, which has the canvas's size;
    /// pixels outside the frame are transparent. Interlaced rows come in
    /// four passes (rows 0, 8, 16...; 4, 12...; 2, 6...; 1, 3...).
    /// The corresponding C function is `DGifGetLine`.
    func decode(_ frame: Frame, into image: DecodedImage) throws(ImageError) {
        if frame.hasAlpha {
            for y in 0..<image.height { image.row(y).update(repeating: 0, count: image.width) }
        }
        var indices = [GifPixelType](repeating: 0, count: frame.width)
        let passes: [(start: Int, step: Int)] = frame.interlaced ? [(0, 8), (4, 8), (2, 4), (1, 2)] : [(0, 1)]
        for pass in passes {
            for y in stride(from: pass.start, to: frame.height, by: pass.step) {
                let status = indices.withUnsafeMutableBufferPointer { DGifGetLine(file, $0.baseAddress, Int32(frame.width)) }
                guard status == GIF_OK else { throw lastError(pixelBytes: image.byteCount) }
                let row = image.row(frame.top + y) + frame.left
                frame.palette.withUnsafeBufferPointer { palette in
                    for x in 0..<frame.width { row[x] = palette[Int(indices[x])] }
                }
            }
        }
    }

    private func lastError(pixelBytes: Int = 0) -> ImageError {
        Self.error(file.pointee.Error, path: path, pixelBytes: pixelBytes)
    }

    /// The corresponding C function is `GifErrorString`.
    private static func error(_ code: Int32, path: String, pixelBytes: Int = 0) -> ImageError {
        switch code {
        case D_GIF_ERR_NOT_ENOUGH_MEM:
            return ImageError(path: path, reason: .outOfMemory(bytes: pixelBytes))
        case D_GIF_ERR_READ_FAILED, D_GIF_ERR_EOF_TOO_SOON:
            return ImageError(path: path, reason: .corrupt(.gif, detail: "file is truncated"))
        default:
            let text = GifErrorString(code).map { String(cString: $0) } ?? "giflib error \(code)"
            return ImageError(path: path, reason: .corrupt(.gif, detail: text))
        }
    }
}
