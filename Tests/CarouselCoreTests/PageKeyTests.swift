import Testing
import CarouselCore

/// What a page shows, as the decode cache names it: a picture alone or a
/// pair, told apart by their paths alone (no path is joined into another).
@Suite struct PageKeyTests {
    @Test func aPictureAloneIsItsPathAndAPairItsTwoInOrder() {
        let alone = PageKey("/a/x.jpg")
        #expect(!alone.isPair && alone.first == "/a/x.jpg" && alone.second == nil)
        #expect(alone.paths == ["/a/x.jpg"])
        let pair = PageKey(pair: "/a/x.jpg", "/a/y.jpg")
        #expect(pair.isPair && pair.first == "/a/x.jpg" && pair.second == "/a/y.jpg")
        #expect(PageKey(paths: ["/a/x.jpg", "/a/y.jpg"]) == pair)
        #expect(PageKey(paths: ["/a/x.jpg", "/a/y.jpg"].dropFirst()) == PageKey("/a/y.jpg"))
    }

    @Test func aPairIsNeitherOfItsPicturesNorTheOtherOrder() {
        let pair = PageKey(pair: "/a/x.jpg", "/a/y.jpg")
        let keys: Set = [pair, PageKey(pair: "/a/y.jpg", "/a/x.jpg"), PageKey("/a/x.jpg"), PageKey("/a/y.jpg")]
        #expect(keys.count == 4)
    }

    @Test func logLinesNameThePathsAsThePageNameDoes() {
        #expect("\(PageKey("/a/x.jpg"))" == "/a/x.jpg")
        #expect("\(PageKey(pair: "/a/x.jpg", "/a/y.jpg"))" == "/a/x.jpg and /a/y.jpg")
    }
}
