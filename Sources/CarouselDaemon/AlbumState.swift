import CarouselAlbum
import CarouselCore

/// The pictures the running carousel shows, in order: one list of entries
/// (path, inode, size, mtime), from which the model's item count, the
/// decode cache's paths and the reconciliation after a change all come.
public struct AlbumState: Sendable {
    public private(set) var entries: [AlbumEntry]
    /// `entries`' paths, kept alongside: every frame looks pictures up by index.
    public private(set) var paths: [String]
    /// Files that could not be decoded, as they were when they failed: left
    /// out of every later listing (and not logged again) until they change.
    public private(set) var broken: [String: AlbumEntry] = [:]
    /// The listing's own skip lines (not a regular file, unreadable, ...)
    /// already logged, so that a rescan logs only new ones.
    private var reportedSkips: Set<String> = []
    /// Bumped whenever `paths` changes: the loop asks for pictures again
    /// only when this or what is on screen changed.
    public private(set) var generation = 0
    /// order = shuffle: the generator (seeded at random once per start), and
    /// the item the album was last reshuffled at (once per rest).
    var shuffleGenerator = SeededGenerator(seed: UInt64.random(in: .min ... .max))
    var shuffledAt: Int?

    public init(_ entries: [AlbumEntry] = []) {
        self.entries = entries
        paths = entries.map(\.path)
    }

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }

    /// The path of item `index`, or nil out of range.
    public func path(_ index: Int) -> String? { paths.indices.contains(index) ? paths[index] : nil }

    /// What a change did: the index to show now (the picture that was on
    /// screen where it still exists, see `AlbumDiff.reconcile`) and the
    /// paths whose decoded pixels are stale (replaced files, and new names:
    /// a file skipped while half-copied comes back complete under the same name).
    public struct Change: Equatable, Sendable {
        public var index: Int
        public var stale: [String]
    }

    /// Takes a new listing while item `current` is on screen. Files known to
    /// be broken stay out unless they changed since (then they are tried again).
    ///
    /// `keepingOrder` (order = shuffle): the pictures still there keep the
    /// places the shuffle gave them, and new ones come after them, at the end
    /// of the pass; a later reshuffle mixes them in.
    public mutating func replace(with listing: [AlbumEntry], current: Int, keepingOrder: Bool = false) -> Change {
        var listing = listing
        if keepingOrder {
            var place: [String: Int] = [:]
            for (i, entry) in entries.enumerated() where place[entry.path] == nil { place[entry.path] = i }
            let old = listing.filter { place[$0.path] != nil }.sorted { place[$0.path]! < place[$1.path]! }
            listing = old + listing.filter { place[$0.path] == nil }
        }
        let present = Set(listing.map(\.path))
        broken = broken.filter { present.contains($0.key) }
        let fresh = listing.filter { entry in
            guard let failed = broken[entry.path] else { return true }
            if failed.isReplaced(by: entry) {
                broken[entry.path] = nil
                return true
            }
            return false
        }
        let diff = AlbumDiff(old: entries, new: fresh, currentIndex: current)
        entries = fresh
        paths = fresh.map(\.path)
        generation += 1
        return Change(index: diff.currentIndex, stale: diff.replaced + diff.added)
    }

    /// order = shuffle: shuffles the pictures not in `fixed` (on screen and
    /// their neighbours) while item `current` is on screen; see `Shuffle`.
    /// The item count and what `fixed` shows do not change.
    public mutating func reshuffle<G: RandomNumberGenerator>(current: Int, fixed: Set<Int>, using generator: inout G) {
        let before = entries
        Shuffle.reshuffle(&entries, current: current, fixed: fixed, using: &generator)
        guard entries != before else { return }
        paths = entries.map(\.path)
        generation += 1
    }

    /// order = shuffle, before anything is shown: a random order throughout.
    /// Every entry in a new order, from the album's own generator.
    mutating func shuffleAll() {
        var generator = shuffleGenerator
        shuffleAll(using: &generator)
        shuffleGenerator = generator
    }

    /// Reshuffled around `current` (see `reshuffle(current:fixed:using:)`) from
    /// the album's own generator, once per item it comes to rest at.
    mutating func reshuffleAtRest(current: Int, fixed: Set<Int>) {
        guard current != shuffledAt else { return }
        shuffledAt = current
        var generator = shuffleGenerator
        reshuffle(current: current, fixed: fixed, using: &generator)
        shuffleGenerator = generator
    }

    public mutating func shuffleAll<G: RandomNumberGenerator>(using generator: inout G) {
        entries.shuffle(using: &generator)
        paths = entries.map(\.path)
        generation += 1
    }

    /// Leaves out files that cannot be decoded, while item `current` is on screen.
    public mutating func remove(_ failed: Set<String>, current: Int) -> Change {
        for entry in entries where failed.contains(entry.path) { broken[entry.path] = entry }
        var fresh = entries
        fresh.removeAll { failed.contains($0.path) }
        let index = AlbumDiff.reconcile(old: entries, new: fresh, currentIndex: current)
        entries = fresh
        paths = fresh.map(\.path)
        generation += 1
        return Change(index: index, stale: [])
    }

    /// Of a listing's skip lines, those not logged yet; the others are
    /// forgotten, so a line that goes and comes back is logged again.
    public mutating func unreportedSkips(_ lines: [String]) -> [String] {
        let new = lines.filter { !reportedSkips.contains($0) }
        reportedSkips = Set(lines)
        return new
    }

    /// What the decode cache should hold, most wanted first: the items on
    /// screen, the items where a motion in flight comes to rest (`heading`,
    /// the model's prefetch effect), then the neighbours of `current`: one
    /// ahead in the direction of travel (`direction` +1 forward, -1 back) and
    /// one behind.
    public func wanted(onScreen: [Int], heading: [Int] = [], current: Int, direction: Int, wrap: Bool) -> [String] {
        guard !paths.isEmpty else { return [] }
        var indices: [Int] = []
        for i in onScreen + heading where paths.indices.contains(i) && !indices.contains(i) { indices.append(i) }
        let n = paths.count
        for offset in Self.neighbourSteps(direction: direction) {
            var i = current + offset
            if wrap { i = ((i % n) + n) % n }
            if paths.indices.contains(i), !indices.contains(i) { indices.append(i) }
        }
        return indices.map { paths[$0] }
    }

    /// The neighbours of the current item that `wanted` names, as steps from
    /// it: one ahead in the direction of travel, then one behind. (Two ahead
    /// cost a full-screen picture more for swipes faster than one decode.)
    static func neighbourSteps(direction: Int) -> [Int] {
        let step = direction < 0 ? -1 : 1
        return [step, -step]
    }

    /// The most pictures `wanted` can name at once on `geometry`: the items on
    /// screen at the widest point of a slide together with the neighbours of
    /// the current item, plus the items visible where a motion comes to rest
    /// (which can be far away: a `goto`, a rewind). With `paging` a motion
    /// rests on whole offsets; without, anywhere. A cache with room for this
    /// many never refuses a wanted picture for lack of room, and needs no more.
    public static func wantedLimit(geometry: Geometry, paging: Bool) -> Int {
        // Slot space (unwrapped positions, an album long enough that no index
        // repeats) is periodic in the offset with period 1: what is visible
        // changes only where an item's far edge leaves the leading side,
        // where an item's near edge enters the trailing side, and where the
        // current (nearest) item changes at .5. Each of those instants, both
        // sides of it and the middle of each stretch between cover every case.
        func phase(_ d: Double) -> Double { d - d.rounded(.down) }
        let edges = [0, 0.5, phase((geometry.lead + geometry.itemExtent) / geometry.pitch),
                     phase((geometry.lead - geometry.axisExtent) / geometry.pitch)].sorted()
        var offsets: [Double] = []
        for (k, b) in edges.enumerated() {
            let next = k + 1 < edges.count ? edges[k + 1] : 1
            offsets += [b, b - 1e-7, b + 1e-7, (b + next) / 2]
        }
        var onScreenMost = 0, widest = 0
        for x in offsets {
            guard let slots = geometry.visibleSlots(offset: x, count: 1, wrap: true) else { continue }
            onScreenMost = max(onScreenMost, slots.count)
            let current = Int(x.rounded(.toNearestOrAwayFromZero))
            for direction in [1, -1] {
                let more = neighbourSteps(direction: direction).filter { !slots.contains(current + $0) }.count
                widest = max(widest, slots.count + more)
            }
        }
        let atRest = paging ? geometry.visibleSlots(offset: 0, count: 1, wrap: true)?.count ?? 0 : onScreenMost
        return widest + atRest
    }
}
