import CarouselCore
import CarouselDisplay
import CarouselImaging
#if canImport(Glibc)
import Glibc
#endif

// ScreenWriter's pixels: a scene's strips written into the buffer, zoomed pictures, the empty album.
extension ScreenWriter {
    // MARK: - Pixels

    /// Writes the `repaint` stretches from `scene`, row after row.
    func writeContent(_ scene: Scene, window s: Int, into target: Target) {
        let cross = axis == .horizontal ? compositor.panel.height : compositor.panel.width
        // Where each stretch comes from, worked out once: the row loops are
        // then copies and fills only, and touch nothing reference-counted
        // (strips are plain values: a zoom there was retained and released
        // per strip of every row).
        strips.removeAll(keepingCapacity: true)
        defer { zooms.removeAll(keepingCapacity: true) }
        for interval in repaint { addStrips(scene, window: s, from: interval.start, to: interval.end, to: &strips) }
        let background = compositor.background
        // The pictures stay alive: the scene holds them until this returns.
        withExtendedLifetime(scene) {
            if axis == .horizontal {
                // Column stretches, every row: `source` is in row 0.
                strips.withUnsafeBufferPointer { strips in
                    for y in 0..<cross {
                        let row = target.row(y)
                        for strip in strips where strip.zoom < 0 {
                            // Each row's stretch is a new stream for the
                            // hardware prefetcher: ask for the one two rows on.
                            if let source = strip.source, y + Self.prefetchRows < cross {
                                PixelMemory.prefetch(source + (y + Self.prefetchRows) * strip.stride,
                                                     bytes: (strip.x1 - strip.x0) * strip.pixelBytes)
                            }
                            Self.copy(strip, line: y, into: row + strip.x0, count: strip.x1 - strip.x0, background: background)
                        }
                    }
                }
                // Zoomed pictures are scaled, a rectangle at a time.
                for strip in strips where strip.zoom >= 0 {
                    drawZoomed(zooms[strip.zoom], into: target.row(0) + strip.x0, stride: target.stride,
                               x: strip.x0, y: 0, width: strip.x1 - strip.x0, height: cross, window: s)
                }
            } else {
                // Row stretches, each from one picture (or background): whole-row
                // copies; `source` is the stretch's first row.
                for strip in strips {
                    if strip.zoom >= 0 {
                        drawZoomed(zooms[strip.zoom], into: target.row(strip.x0), stride: target.stride, x: 0,
                                   y: strip.x0, width: cross, height: strip.x1 - strip.x0, window: s)
                    } else {
                        for row in strip.x0..<strip.x1 {
                            Self.copy(strip, line: row - strip.x0, into: target.row(row), count: cross, background: background)
                        }
                    }
                }
            }
        }
        pixelsWritten += cross * Self.total(repaint)
    }

    /// Writes `count` pixels of `strip`'s line `line` (a row of its source,
    /// `stride` bytes apart; from its first pixel, or `offset` pixels in) to
    /// `destination`, or background where it has no source: the one copy
    /// every stretch of every row goes through. A picture kept packed is
    /// widened to the display's 32 bits here, as it is laid out.
    @inline(__always)
    static func copy(_ strip: Strip, line: Int, offset: Int = 0, into destination: UnsafeMutablePointer<UInt32>,
                     count: Int, background: UInt32) {
        if let source = strip.source {
            let from = source + line * strip.stride + offset * strip.pixelBytes
            if strip.pixelBytes == 4 {
                memcpy(destination, from, count * 4)
            } else {
                PackedPixels.widen(from, into: destination, count: count)
            }
        } else {
            destination.update(repeating: background, count: count)
        }
    }

    /// Appends to `list` where the stretch `x0..<x1` along the panel axis
    /// (buffer coordinates, the window at `s`) comes from: stretches of the
    /// scene's pictures and of background, in order, covering `x0..<x1`
    /// exactly. A picture's `source` is its first pixel in the stretch: in
    /// row 0 with the axis horizontal (columns), the stretch's first row
    /// with it vertical (rows). A zoomed picture's stretch is appended to
    /// `zooms` too, which the caller empties when it has drawn them.
    func addStrips(_ scene: Scene, window s: Int, from x0: Int, to x1: Int, to list: inout [Strip]) {
        let horizontal = axis == .horizontal
        var x = x0
        for span in scene.spans {
            let a = max(span.start + s, x), b = min(span.end + s, x1)
            guard b > a else { continue }
            if a > x { list.append(Strip(x0: x, x1: a, source: nil, stride: 0)) }
            if let zoom = span.zoom {
                // Drawn scaled, not copied (never part of a crossfade: a
                // change of picture drops the zoom first).
                zooms.append(zoom)
                list.append(Strip(x0: a, x1: b, source: nil, stride: 0, zoom: zooms.count - 1))
                x = b
                continue
            }
            let pixelBytes = span.image?.format.bytesPerPixel ?? 4
            let source = span.image.map { image in
                image.withUnsafeBytes { UnsafeRawPointer($0.baseAddress!) }
                    + (span.source + a - span.start - s) * (horizontal ? pixelBytes : image.stride)
            }
            list.append(Strip(x0: a, x1: b, source: source, stride: span.image?.stride ?? 0, pixelBytes: pixelBytes))
            x = b
        }
        if x < x1 { list.append(Strip(x0: x, x1: x1, source: nil, stride: 0)) }
    }

    /// Writes the buffer's rectangle at (`x`, `y`), `width × height`, whose
    /// first pixel is at `base` (rows `stride` bytes apart), from a zoomed
    /// picture, the window at `s`: the picture scaled where it reaches,
    /// background around it (a picture pinched below 1, or pushed past an edge).
    func drawZoomed(_ zoom: SpanZoom, into base: UnsafeMutablePointer<UInt32>, stride: Int, x: Int, y: Int,
                            width: Int, height: Int, window s: Int) {
        guard width > 0, height > 0 else { return }
        // The map in buffer coordinates.
        let horizontal = axis == .horizontal
        let ox = horizontal ? zoom.offsetX - Double(s) * zoom.scaleX : zoom.offsetX
        let oy = horizontal ? zoom.offsetY : zoom.offsetY - Double(s) * zoom.scaleY
        // The buffer pixels whose centres fall on the picture, its border
        // included on both sides (so that a turned frame draws the same pixels).
        func covered(_ offset: Double, _ scale: Double, _ size: Int) -> (Int, Int) {
            let a = (0 - offset) / scale - 0.5, b = (Double(size) - offset) / scale - 0.5
            let lo = min(a, b), hi = max(a, b)
            guard lo.isFinite, hi.isFinite else { return (0, 0) }
            return (Int(max(min((lo - 1e-9).rounded(.up), 1e9), -1e9)),
                    Int(max(min((hi + 1e-9).rounded(.down) + 1, 1e9), -1e9)))
        }
        let (cx0, cx1) = covered(ox, zoom.scaleX, zoom.picture.width)
        let (cy0, cy1) = covered(oy, zoom.scaleY, zoom.picture.height)
        let x0 = max(x, cx0), x1 = min(x + width, cx1), y0 = max(y, cy0), y1 = min(y + height, cy1)
        let background = compositor.background
        let rowWords = stride / 4
        for row in 0..<height {
            let line = base + row * rowWords
            let by = y + row
            if by < y0 || by >= y1 || x1 <= x0 {
                line.update(repeating: background, count: width)
                continue
            }
            if x0 > x { line.update(repeating: background, count: x0 - x) }
            if x + width > x1 { (line + (x1 - x)).update(repeating: background, count: x + width - x1) }
        }
        guard x1 > x0, y1 > y0 else { return }
        let start = UnsafeMutableRawPointer(base + (y0 - y) * rowWords + (x0 - x))
        do {
            try ImageScaler.drawTransformed(zoomSource(zoom.picture), into: start, width: x1 - x0, height: y1 - y0, stride: stride,
                                            scaleX: zoom.scaleX, scaleY: zoom.scaleY,
                                            offsetX: ox + Double(x0) * zoom.scaleX, offsetY: oy + Double(y0) * zoom.scaleY)
        } catch {
            // pixman could not allocate its image headers: background, and the next frame tries again.
            for row in (y0 - y)..<(y1 - y) { (base + row * rowWords + (x0 - x)).update(repeating: background, count: x1 - x0) }
        }
    }

    /// The picture a zoom scales: one kept packed is widened to 4 bytes a
    /// pixel, once per zoomed picture, and kept while the zoom lasts
    /// (`widenedZoom`). pixman scales r8g8b8 through its generic fetchers:
    /// a 3840x2160 pinch frame from a packed picture took 53-56x a memcpy of
    /// the frame, from the same picture at 4 bytes 4x (`carousel-bench
    /// --frame-path 3840x2160`). The copy is one picture at 4 bytes more
    /// while zoomed, as a zoom's sharper decode is; without memory for it,
    /// the packed picture is scaled as it is.
    func zoomSource(_ picture: DecodedImage) -> DecodedImage {
        guard picture.format == .rgb888 else { return picture }
        if let widenedZoom, widenedZoom.of == picture.identity { return widenedZoom.picture }
        widenedZoom = nil  // the last zoom's copy goes before this one is made
        guard let wide = try? picture.widened() else { return picture }
        widenedZoom = (picture.identity, wide)
        return wide
    }

    /// `scene` with the packed pictures it shows widened to 4 bytes a
    /// pixel, once per picture for all the frames of a crossfade, and kept
    /// while the crossfade lasts (`widenedFade`): blending from packed rows
    /// (each widened into a row of its own first) made a 1920x1080 frame
    /// 3.3x a memcpy of the frame, from 4-byte pictures 1.5x (`carousel-bench
    /// --transitions`). The copies are the pictures on screen at 4 bytes
    /// more while the crossfade lasts (two at full screen); past
    /// `fadeCopiesAllowed`, or without memory, a picture is blended from its
    /// packed rows.
    func widenedForFade(_ scene: Scene) -> Scene {
        guard scene.spans.contains(where: { $0.image?.format == .rgb888 }) else { return scene }
        var wide = scene
        for i in wide.spans.indices {
            guard let picture = wide.spans[i].image, picture.format == .rgb888 else { continue }
            if let held = widenedFade.first(where: { $0.of == picture.identity }) {
                wide.spans[i].image = held.picture
            } else if widenedFade.count < fadeCopiesAllowed, let copy = try? picture.widened() {
                widenedFade.append((picture.identity, copy))
                wide.spans[i].image = copy
            }
        }
        return wide
    }

    func writeEmpty(into target: Target, record: inout Record) {
        let picture: Frame
        if let emptyPicture {
            picture = emptyPicture
        } else {
            let size = compositor.rotation.logicalSize(panelWidth: compositor.panel.width, panelHeight: compositor.panel.height)
            let logical = Frame(width: size.width, height: size.height)
            compositor.drawEmpty(into: logical)
            picture = Frame(width: compositor.panel.width, height: compositor.panel.height)
            Scanout.write(logical, rotation: compositor.rotation, to: UnsafeMutableRawPointer(picture.pixels),
                          stride: picture.stride, panelWidth: picture.width, panelHeight: picture.height)
            emptyPicture = picture
        }
        for y in 0..<picture.height { target.row(y).update(from: picture.row(y), count: picture.width) }
        pixelsWritten += picture.width * picture.height
        record.content = [Piece(start: 0, end: target.length, content: .unknown)]
        record.empty = true
        record.dots = nil
        record.stamp = nil
        record.textStamp = nil
        record.window = 0
    }
}
