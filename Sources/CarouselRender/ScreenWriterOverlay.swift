import CarouselCore
import CarouselDisplay
import CarouselImaging
#if canImport(Glibc)
import Glibc
#endif

// ScreenWriter's dots, clock and pushed text: composed over the pictures in a scratch row, only their rectangles rewritten.
extension ScreenWriter {
    // MARK: - Dots and the clock

    /// Runs `body` with the clock (`stamp`) and the dots (`plan`) as drawn
    /// with the window at `s`, ready for `blend(_:into:y:from:to:)`: worked
    /// out once per rectangle (or crossfade frame), so that the per-row blend
    /// touches nothing reference-counted. Per row, retaining the plan's
    /// arrays and the clock's picture cost more than the blending in a
    /// column of dots on a turned panel (hundreds of short rows).
    func withOverlay<R>(_ stamp: SceneStamp?, _ textStamp: SceneStamp?, _ plan: DotsPlan?, window s: Int,
                        _ body: (Overlay) -> R) -> R {
        let horizontal = axis == .horizontal
        func placed(_ stamp: SceneStamp?) -> OverlayClock? {
            stamp.map { stamp in
                OverlayClock(rect: stampRect(stamp, window: s),
                             // The picture stays alive: `stamp` is held until this returns.
                             pixels: stamp.image.withUnsafeBytes { UnsafeRawPointer($0.baseAddress!) },
                             stride: stamp.image.stride,
                             x: stamp.x + (horizontal ? s : 0), y: stamp.y + (horizontal ? 0 : s))
            }
        }
        let clock = placed(stamp), text = placed(textStamp)
        let dots = plan?.dots ?? [], weights = plan?.weights ?? []
        return withExtendedLifetime((stamp, textStamp)) {
            dots.withUnsafeBufferPointer { dots in
                weights.withUnsafeBufferPointer { weights in
                    body(Overlay(clock: clock, text: text, dots: dots, weights: weights,
                                 dotsRect: plan?.bounds.shifted(by: s, horizontal: horizontal), shift: s,
                                 horizontal: horizontal))
                }
            }
        }
    }

    /// The clock's pixels (premultiplied OVER), the pushed text's, then the
    /// dots', of row `y` between `x0` and `x1`.
    func blend(_ overlay: Overlay, into row: UnsafeMutablePointer<UInt32>, y: Int, from x0: Int, to x1: Int) {
        if let clock = overlay.clock { blend(clock, into: row, y: y, from: x0, to: x1) }
        if let text = overlay.text { blend(text, into: row, y: y, from: x0, to: x1) }
        guard let all = overlay.dotsRect, y >= all.y0, y < all.y1 else { return }
        for dot in overlay.dots {
            let b = dot.bounds.shifted(by: overlay.shift, horizontal: overlay.horizontal)
            guard y >= b.y0, y < b.y1 else { continue }
            let lo = max(b.x0, x0), hi = min(b.x1, x1)
            guard hi > lo else { continue }
            let first = dot.firstWeight + (y - b.y0) * (b.x1 - b.x0) - b.x0
            for x in lo..<hi {
                let weight = overlay.weights[first + x]
                guard weight > 0 else { continue }
                row[x] = compositor.blend(row[x], dot.color, weight)
            }
        }
    }

    /// A stamp's pixels (premultiplied OVER) in row `y` between `x0` and `x1`.
    @inline(__always)
    func blend(_ clock: OverlayClock, into row: UnsafeMutablePointer<UInt32>, y: Int, from x0: Int, to x1: Int) {
        if y >= clock.rect.y0, y < clock.rect.y1 {
            let a = max(x0, clock.rect.x0), b = min(x1, clock.rect.x1)
            // (x, y) of the buffer is (x - clock.x, y - clock.y) of the picture (the rectangle may be clipped).
            let source = (clock.pixels + (y - clock.y) * clock.stride).assumingMemoryBound(to: UInt32.self) - clock.x
            for x in a..<max(a, b) {
                let p = source[x]
                let alpha = p >> 24
                if alpha == 0 { continue }
                if alpha == 255 { row[x] = p; continue }
                let d = row[x], keep = 255 - alpha
                @inline(__always) func channel(_ shift: UInt32) -> UInt32 {
                    let t = ((d >> shift) & 0xFF) * keep + 128
                    return min(255, ((p >> shift) & 0xFF) + ((t + (t >> 8)) >> 8))
                }
                row[x] = 0xFF00_0000 | channel(16) << 16 | channel(8) << 8 | channel(0)
            }
        }
    }

    /// The clock's rectangle in buffer coordinates with the window at `s`,
    /// clipped to the window.
    func stampRect(_ stamp: SceneStamp, window s: Int) -> Rect {
        let panel = compositor.panel
        let x0 = max(stamp.x, 0), y0 = max(stamp.y, 0)
        let x1 = max(x0, min(stamp.x + stamp.image.width, panel.width)), y1 = max(y0, min(stamp.y + stamp.image.height, panel.height))
        return Rect(x0: x0, y0: y0, x1: x1, y1: y1).shifted(by: s, horizontal: axis == .horizontal)
    }

    /// Writes `rect` (buffer coordinates, at most a panel row wide) as the
    /// frame shows it, row by row through the scratch row: the pictures,
    /// the clock over them, the dots over both (blending reads the row, so
    /// it is composed in ordinary memory, then copied). Where each stretch
    /// comes from and the overlay are worked out once for the rectangle:
    /// on a turned panel the dots are a column of hundreds of short rows.
    func writeComposed(_ rect: Rect, _ scene: Scene, window s: Int, into target: Target, dots plan: DotsPlan?) {
        precondition(rect.x1 - rect.x0 <= scratchCount, "a rectangle wider than the scratch row")
        guard rect.x1 > rect.x0, rect.y1 > rect.y0 else { return }
        let horizontal = axis == .horizontal
        rectStrips.removeAll(keepingCapacity: true)
        defer { zooms.removeAll(keepingCapacity: true) }
        addStrips(scene, window: s, from: horizontal ? rect.x0 : rect.y0, to: horizontal ? rect.x1 : rect.y1,
                  to: &rectStrips)
        let background = compositor.background
        let width = rect.x1 - rect.x0
        // Indexed by buffer column.
        let row = scratch - rect.x0
        // The pictures stay alive: the scene holds them until this returns.
        withExtendedLifetime(scene) { withOverlay(scene.stamp, scene.textStamp, plan, window: s) { overlay in
            rectStrips.withUnsafeBufferPointer { strips in
                var k = 0
                for y in rect.y0..<rect.y1 {
                    if horizontal {
                        // Column stretches; `source` is in row 0.
                        for strip in strips {
                            let n = strip.x1 - strip.x0
                            if strip.zoom >= 0 {
                                drawZoomed(zooms[strip.zoom], into: row + strip.x0, stride: n * 4, x: strip.x0, y: y,
                                           width: n, height: 1, window: s)
                            } else {
                                Self.copy(strip, line: y, into: row + strip.x0, count: n, background: background)
                            }
                        }
                    } else {
                        // Row stretches; `source` is the stretch's first row, column 0.
                        while strips[k].x1 <= y { k += 1 }
                        let strip = strips[k]
                        if strip.zoom >= 0 {
                            drawZoomed(zooms[strip.zoom], into: row + rect.x0, stride: width * 4, x: rect.x0, y: y,
                                       width: width, height: 1, window: s)
                        } else {
                            Self.copy(strip, line: y - strip.x0, offset: rect.x0, into: row + rect.x0, count: width,
                                      background: background)
                        }
                    }
                    blend(overlay, into: row, y: y, from: rect.x0, to: rect.x1)
                    (target.row(y) + rect.x0).update(from: scratch, count: width)
                }
            }
        } }
        pixelsWritten += width * (rect.y1 - rect.y0)
    }

    func touched(_ r: Rect) -> Bool {
        let (a, b) = axis == .horizontal ? (r.x0, r.x1) : (r.y0, r.y1)
        return repaint.contains { $0.start < b && a < $0.end }
    }

    func writeDots(_ scene: Scene, window s: Int, into target: Target, record: inout Record) {
        let plan = plan(page: scene.page, pageCount: scene.pageCount)
        let key = plan.map { _ in DotsKey(page: scene.page, pageCount: scene.pageCount) }
        let rect = plan.map { $0.bounds.shifted(by: s, horizontal: axis == .horizontal) }
        let redraw = rect.map { new in record.dots?.key != key || record.dots?.rect != new || touched(new) } ?? false
        // Moved a little (a slide frame moves the window, the dots go with
        // it): the old place and the new one written in one pass, where the
        // old one lies wholly in the scene (else restore marks what it cannot).
        if redraw, let old = record.dots, let plan, let key, let rect, let both = old.rect.joined(with: rect, horizontal: axis == .horizontal),
           both.x1 - both.x0 <= scratchCount, within(old.rect, scene, window: s) {
            writeComposed(both, scene, window: s, into: target, dots: plan)
            record.dots = DotsMark(key: key, rect: rect)
            return
        }
        if let old = record.dots, redraw || rect == nil || old.key != key || old.rect != rect {
            restore(old.rect, scene, window: s, into: target, record: &record, dots: plan)
            record.dots = nil
        }
        guard redraw, let plan, let key, let rect else { return }
        writeComposed(rect, scene, window: s, into: target, dots: plan)
        record.dots = DotsMark(key: key, rect: rect)
    }

    /// Draws a stamp (the clock, the pushed text) where the scene puts it:
    /// again when it changed (a new minute, a new text), when the window
    /// moved (a slide: it stays put on the screen) or when pictures were
    /// written under it; what lay under its old place is put back. `mark`
    /// is where the record keeps this stamp's place.
    func writeStamp(_ stamp: SceneStamp?, _ scene: Scene, window s: Int, into target: Target,
                    mark: WritableKeyPath<Record, StampMark?>, record: inout Record) {
        let plan = plan(page: scene.page, pageCount: scene.pageCount)
        let key = stamp?.image.identity
        let rect = stamp.map { stampRect($0, window: s) }
        let drawn = record[keyPath: mark]
        let redraw = rect.map { new in drawn?.key != key || drawn?.rect != new || touched(new) } ?? false
        if let old = drawn, redraw || rect == nil {
            if old.rect != rect { restore(old.rect, scene, window: s, into: target, record: &record, dots: plan) }
            record[keyPath: mark] = nil
        }
        guard redraw, let key, let rect else { return }
        writeComposed(rect, scene, window: s, into: target, dots: plan)
        record[keyPath: mark] = StampMark(key: key, rect: rect)
    }

    /// Whether `rect` lies within what `scene` shows with the window at `s`.
    func within(_ rect: Rect, _ scene: Scene, window s: Int) -> Bool {
        let lo = scene.low + s, hi = scene.high + s
        return axis == .horizontal ? rect.x0 >= lo && rect.x1 <= hi : rect.y0 >= lo && rect.y1 <= hi
    }

    /// Puts back what lay under dots or the clock drawn at `rect`: from the
    /// scene where it reaches (with what else is drawn there now);
    /// elsewhere the stretch is marked unknown (it is off screen).
    func restore(_ rect: Rect, _ scene: Scene, window s: Int, into target: Target, record: inout Record,
                         dots plan: DotsPlan?) {
        let lo = scene.low + s, hi = scene.high + s
        if axis == .horizontal {
            let a = max(rect.x0, lo), b = min(rect.x1, hi)
            if b > a { writeComposed(Rect(x0: a, y0: rect.y0, x1: b, y1: rect.y1), scene, window: s, into: target, dots: plan) }
            if rect.x0 < a || b < rect.x1 {
                record.markUnknown(rect.x0, min(rect.x1, max(a, rect.x0)), scratch: &merged)
                record.markUnknown(max(b, rect.x0), rect.x1, scratch: &merged)
            }
        } else {
            let a = max(rect.y0, lo), b = min(rect.y1, hi)
            if b > a { writeComposed(Rect(x0: rect.x0, y0: a, x1: rect.x1, y1: b), scene, window: s, into: target, dots: plan) }
            if rect.y0 < a || b < rect.y1 {
                record.markUnknown(rect.y0, min(rect.y1, max(a, rect.y0)), scratch: &merged)
                record.markUnknown(max(b, rect.y0), rect.y1, scratch: &merged)
            }
        }
    }

    /// The logical pixel shown at panel pixel (x, y).
    func logicalPixel(x: Int, y: Int) -> (x: Int, y: Int) {
        compositor.rotation.logical(x: x, y: y, panelWidth: compositor.panel.width, panelHeight: compositor.panel.height)
    }

    /// The dots for a page, in panel pixels (computed when the page changes, not every frame).
    func plan(page: Int, pageCount: Int) -> DotsPlan? {
        let key = DotsKey(page: page, pageCount: pageCount)
        if key == dotsPlanKey { return dotsPlan }
        dotsPlanKey = key
        let logical = compositor.rotation.logicalSize(panelWidth: compositor.panel.width, panelHeight: compositor.panel.height)
        guard let (centres, current) = compositor.dots(page: page, pageCount: pageCount, width: logical.width,
                                                       height: logical.height) else {
            dotsPlan = nil
            return nil
        }
        let style = compositor.style.indicator
        let radius = style.size / 2
        var dots: [DotsPlan.Dot] = []
        var weights: [Double] = []
        var bounds: Rect?
        for (i, c) in centres.enumerated() {
            // The logical pixels fillCircle would touch, turned onto the panel.
            guard let l = Compositor.discBounds(cx: c.x, cy: c.y, radius: radius, width: logical.width,
                                                height: logical.height) else { continue }
            let p = compositor.rotation.panel(x: l.x0, y: l.y0, panelWidth: compositor.panel.width, panelHeight: compositor.panel.height)
            let q = compositor.rotation.panel(x: l.x1, y: l.y1, panelWidth: compositor.panel.width, panelHeight: compositor.panel.height)
            let r = Rect(x0: min(p.x, q.x), y0: min(p.y, q.y), x1: max(p.x, q.x) + 1, y1: max(p.y, q.y) + 1)
            let color = i == current ? style.currentColor : style.color
            let alpha = Double(color.alpha) / 255
            let firstWeight = weights.count
            // Coverage in logical pixels, as the logical picture would be drawn.
            for y in r.y0..<r.y1 {
                for x in r.x0..<r.x1 {
                    let l = logicalPixel(x: x, y: y)
                    weights.append(alpha * Compositor.coverage(x: l.x, y: l.y, cx: c.x, cy: c.y, radius: radius))
                }
            }
            dots.append(DotsPlan.Dot(color: color, bounds: r, firstWeight: firstWeight))
            bounds = bounds.map { $0.union(r) } ?? r
        }
        dotsPlan = bounds.map { DotsPlan(dots: dots, weights: weights, bounds: $0) }
        return dotsPlan
    }
}
