// `[images] pair_portraits`: which pictures share a page (the pure rule and
// the album's pages across arrivals, departures and shuffle passes), then
// a daemon on the offscreen display showing pairs.

import CarouselAlbum
import CarouselCore
import CarouselDaemon
import CarouselPlatform
import Foundation
import Testing

/// A picture named `p…` is a portrait, any other name a landscape.
private let byName: @Sendable (AlbumEntry) -> Bool = { $0.name.hasPrefix("p") }

private func entry(_ name: String, inode: UInt64 = 0) -> AlbumEntry {
    AlbumEntry(path: "/a/\(name)", name: name, size: 10, mtime: FileTime(seconds: 1, nanoseconds: 0), device: 1,
               inode: inode == 0 ? UInt64(abs(name.hashValue % 1_000_000) + 1) : inode)
}

private func entries(_ names: String) -> [AlbumEntry] { names.split(separator: " ").map { entry(String($0)) } }

/// The pages as the names of their pictures: "p1+p2 l3 p4".
private func pageNames(_ album: AlbumState) -> String {
    (0..<album.count).map { album.pictures($0).map { String($0.dropFirst(3)) }.joined(separator: "+") }.joined(separator: " ")
}

@Suite("Portrait pairs: the rule") struct PortraitPairRuleTests {
    @Test func runsOfPortraitsPairFromTheirFirstAndAnOddOneStaysAlone() {
        let p = true, l = false
        #expect(PortraitPairs.pages(portrait: [p, p, p, l, p, p, p, p, l, p]) == [0..<2, 2..<3, 3..<4, 4..<6, 6..<8, 8..<9, 9..<10])
        #expect(PortraitPairs.pages(portrait: []) == [])
        #expect(PortraitPairs.pages(portrait: [l, l]) == [0..<1, 1..<2])
        #expect(PortraitPairs.pages(portrait: [p]) == [0..<1])
    }

    @Test func aPageKeyNamesItsPicturesAndAPictureAloneIsItsPath() {
        #expect(PageKey(paths: ["/a/x.jpg"]) == PageKey("/a/x.jpg"))
        let key = PageKey(paths: ["/a/x.jpg", "/a/y.jpg"])
        #expect(key.paths == ["/a/x.jpg", "/a/y.jpg"])
        #expect(PageKey("/a/x.jpg").paths == ["/a/x.jpg"])
    }
}

@Suite("Portrait pairs: the album's pages") struct PortraitPairAlbumTests {
    @Test func pagesFollowTheOrderAndNeverPairAcrossTheWrapSeam() {
        // The last and the first are portraits: consecutive only on screen.
        let album = AlbumState(entries("p1 p2 l3 p4 p5 p6 l7 p8"), portraitProbe: byName)
        #expect(pageNames(album) == "p1+p2 l3 p4+p5 p6 l7 p8")
        #expect(album.count == 6)
        #expect(album.pictureCount == 8)
        #expect(album.key(0) == PageKey(pair: "/a/p1", "/a/p2"))
        #expect(album.key(1) == PageKey("/a/l3"))
        #expect(album.page(ofPicture: 4) == 2)
        #expect(album.page(ofPicture: 5) == 3)
        #expect(album.page(ofPicture: 8) == nil)
        #expect(album.wanted(onScreen: [5], current: 5, direction: 1, wrap: true)
            == [PageKey("/a/p8"), PageKey(pair: "/a/p1", "/a/p2"), PageKey("/a/l7")])
    }

    @Test func withoutAProbeEveryPictureIsAlone() {
        let album = AlbumState(entries("p1 p2 l3"))
        #expect(pageNames(album) == "p1 p2 l3")
        #expect(album.keys == album.paths.map(PageKey.init))
    }

    @Test func theSameFolderPairsAlikeWhateverCameBefore() {
        // A restart (a new state from the listing), and a state that saw the
        // pictures arrive one by one, pair the folder alike.
        let names = "p1 p2 p3 l4 p5 p6 p7 p8 l9 p10"
        let fresh = AlbumState(entries(names), portraitProbe: byName)
        var grown = AlbumState([], portraitProbe: byName)
        let all = entries(names)
        for k in [3, 1, 7, 10, 5] {
            _ = grown.replace(with: Array(all.prefix(k)), current: 0)
        }
        _ = grown.replace(with: all, current: 0)
        #expect(pageNames(grown) == pageNames(fresh))
        #expect(pageNames(fresh) == "p1+p2 p3 l4 p5+p6 p7+p8 l9 p10")
    }

    @Test func aPictureArrivingOrLeavingMovesPartnersOnlyAfterItInItsRun() {
        // From a fixed seed: random albums, one picture added or removed
        // anywhere. Every page outside the run of portraits the change
        // touches keeps its pictures, and so does every pair of that run
        // before the change.
        var generator = SeededGenerator(seed: 28)
        var changedPages = 0
        for round in 0..<400 {
            let n = Int.random(in: 1...24, using: &generator)
            let old = (0..<n).map { i in (Bool.random(using: &generator) ? "p" : "l") + "\(i)" }
            var album = AlbumState(old.map { entry($0) }, portraitProbe: byName)
            let before = pageSets(album)
            var listing = album.entries
            let at: Int, removed: Bool
            if round % 2 == 0 || n == 1 {
                at = Int.random(in: 0...n, using: &generator)
                removed = false
                listing.insert(entry((Bool.random(using: &generator) ? "p" : "l") + "new\(round)"), at: at)
            } else {
                at = Int.random(in: 0..<n, using: &generator)
                removed = true
                listing.remove(at: at)
            }
            _ = album.replace(with: listing, current: 0)
            let after = pageSets(album)
            // The run the change touches: the portraits before `at`, and those
            // after it (after the removed picture: a landscape that leaves joins two runs).
            var runStart = at
            while runStart > 0, old[runStart - 1].hasPrefix("p") { runStart -= 1 }
            var runEnd = removed ? at + 1 : at
            while runEnd < n, old[runEnd].hasPrefix("p") { runEnd += 1 }
            let touched = Set(old[runStart..<max(runEnd, runStart)]).union(removed ? [old[at]] : [])
            for page in before {
                let beforeChange = page.count == 2 && page.allSatisfy { old.firstIndex(of: $0)! < at }
                guard page.isDisjoint(with: touched) || beforeChange else {
                    if !after.contains(page) { changedPages += 1 }
                    continue
                }
                #expect(after.contains(page), "round \(round): page \(page) lost after a change at \(at) in \(old)")
            }
        }
        // The property is not empty: partners after a change do move.
        #expect(changedPages > 50)
    }

    @Test func aShufflePassMovesWholePagesAndLeavesTheScreenAsItIs() {
        var album = AlbumState(entries("p1 p2 l3 p4 p5 p6 l7 p8 p9 l10 p11 l12 p13 p14"), portraitProbe: byName)
        var generator = SeededGenerator(seed: 7)
        album.shuffleAll(using: &generator)
        for rest in 0..<40 {
            let count = album.count
            let current = rest % count
            let fixed = Shuffle.neighbourhood(of: [current], count: count, wrap: true)
            let kept = fixed.map { album.pictures($0) }
            album.reshuffle(current: current, fixed: fixed, using: &generator)
            #expect(album.count == count)
            #expect(fixed.map { album.pictures($0) } == kept, "rest \(rest): the screen or its neighbours changed")
            // Every picture once; every page a portrait pair or one picture.
            #expect(album.entries.count == 14 && Set(album.paths).count == 14)
            for page in 0..<album.count {
                let names = album.pictures(page)
                #expect(names.count == 1 || names.allSatisfy { $0.hasPrefix("/a/p") }, "rest \(rest): page \(names)")
            }
        }
    }

    @Test func inAShuffleAPairWhosePartnerLeavesBecomesASingleAndNewPicturesPairAtTheEnd() {
        var album = AlbumState(entries("p1 p2 l3 p4 p5"), portraitProbe: byName)
        var listing = album.entries.filter { $0.name != "p5" }
        listing += entries("p6 p7")
        let change = album.replace(with: listing, current: 0, keepingOrder: true)
        #expect(pageNames(album) == "p1+p2 l3 p4 p6+p7")
        #expect(change.index == 0)
    }

    @Test func theNewPagesShowThePictureThatWasOnScreen() {
        var album = AlbumState(entries("l0 p1 p2 l3 p4 p5"), portraitProbe: byName)
        // On screen: page 3, p4+p5. A portrait arrives before p1.
        var listing = album.entries
        listing.insert(entry("p00"), at: 1)
        let change = album.replace(with: listing, current: 3)
        #expect(pageNames(album) == "l0 p00+p1 p2 l3 p4+p5")
        #expect(album.pictures(change.index) == ["/a/p4", "/a/p5"])
    }

    @Test func aBrokenPictureLeavesAndItsPartnerPairsAsTheFolderNowDoes() {
        var album = AlbumState(entries("p1 p2 p3 l4"), portraitProbe: byName)
        let change = album.remove(["/a/p1"], current: 0)
        #expect(pageNames(album) == "p2+p3 l4")
        #expect(album.pictures(change.index) == ["/a/p2", "/a/p3"])
    }

    @Test func theProbeIsAskedOncePerVersionOfAFile() {
        final class Count: @unchecked Sendable { var asked: [String] = [] }
        let count = Count()
        var album = AlbumState(entries("p1 l2"), portraitProbe: { count.asked.append($0.name); return $0.name.hasPrefix("p") })
        _ = album.replace(with: entries("p1 l2 p3"), current: 0)
        var replaced = entries("p1 l2 p3")
        replaced[0].inode = 4242
        _ = album.replace(with: replaced, current: 0)
        #expect(count.asked == ["p1", "l2", "p3", "p1"])
    }

    @Test func pairingTurnedOnOrOffKeepsThePictureOnScreen() {
        var album = AlbumState(entries("l0 p1 p2 p3"))
        #expect(album.pairPortraits(byName, current: 3) == 2)
        #expect(pageNames(album) == "l0 p1+p2 p3")
        #expect(album.pairPortraits(nil, current: 1) == 1)
        #expect(pageNames(album) == "l0 p1 p2 p3")
    }

    private func pageSets(_ album: AlbumState) -> [Set<String>] {
        (0..<album.count).map { Set(album.pictures($0).map { String($0.dropFirst(3)) }) }
    }
}
