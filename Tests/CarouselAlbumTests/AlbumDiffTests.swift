import Testing
@testable import CarouselAlbum

@Suite("AlbumDiff: keeping the current image after a rescan")
struct AlbumDiffTests {
    let a = fakeEntry("/i/a.jpg", inode: 1)
    let b = fakeEntry("/i/b.jpg", inode: 2)
    let c = fakeEntry("/i/c.jpg", inode: 3)
    let d = fakeEntry("/i/d.jpg", inode: 4)
    let early = fakeEntry("/i/0.jpg", inode: 5)

    @Test("the current image stays on screen when others come and go")
    func stays() {
        #expect(AlbumDiff.reconcile(old: [a, b, c], new: [early, a, b, c], currentIndex: 1) == 2)
        #expect(AlbumDiff.reconcile(old: [a, b, c], new: [b, c], currentIndex: 1) == 0)
        #expect(AlbumDiff.reconcile(old: [a, b, c], new: [c, b, a], currentIndex: 0) == 2)
        #expect(AlbumDiff.reconcile(old: [a, b, c], new: [a, b, c], currentIndex: 2) == 2)
    }

    @Test("a replaced file keeps its place and is reported")
    func replaced() {
        let newB = fakeEntry("/i/b.jpg", inode: 9)
        let touchedC = fakeEntry("/i/c.jpg", inode: 3, mtime: 2_000)
        let grownA = fakeEntry("/i/a.jpg", inode: 1, size: 101)
        let diff = AlbumDiff(old: [a, b, c, d], new: [grownA, newB, touchedC, d], currentIndex: 1)
        #expect(diff.currentIndex == 1)
        #expect(diff.replaced == ["/i/a.jpg", "/i/b.jpg", "/i/c.jpg"])
        #expect(diff.added.isEmpty)
        #expect(diff.removed.isEmpty)
        #expect(AlbumDiff.replacedPaths(old: [a, b, c, d], new: [a, b, c, d]).isEmpty)
        // Another device with the same inode number is another file.
        var otherDevice = b
        otherDevice.device = 2
        #expect(AlbumDiff.replacedPaths(old: [b], new: [otherDevice]) == ["/i/b.jpg"])
    }

    @Test("a removed current image: the next survivor takes its place, else the last")
    func removed() {
        // b removed: c, which followed it, is shown, wherever it now is.
        #expect(AlbumDiff.reconcile(old: [a, b, c, d], new: [a, c, d], currentIndex: 1) == 1)
        #expect(AlbumDiff.reconcile(old: [a, b, c, d], new: [early, a, c, d], currentIndex: 1) == 2)
        // b and c removed: d.
        #expect(AlbumDiff.reconcile(old: [a, b, c, d], new: [a, d], currentIndex: 1) == 1)
        // The last one removed: clamped to the new last.
        #expect(AlbumDiff.reconcile(old: [a, b, c, d], new: [a, b, c], currentIndex: 3) == 2)
        #expect(AlbumDiff.reconcile(old: [a, b, c, d], new: [a], currentIndex: 2) == 0)
        // Everything replaced by other files.
        #expect(AlbumDiff.reconcile(old: [a, b], new: [c, d], currentIndex: 1) == 1)
        let diff = AlbumDiff(old: [a, b, c], new: [early, a, c, d], currentIndex: 1)
        #expect(diff.added == ["/i/0.jpg", "/i/d.jpg"])
        #expect(diff.removed == ["/i/b.jpg"])
        #expect(diff.currentIndex == 2)
    }

    @Test("empty lists and out-of-range indices")
    func edges() {
        #expect(AlbumDiff.reconcile(old: [a, b], new: [], currentIndex: 1) == 0)
        #expect(AlbumDiff.reconcile(old: [], new: [], currentIndex: 0) == 0)
        #expect(AlbumDiff.reconcile(old: [], new: [a, b], currentIndex: 0) == 0)
        #expect(AlbumDiff.reconcile(old: [a], new: [a, b, c], currentIndex: 7) == 2)
        #expect(AlbumDiff.reconcile(old: [a], new: [a, b, c], currentIndex: -3) == 0)
    }

    @Test("a path listed twice is matched occurrence by occurrence")
    func duplicates() {
        #expect(AlbumDiff.reconcile(old: [a, b, a], new: [a, c, b, a], currentIndex: 2) == 3)
        #expect(AlbumDiff.reconcile(old: [a, b, a], new: [c, a, b, a], currentIndex: 0) == 1)
        // The second occurrence is gone: the remaining one.
        #expect(AlbumDiff.reconcile(old: [a, b, a], new: [b, a], currentIndex: 2) == 1)
        let newA = fakeEntry("/i/a.jpg", inode: 8)
        let diff = AlbumDiff(old: [a, b, a], new: [newA, b, newA], currentIndex: 2)
        #expect(diff.replaced == ["/i/a.jpg"])
        #expect(diff.currentIndex == 2)
    }
}
