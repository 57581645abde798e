import CarouselAlbum

/// The pictures the running carousel shows, in order: one list of entries
/// (path, inode, size, mtime), from which the model's item count, the
/// decode cache's paths and the reconciliation after a change all come.
public struct AlbumState: Sendable {
    public private(set) var entries: [AlbumEntry]
    /// `entries`' paths, kept alongside: every frame looks pictures up by index.
    public private(set) var paths: [String]

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

    /// Takes a new listing while item `current` is on screen.
    public mutating func replace(with fresh: [AlbumEntry], current: Int) -> Change {
        let diff = AlbumDiff(old: entries, new: fresh, currentIndex: current)
        entries = fresh
        paths = fresh.map(\.path)
        return Change(index: diff.currentIndex, stale: diff.replaced + diff.added)
    }

    /// Leaves out files that cannot be decoded, while item `current` is on screen.
    public mutating func remove(_ failed: Set<String>, current: Int) -> Change {
        var fresh = entries
        fresh.removeAll { failed.contains($0.path) }
        let index = AlbumDiff.reconcile(old: entries, new: fresh, currentIndex: current)
        entries = fresh
        paths = fresh.map(\.path)
        return Change(index: index, stale: [])
    }

    /// What the decode cache should hold, most wanted first: the items on
    /// screen, the items where a motion in flight comes to rest (`heading`,
    /// the model's prefetch effect), then the neighbours of `current`: two
    /// ahead in the direction of travel (`direction` +1 forward, -1 back) and
    /// one behind.
    public func wanted(onScreen: [Int], heading: [Int] = [], current: Int, direction: Int, wrap: Bool) -> [String] {
        guard !paths.isEmpty else { return [] }
        var indices: [Int] = []
        for i in onScreen + heading where paths.indices.contains(i) && !indices.contains(i) { indices.append(i) }
        let n = paths.count
        let step = direction < 0 ? -1 : 1
        for offset in [step, 2 * step, -step] {
            var i = current + offset
            if wrap { i = ((i % n) + n) % n }
            if paths.indices.contains(i), !indices.contains(i) { indices.append(i) }
        }
        return indices.map { paths[$0] }
    }
}
