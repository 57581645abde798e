/// The offsets the carousel may rest on with paging, and the scroll range.
///
/// Page `k` of one cycle starts at item `k · itemsPerPage`; with
/// `truncateFinalPage` (and no wrap) the last page starts at `count −
/// itemsPerPage` so that no blank space follows the last item. With wrap the
/// lattice repeats every `count` items: page number `q` (any integer) is page
/// `q mod pageCount` of cycle `⌊q / pageCount⌋`. Page numbers in this type are
/// such unwrapped numbers, so "the neighbour of page q" is always `q ± 1`.
public struct PageLattice: Equatable, Sendable {
    public let count: Int
    public let itemsPerPage: Int
    public let wrap: Bool
    public let paging: Bool
    public let truncateFinalPage: Bool

    public init(count: Int, settings: CarouselSettings) {
        self.count = max(count, 0)
        itemsPerPage = max(settings.itemsPerPage, 1)
        wrap = settings.wrap
        paging = settings.paging
        truncateFinalPage = settings.truncateFinalPage
    }

    public var pageCount: Int { count == 0 ? 0 : (count + itemsPerPage - 1) / itemsPerPage }

    /// The offset of page `k` of one cycle (`0 ..< pageCount`).
    public func offset(ofCyclePage k: Int) -> Double {
        if k == pageCount - 1, truncateFinalPage, !wrap {
            return Double(max(0, min(k * itemsPerPage, count - itemsPerPage)))
        }
        return Double(k * itemsPerPage)
    }

    /// The offset of the unwrapped page number `q`.
    public func offset(ofPage q: Int) -> Double {
        guard pageCount > 0 else { return 0 }
        let cycle = floorDiv(q, pageCount)
        let k = q - cycle * pageCount
        return Double(cycle * count) + offset(ofCyclePage: k)
    }

    /// The page number nearest `offset`; ties go forward. Without wrap the
    /// result is clamped to the real pages.
    public func nearestPage(to offset: Double) -> Int {
        guard pageCount > 0 else { return 0 }
        let cycle = Int((offset / Double(count)).rounded(.down))
        let within = offset - Double(cycle * count)
        let guess = cycle * pageCount + Int((within / Double(itemsPerPage)).rounded(.down))
        var best = guess
        var bestDistance = Double.infinity
        for q in (guess - 1)...(guess + 2) {
            let d = abs(self.offset(ofPage: q) - offset)
            // `<=` with ascending q: on a tie the later page wins.
            if d <= bestDistance + 1e-12 {
                best = q
                bestDistance = min(d, bestDistance)
            }
        }
        return clampPage(best)
    }

    /// The first page past `offset` in one direction: the nearest page whose
    /// offset is greater than `offset` (`forward`) or smaller (backward),
    /// clamped to the real pages without wrap. A page within 1e-9 of
    /// `offset` is not past it. This is where a fling lands (Flutter's
    /// `round(page ± 0.5)`): never against the fling, never more than one
    /// page beyond `offset`.
    public func firstPage(past offset: Double, forward: Bool) -> Int {
        guard pageCount > 0 else { return 0 }
        let epsilon = 1e-9
        let cycle = Int((offset / Double(count)).rounded(.down))
        let within = offset - Double(cycle * count)
        var q = cycle * pageCount + Int((within / Double(itemsPerPage)).rounded(.down))
        if forward {
            // From a page at or before `offset` to the first one after it.
            while self.offset(ofPage: q) > offset + epsilon { q -= 1 }
            while self.offset(ofPage: q) <= offset + epsilon { q += 1 }
        } else {
            while self.offset(ofPage: q) < offset - epsilon { q += 1 }
            while self.offset(ofPage: q) >= offset - epsilon { q -= 1 }
        }
        return clampPage(q)
    }

    /// `q` clamped to the real pages without wrap; unchanged with wrap.
    public func clampPage(_ q: Int) -> Int {
        if wrap || pageCount == 0 { return q }
        return min(max(q, 0), pageCount - 1)
    }

    /// The page `q` as an index into `0 ..< pageCount`.
    public func cyclePage(_ q: Int) -> Int {
        guard pageCount > 0 else { return 0 }
        return q - floorDiv(q, pageCount) * pageCount
    }

    /// The scroll range without wrap (`nil` with wrap: every offset is valid).
    public var range: ClosedRange<Double>? {
        if wrap { return nil }
        guard count > 0 else { return 0...0 }
        let upper = paging ? offset(ofCyclePage: pageCount - 1) : Double(count - 1)
        return 0...upper
    }

    /// The item shown at `offset` (nearest, wrapped or clamped), as
    /// SwipeView's `currentItemIndex`.
    public func itemIndex(at offset: Double) -> Int {
        guard count > 0 else { return 0 }
        let nearest = Int(offset.rounded(.toNearestOrAwayFromZero))
        if wrap { return ((nearest % count) + count) % count }
        return min(max(nearest, 0), count - 1)
    }

    /// The unwrapped offset equal to `target` modulo the cycle that is nearest
    /// to `current`: "the shortest way round" (ties go forward).
    public func nearestCopy(of target: Double, to current: Double) -> Double {
        guard wrap, count > 0 else { return target }
        let n = Double(count)
        var delta = (target - current).truncatingRemainder(dividingBy: n)
        if delta < -n / 2 || (delta == -n / 2) { delta += n } else if delta > n / 2 { delta -= n }
        // Land on an exact copy of `target` (an integer page offset stays integral).
        let cycles = ((current + delta - target) / n).rounded()
        return target + cycles * n
    }
}

@inline(__always)
func floorDiv(_ a: Int, _ b: Int) -> Int {
    let q = a / b
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q
}
