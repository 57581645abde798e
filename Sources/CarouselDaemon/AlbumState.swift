import CarouselAlbum
import CarouselCore

/// The pictures the running carousel shows, in order: one list of entries
/// (path, inode, size, mtime), and the pages they make (one picture each,
/// or with `[images] pair_portraits` two consecutive portraits sharing one:
/// `PortraitPairs`), from which the model's item count (pages), the decode
/// cache's keys and the reconciliation after a change all come.
public struct AlbumState: Sendable {
    public private(set) var entries: [AlbumEntry]
    /// `entries`' paths, kept alongside.
    public private(set) var paths: [String]
    /// The pages, in order: ranges of `entries` covering it exactly. The
    /// model's items are pages.
    public private(set) var pages: [Range<Int>]
    /// Each page's key for the decode cache (the pictures it shows), kept
    /// alongside: every frame looks pages up by index.
    public private(set) var keys: [PageKey]
    /// `[images] pair_portraits` on a landscape screen: tells whether a
    /// picture would show as a portrait (read from its header, once per
    /// version of the file: `portraits`); nil, every picture alone.
    public private(set) var portraitProbe: (@Sendable (AlbumEntry) -> Bool)?
    private var portraits: [AlbumEntry: Bool] = [:]
    /// Files that could not be decoded, as they were when they failed: left
    /// out of every later listing (and not logged again) until they change.
    public private(set) var broken: [String: AlbumEntry] = [:]
    /// The listing's own skip lines (not a regular file, unreadable, ...)
    /// already logged, so that a rescan logs only new ones.
    private var reportedSkips: Set<String> = []
    /// Bumped whenever `paths` changes: the loop asks for pictures again
    /// only when this or what is on screen changed.
    public private(set) var generation = 0
    /// Pictures hidden on this frame (`hide`), by path: left out of every
    /// listing until `unhide`.
    public var hidden: Set<String> = []
    /// order = shuffle: the generator (seeded at random once per start), and
    /// the item the album was last reshuffled at (once per rest).
    var shuffleGenerator = SeededGenerator(seed: UInt64.random(in: .min ... .max))
    var shuffledAt: Int?

    public init(_ entries: [AlbumEntry] = [], portraitProbe: (@Sendable (AlbumEntry) -> Bool)? = nil) {
        self.entries = entries
        self.portraitProbe = portraitProbe
        paths = []
        pages = []
        keys = []
        regroup(PortraitPairs.singles(entries.count))
        if portraitProbe != nil { pairAfresh() }
    }

    /// The pages: the model's item count.
    public var count: Int { pages.count }
    public var isEmpty: Bool { entries.isEmpty }
    /// The pictures, whatever shares a page.
    public var pictureCount: Int { entries.count }

    /// The path of picture `index` (an index into `entries`), or nil out of range.
    public func path(_ index: Int) -> String? { paths.indices.contains(index) ? paths[index] : nil }

    /// The decode cache's key of page `index`, or nil out of range.
    public func key(_ index: Int) -> PageKey? { keys.indices.contains(index) ? keys[index] : nil }

    /// The paths of the pictures on page `index`, in order (none out of range).
    public func pictures(_ index: Int) -> [String] {
        pages.indices.contains(index) ? pages[index].map { paths[$0] } : []
    }

    /// Page `index` for log lines: its pictures' paths, or "nothing".
    public func pageName(_ index: Int) -> String {
        let shown = pictures(index)
        return shown.isEmpty ? "nothing" : shown.joined(separator: " and ")
    }

    /// The page showing picture `picture` (an index into `entries`).
    public func page(ofPicture picture: Int) -> Int? {
        guard entries.indices.contains(picture) else { return nil }
        // Pages are in order and cover the entries: a binary search.
        var low = 0, high = pages.count - 1
        while low <= high {
            let mid = (low + high) / 2
            if pages[mid].upperBound <= picture { low = mid + 1 } else if pages[mid].lowerBound > picture { high = mid - 1 } else { return mid }
        }
        return nil
    }

    /// The first picture of page `index` (0 for an empty album), for what works on pictures.
    func firstPicture(_ index: Int) -> Int { pages.indices.contains(index) ? pages[index].lowerBound : min(max(index, 0), max(entries.count - 1, 0)) }

    /// Pairs portraits with `probe` from now on (nil: every picture alone),
    /// while page `current` is on screen; returns the page showing its first
    /// picture in the new pages.
    public mutating func pairPortraits(_ probe: (@Sendable (AlbumEntry) -> Bool)?, current: Int) -> Int {
        let picture = firstPicture(current)
        portraitProbe = probe
        portraits = [:]
        if probe == nil { regroup(PortraitPairs.singles(entries.count)) } else { pairAfresh() }
        generation += 1
        return page(ofPicture: picture) ?? 0
    }

    /// Whether `entry` would show as a portrait: its probe's answer, asked once per version of the file.
    private mutating func isPortrait(_ entry: AlbumEntry) -> Bool {
        guard let probe = portraitProbe else { return false }
        if let known = portraits[entry] { return known }
        let portrait = probe(entry)
        portraits[entry] = portrait
        return portrait
    }

    /// Pages from the order alone (`PortraitPairs.pages`); what the probe
    /// said of files no longer listed is forgotten.
    private mutating func pairAfresh() {
        let flags = entries.map { isPortrait($0) }
        let listed = Set(entries)
        portraits = portraits.filter { listed.contains($0.key) }
        regroup(PortraitPairs.pages(portrait: flags))
    }

    /// Takes `groups` (consecutive ranges covering `entries`) as the pages.
    private mutating func regroup(_ groups: [Range<Int>]) {
        paths = entries.map(\.path)
        pages = groups
        keys = groups.map { PageKey(paths: paths[$0]) }
    }

    /// order = shuffle, with pairs: the pages the shuffle made stay together
    /// (a pair whose partner left becomes a single); pictures new to the
    /// album pair among themselves. `old` are the previous pages' entries.
    private mutating func regroup(keeping old: [[AlbumEntry]]) {
        var place: [String: Int] = [:]
        for (i, entry) in entries.enumerated() where place[entry.path] == nil { place[entry.path] = i }
        var groups: [Range<Int>] = []
        var covered = 0
        for page in old {
            // Kept pictures keep their order, so a page's survivors come next.
            let kept = page.compactMap { place[$0.path] }
            guard kept.first == covered else { continue }
            if kept.count == 2, kept[1] == covered + 1, isPortrait(entries[covered]), isPortrait(entries[covered + 1]) {
                groups.append(covered..<covered + 2)
                covered += 2
            } else {
                for i in kept where i == covered {
                    groups.append(i..<i + 1)
                    covered += 1
                }
            }
        }
        // The rest (new pictures, at the end of the pass) pair as a fresh list would.
        let flags = entries[covered...].map { isPortrait($0) }
        groups += PortraitPairs.pages(portrait: flags).map { ($0.lowerBound + covered)..<($0.upperBound + covered) }
        let listed = Set(entries)
        portraits = portraits.filter { listed.contains($0.key) }
        regroup(groups)
    }

    /// `fresh` as the entries, and the pages they make: with shuffle's
    /// `keepingOrder` the pages stay together, else paired afresh.
    private mutating func take(_ fresh: [AlbumEntry], keepingOrder: Bool) {
        let before = pageEntries
        entries = fresh
        if portraitProbe == nil {
            regroup(PortraitPairs.singles(entries.count))
        } else if keepingOrder {
            regroup(keeping: before)
        } else {
            pairAfresh()
        }
        generation += 1
    }

    /// The pages' entries, to keep them together across a change.
    private var pageEntries: [[AlbumEntry]] { pages.map { Array(entries[$0]) } }

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
        let diff = AlbumDiff(old: entries, new: fresh, currentIndex: firstPicture(current))
        take(fresh, keepingOrder: keepingOrder)
        return Change(index: page(ofPicture: diff.currentIndex) ?? 0, stale: diff.replaced + diff.added)
    }

    /// order = shuffle: shuffles the pictures not in `fixed` (on screen and
    /// their neighbours) while item `current` is on screen; see `Shuffle`.
    /// The item count and what `fixed` shows do not change.
    /// With pairs the pages move whole: what is on screen stays as it is.
    public mutating func reshuffle<G: RandomNumberGenerator>(current: Int, fixed: Set<Int>, using generator: inout G) {
        var ring = pageEntries
        let before = ring
        Shuffle.reshuffle(&ring, current: current, fixed: fixed, using: &generator)
        guard ring != before else { return }
        entries = ring.flatMap { $0 }
        var groups: [Range<Int>] = []
        for page in ring { groups.append((groups.last?.upperBound ?? 0)..<(groups.last?.upperBound ?? 0) + page.count) }
        regroup(groups)
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
        if portraitProbe == nil { regroup(PortraitPairs.singles(entries.count)) } else { pairAfresh() }
        generation += 1
    }

    /// Leaves out files that cannot be decoded, while page `current` is on
    /// screen. `keepingOrder` (order = shuffle): pages stay together, as in `replace`.
    public mutating func remove(_ failed: Set<String>, current: Int, keepingOrder: Bool = false) -> Change {
        for entry in entries where failed.contains(entry.path) { broken[entry.path] = entry }
        var fresh = entries
        fresh.removeAll { failed.contains($0.path) }
        let index = AlbumDiff.reconcile(old: entries, new: fresh, currentIndex: firstPicture(current))
        take(fresh, keepingOrder: keepingOrder)
        return Change(index: page(ofPicture: index) ?? 0, stale: [])
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
    /// one behind, unless `behind` is false.
    public func wanted(onScreen: [Int], heading: [Int] = [], current: Int, direction: Int, wrap: Bool,
                       behind: Bool = true) -> [PageKey] {
        guard !keys.isEmpty else { return [] }
        var indices: [Int] = []
        for i in onScreen + heading where keys.indices.contains(i) && !indices.contains(i) { indices.append(i) }
        let n = keys.count
        for offset in Self.neighbourSteps(direction: direction).prefix(behind ? 2 : 1) {
            var i = current + offset
            if wrap { i = ((i % n) + n) % n }
            if keys.indices.contains(i), !indices.contains(i) { indices.append(i) }
        }
        return indices.map { keys[$0] }
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
