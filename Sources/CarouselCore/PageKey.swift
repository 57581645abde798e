/// What a page shows, and the decode cache's name for its picture: the
/// paths of its pictures in order, one, or two where portraits are paired
/// (`PortraitPairs`).
///
/// The first path and an optional second rather than an array: the loop
/// looks the current page up in the decode cache on every frame of a
/// slide, and a picture alone hashes and compares as its path does.
public struct PageKey: Hashable, Sendable, CustomStringConvertible {
    /// The page's first picture (its only one unless `isPair`).
    public let first: String
    /// The second picture of a pair.
    public let second: String?

    /// A page showing the picture at `path` alone.
    public init(_ path: String) {
        first = path
        second = nil
    }

    /// A page showing the portraits at `first` and `second` side by side.
    public init(pair first: String, _ second: String) {
        self.first = first
        self.second = second
    }

    /// A page showing `paths`, in order: one picture or two.
    public init(paths: some Collection<String>) {
        precondition(paths.count == 1 || paths.count == 2, "a page shows one picture or two, not \(paths.count)")
        var i = paths.makeIterator()
        first = i.next()!
        second = i.next()
    }

    /// Whether the page shows two pictures.
    public var isPair: Bool { second != nil }

    /// The paths of the page's pictures, in order.
    public var paths: [String] { second.map { [first, $0] } ?? [first] }

    /// For log lines: the path of a picture alone, a pair's two joined by
    /// "and" (as `AlbumState.pageName` names a page).
    public var description: String { second.map { "\(first) and \($0)" } ?? first }
}
