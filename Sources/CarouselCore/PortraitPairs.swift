/// `[images] pair_portraits`: which pictures share a page.
///
/// A page is one picture or two consecutive portraits (in the album's order,
/// shuffle included). Portraits pair greedily from the start of each run of
/// consecutive portraits: a run of five makes two pairs and a single. A
/// pairing is a function of the order alone, so a restart, a resume and two
/// frames with the same folder pair alike; never across the wrap seam (the
/// last picture and the first are consecutive only on screen). A picture
/// that arrives or leaves changes partners only after it in its own run:
/// every other page keeps its pictures.
public enum PortraitPairs {
    /// The pages of a list whose pictures are portraits where `portrait` says:
    /// ranges of indices into it, in order, covering it exactly.
    public static func pages(portrait: [Bool]) -> [Range<Int>] {
        var pages: [Range<Int>] = []
        pages.reserveCapacity(portrait.count)
        var i = 0
        while i < portrait.count {
            let width = portrait[i] && i + 1 < portrait.count && portrait[i + 1] ? 2 : 1
            pages.append(i..<i + width)
            i += width
        }
        return pages
    }

    /// The pages of `paths` in order, portraits as `isPortrait` says
    /// paired: what a list of files shows as pages (`render`, `simulate`).
    public static func keys(_ paths: [String], isPortrait: (String) -> Bool) -> [PageKey] {
        pages(portrait: paths.map(isPortrait)).map { PageKey(paths: paths[$0]) }
    }

    /// Every picture alone on its page (pairing off).
    public static func singles(_ count: Int) -> [Range<Int>] { (0..<count).map { $0..<$0 + 1 } }
}
