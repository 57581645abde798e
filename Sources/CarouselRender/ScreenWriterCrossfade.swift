import CarouselCore
import CarouselDisplay
import CarouselImaging
#if canImport(Glibc)
import Glibc
#endif

// ScreenWriter's crossfade: two scenes blended row by row.
extension ScreenWriter {
    // MARK: - Crossfade

    /// Writes the window whole as `outgoing` with `incoming` over it at
    /// `fraction`, dots on top, at window 0. Each row is blended straight
    /// from the two scenes' pictures (or the background row where a scene
    /// shows background) into the buffer, which is only written: every
    /// pixel costs two reads and a write, as near a memcpy as a blend gets
    /// (issue 13: within 2x). Rows under the dots or the clock are blended
    /// in the scratch row instead, the clock and the dots drawn over them
    /// there (drawing them needs reads), and then copied; in rows they
    /// cross, only the columns they cover. The window does not move during
    /// a crossfade, and what it held is unknown afterwards, so the first
    /// frame after one is written whole again.
    func writeCrossfade(_ outgoing: Scene, _ incoming: Scene, fraction: Double, into target: Target,
                                record: inout Record) {
        let width = compositor.panel.width, height = compositor.panel.height
        let horizontal = axis == .horizontal
        let plan = plan(page: outgoing.page, pageCount: outgoing.pageCount)
        // Dots drawn elsewhere in a longer buffer are off screen; their stretch is unknown now.
        if let old = record.dots {
            record.markUnknown(horizontal ? old.rect.x0 : old.rect.y0, horizontal ? old.rect.x1 : old.rect.y1,
                               scratch: &merged)
        }
        // Where each stretch along the panel axis comes from in both scenes,
        // worked out once: the row loop is then blends only, and touches
        // nothing reference-counted (a span's picture retained and released
        // per row took most of the blend's own time in perf).
        strips.removeAll(keepingCapacity: true)
        defer { zooms.removeAll(keepingCapacity: true) }
        addStrips(outgoing, window: 0, from: 0, to: compositor.axisExtent, to: &strips)
        incomingStrips.removeAll(keepingCapacity: true)
        addStrips(incoming, window: 0, from: 0, to: compositor.axisExtent, to: &incomingStrips)
        fades.removeAll(keepingCapacity: true)
        let background = UnsafeRawPointer(backgroundRow)
        // Along a vertical axis a step is a row of the picture; background is one row, repeated.
        let step = { (strip: Strip) in horizontal ? strip.pixelBytes : strip.stride }
        var i = 0, j = 0, x = 0
        // Both lists cover the window exactly: cut at every end of either.
        while x < compositor.axisExtent {
            let p = strips[i], q = incomingStrips[j]
            let end = min(p.x1, q.x1)
            fades.append(Fade(start: x, end: end,
                              outgoing: p.source.map { $0 + (x - p.x0) * step(p) } ?? background + (horizontal ? x * 4 : 0),
                              outgoingStride: p.stride,
                              incoming: q.source.map { $0 + (x - q.x0) * step(q) } ?? background + (horizontal ? x * 4 : 0),
                              incomingStride: q.stride,
                              outgoingPacked: p.source != nil && p.pixelBytes == 3,
                              incomingPacked: q.source != nil && q.pixelBytes == 3))
            x = end
            if p.x1 == end { i += 1 }
            if q.x1 == end { j += 1 }
        }
        let clock = outgoing.stamp, text = outgoing.textStamp
        let clockRect = clock.map { stampRect($0, window: 0) }
        let textRect = text.map { stampRect($0, window: 0) }
        let dotsRect = plan?.bounds
        let fades = self.fades
        let scratch = self.scratch
        // Rows where pictures kept packed are widened before they are
        // blended, indexed by column (as `scratch`, a panel row each).
        let wide = fades.contains { $0.outgoingPacked || $0.incomingPacked } ? widenedRows() : nil
        /// `count` pixels of a side at `source`: as they are, or widened into `row` at `column`.
        func side(_ source: UnsafeRawPointer, packed: Bool, row: Int, column: Int, count: Int) -> UnsafePointer<UInt32> {
            guard packed, let wide else { return source.assumingMemoryBound(to: UInt32.self) }
            let into = wide + row * scratchCount + column
            PackedPixels.widen(source, into: into, count: count)
            return UnsafePointer(into)
        }
        var k = 0
        /// Blends columns `x0..<x1` of row `y` into `row` (indexed by column).
        func crossfade(row y: Int, from x0: Int, to x1: Int, into row: UnsafeMutablePointer<UInt32>, streaming: Bool) {
            guard x1 > x0 else { return }
            if horizontal {
                for f in fades where f.end > x0 && f.start < x1 {
                    let a = max(f.start, x0), b = min(f.end, x1)
                    let from = { (packed: Bool) in (a - f.start) * (packed ? 3 : 4) }
                    ImageScaler.crossfade(side(f.outgoing + y * f.outgoingStride + from(f.outgoingPacked),
                                               packed: f.outgoingPacked, row: 0, column: a, count: b - a),
                                          side(f.incoming + y * f.incomingStride + from(f.incomingPacked),
                                               packed: f.incomingPacked, row: 1, column: a, count: b - a),
                                          into: row + a, count: b - a, fraction: fraction, streaming: streaming)
                }
            } else {
                // Each row comes whole from one picture (or background) in each scene.
                while fades[k].end <= y { k += 1 }
                let f = fades[k], r = y - f.start
                ImageScaler.crossfade(side(f.outgoing + r * f.outgoingStride + x0 * (f.outgoingPacked ? 3 : 4),
                                           packed: f.outgoingPacked, row: 0, column: x0, count: x1 - x0),
                                      side(f.incoming + r * f.incomingStride + x0 * (f.incomingPacked ? 3 : 4),
                                           packed: f.incomingPacked, row: 1, column: x0, count: x1 - x0),
                                      into: row + x0, count: x1 - x0, fraction: fraction, streaming: streaming)
            }
        }
        // The pictures stay alive: the scenes hold them until this returns.
        withExtendedLifetime((outgoing, incoming)) { withOverlay(clock, text, plan, window: 0) { overlay in
            for y in 0..<height {
                // The columns under the clock or the dots in this row (none: c0 == c1).
                var c0 = width, c1 = 0
                func cover(_ r: Rect?) {
                    guard let r, y >= r.y0, y < r.y1, r.x1 > r.x0 else { return }
                    c0 = min(c0, max(r.x0, 0))
                    c1 = max(c1, min(r.x1, width))
                }
                cover(clockRect)
                cover(textRect)
                cover(dotsRect)
                // Whole cache lines (16 pixels) either way: a line streamed in
                // part and written through the cache in part costs a partial
                // write-combining flush (rows of 90° dots: 5-8% of the frame).
                if c1 > c0 { c0 &= ~15; c1 = min((c1 + 15) & ~15, width) }
                c1 = max(c1, c0)
                let row = target.row(y)
                // The buffer's rows are streamed past the cache, which is
                // better left to the pictures; the scratch row is read back.
                crossfade(row: y, from: 0, to: c0, into: row, streaming: true)
                if c1 > c0 {
                    // The clock and the dots stay on top of both pictures:
                    // drawn over the blend in the scratch row, then copied.
                    let composed = scratch - c0
                    crossfade(row: y, from: c0, to: c1, into: composed, streaming: false)
                    blend(overlay, into: composed, y: y, from: c0, to: c1)
                    (row + c0).update(from: scratch, count: c1 - c0)
                }
                crossfade(row: y, from: max(c0, c1), to: width, into: row, streaming: true)
            }
        } }
        // Once per frame: a fence per row made the frame a third slower.
        ImageScaler.fenceStreamedStores()
        pixelsWritten = width * height
        record.empty = false
        record.markUnknown(0, compositor.axisExtent, scratch: &merged)
        record.dots = nil
        record.stamp = nil
        record.textStamp = nil
        record.window = 0
    }
}
