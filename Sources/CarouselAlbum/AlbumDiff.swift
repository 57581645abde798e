/// What changed between two scans of the album, and which image to keep on
/// screen.
public struct AlbumDiff: Sendable, Equatable {
    /// The index in the new list to show; see `reconcile`.
    public let currentIndex: Int
    /// Paths in both lists whose file is different (another inode, size or
    /// mtime), in the new list's order: a cache must drop their pixels.
    public let replaced: [String]
    /// Paths only in the new list, in its order.
    public let added: [String]
    /// Paths only in the old list, in its order.
    public let removed: [String]

    public init(old: [AlbumEntry], new: [AlbumEntry], currentIndex: Int) {
        let oldByPath = Dictionary(old.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        let newPaths = Set(new.map(\.path))
        var seen = Set<String>()
        var replaced: [String] = []
        var added: [String] = []
        for entry in new where seen.insert(entry.path).inserted {
            if let before = oldByPath[entry.path] {
                if before.isReplaced(by: entry) { replaced.append(entry.path) }
            } else {
                added.append(entry.path)
            }
        }
        seen.removeAll()
        self.removed = old.filter { !newPaths.contains($0.path) && seen.insert($0.path).inserted }.map(\.path)
        self.replaced = replaced
        self.added = added
        self.currentIndex = Self.reconcile(old: old, new: new, currentIndex: currentIndex)
    }

    /// The index in `new` to show after a rescan, given that `old[currentIndex]`
    /// was on screen.
    ///
    /// * The same path is still there (even replaced by another file): its
    ///   index, so the picture stays where the viewer is; a replaced file keeps
    ///   its place.
    /// * It was removed: the first entry that followed it in `old` and is
    ///   still there takes its place, as if the list closed up over the gap;
    ///   when none is left after it, the last entry of `new`.
    /// * `new` is empty: 0.
    ///
    /// Paths are compared as written. A path listed more than once (possible in
    /// `[images] files`) is matched occurrence by occurrence: the second `a.jpg`
    /// stays the second one.
    public static func reconcile(old: [AlbumEntry], new: [AlbumEntry], currentIndex: Int) -> Int {
        guard !new.isEmpty else { return 0 }
        guard old.indices.contains(currentIndex) else { return min(max(currentIndex, 0), new.count - 1) }
        let current = old[currentIndex].path
        let occurrence = old[..<currentIndex].lazy.filter { $0.path == current }.count
        let matches = new.indices.lazy.filter { new[$0].path == current }
        if let last = matches.last {
            return matches.dropFirst(occurrence).first ?? last
        }
        // Removed: the nearest survivor after it.
        var newIndexByPath: [String: Int] = [:]
        for (index, entry) in new.enumerated() where newIndexByPath[entry.path] == nil {
            newIndexByPath[entry.path] = index
        }
        for entry in old[(currentIndex + 1)...] {
            if let index = newIndexByPath[entry.path] { return index }
        }
        return new.count - 1
    }

    /// Paths in both lists whose file changed; `AlbumDiff(...).replaced`.
    public static func replacedPaths(old: [AlbumEntry], new: [AlbumEntry]) -> [String] {
        AlbumDiff(old: old, new: new, currentIndex: 0).replaced
    }
}
