// `[images] pair_portraits` through `carouseld render` (issue 28): folders of
// landscapes and portraits rendered at offsets where a pair is on screen,
// against references drawn by ImageMagick from the pair rule as Reference.swift
// writes it down (which pictures share a page, the halves and the gap, each
// half fitted like an item box), not from the code under test.

import Foundation
import Testing

/// Quadrant pictures of distinct shapes and palettes, so that a picture in
/// the wrong half, fitted to the wrong box, mirrored or shifted shows.
enum PairPictures {
    static let landscape1 = PictureSpec.quadrants(width: 160, height: 100, palette: 0)
    static let portrait1 = PictureSpec.quadrants(width: 60, height: 150, palette: 1)
    static let portrait2 = PictureSpec.quadrants(width: 80, height: 120, palette: 2)
    static let landscape2 = PictureSpec.quadrants(width: 200, height: 120, palette: 3)
    static let portrait3 = PictureSpec.quadrants(width: 90, height: 140, palette: 4)
    /// As wide as tall: no portrait.
    static let square = PictureSpec.quadrants(width: 120, height: 120, palette: 5)
    /// The folder: landscape, portrait, portrait, landscape.
    static let folder = [landscape1, portrait1, portrait2, landscape2]
}

/// A pair_portraits scene, with the pages it must make written out by hand
/// (indices into its pictures), which the reference's own rule is held to
/// before anything is rendered.
struct PairCase: Sendable, CustomTestStringConvertible {
    var name: String
    var scene: Scene
    var offsets: [Double]
    var pages: [[Int]]
    var testDescription: String { name }

    init(_ name: String, _ offsets: [Double], pages: [[Int]], _ change: (inout Scene) -> Void = { _ in }) {
        self.name = name
        self.offsets = offsets
        self.pages = pages
        var s = Scene()
        s.pairPortraits = true
        s.pictures = PairPictures.folder
        change(&s)
        scene = s
    }

    func check() throws {
        let scratch = try Scratch("pages")
        let pictures = try scene.pictures.enumerated().map { try $1.make(in: scratch, name: "p\($0)") }
        try #require(CarouselRenderTests.pages(scene, pictures: pictures) == pages, "\(name): the reference pairs otherwise")
        try checkScene(scene, offsets: offsets, label: name, folder: true)
    }
}

@Suite("Portrait pairs from carouseld render match ImageMagick references",
       .enabled(if: Tools.imageMagickAvailable, Comment(rawValue: imageMagickMissing)))
struct PortraitPairFrameTests {
    static let paired = [[0], [1, 2], [3]]

    /// The folder [L1, P1, P2, L2]: pages L1, P1+P2, L2. Offset 1 shows the
    /// pair alone, 0.5 half of L1 and half of the pair, 0 the pair peeking
    /// in where items are smaller than the screen.
    static let pairCases: [PairCase] = [
        PairCase("full-screen items on 320x200: page 1 is the pair", [0, 0.5, 1, 1.5], pages: paired),
        PairCase("peek with spacing 20: the halves 20 px apart, neighbours 20 px away", [0, 0.5, 1], pages: paired) {
            $0.itemSize = 0.8
            $0.spacing = 20
        },
        // E = 256, gap round(12.6) = 13: halves of 121 and 122 px.
        PairCase("spacing 12.6: a 13 px gap, the odd pixel in the right half", [0, 1, 1.25], pages: paired) {
            $0.itemSize = 0.8
            $0.spacing = 12.6
        },
        PairCase("fit cover: each portrait fills its half, cropped", [0, 0.5, 1], pages: paired) {
            $0.itemSize = 0.8
            $0.spacing = 10
            $0.fit = "cover"
        },
        PairCase("fit stretch: each portrait stretched over its half", [1], pages: paired) {
            $0.spacing = 6
            $0.fit = "stretch"
        },
        PairCase("fit none: unscaled, centred in its half, cut at the half's edges", [1], pages: paired) {
            $0.spacing = 8
            $0.fit = "none"
            $0.background = RGB(hex: "#102030")
            $0.pictures = [PairPictures.landscape1, .quadrants(width: 200, height: 260, palette: 1),
                           PairPictures.portrait2, PairPictures.landscape2]
        },
        PairCase("a 200x320 panel at rotation 90 (landscape layout): the pair turned with the frame", [0, 0.5, 1], pages: paired) {
            $0.panelWidth = 200
            $0.panelHeight = 320
            $0.rotation = 90
            $0.spacing = 12
        },
        PairCase("rotation 270, peeking", [0.5, 1], pages: paired) {
            $0.panelWidth = 200
            $0.panelHeight = 320
            $0.rotation = 270
            $0.itemSize = 0.8
            $0.spacing = 16
        },
        PairCase("rotation 180", [1], pages: paired) {
            $0.rotation = 180
            $0.spacing = 12
        },
        // Item boxes 320x160: wider than tall, so portraits pair.
        PairCase("vertical carousel of landscape boxes: the pair side by side in its box", [0.5, 1], pages: paired) {
            $0.vertical = true
            $0.itemSize = 0.8
            $0.spacing = 10
            $0.indicator.position = "right"
        },
        PairCase("the wrap seam: the last landscape, then the pair that starts the folder", [2.5, -0.5], pages: [[0, 1], [2], [3]]) {
            $0.itemSize = 0.8
            $0.spacing = 14
            $0.pictures = [PairPictures.portrait1, PairPictures.portrait2, PairPictures.landscape1, PairPictures.landscape2]
        },
        // orientation-6 and -8 are stored 64x32: portraits only once turned upright.
        PairCase("portraits by their EXIF orientation pair; a landscape by it does not", [1, 1.5, 2], pages: paired) {
            $0.spacing = 10
            $0.pictures = [PairPictures.landscape1, .exif(6), .exif(8), .exif(1)]
        },
    ]

    @Test("a pair of portraits shares a page", arguments: pairCases)
    func pair(_ c: PairCase) throws {
        try c.check()
    }

    /// Folders where some or all portraits stay alone: the reference draws
    /// those pages as plain items.
    static let aloneCases: [PairCase] = [
        PairCase("a portrait followed by a landscape stays alone", [0.5, 1, 2.5, 3], pages: [[0], [1], [2], [3]]) {
            $0.itemSize = 0.8
            $0.spacing = 12
            $0.pictures = [PairPictures.landscape1, PairPictures.portrait1, PairPictures.landscape2, PairPictures.portrait2]
        },
        PairCase("three portraits in a row: a pair, then a single", [1, 1.5, 2, 2.5], pages: [[0], [1, 2], [3], [4]]) {
            $0.itemSize = 0.8
            $0.spacing = 12
            $0.pictures = [PairPictures.landscape1, PairPictures.portrait1, PairPictures.portrait2, PairPictures.portrait3,
                           PairPictures.landscape2]
        },
        PairCase("the last portrait and the first never pair across the wrap seam", [3, 3.5, -0.5], pages: [[0], [1], [2], [3]]) {
            $0.itemSize = 0.8
            $0.spacing = 12
            $0.pictures = [PairPictures.portrait1, PairPictures.landscape1, PairPictures.landscape2, PairPictures.portrait2]
        },
        PairCase("a square picture is no portrait", [0.5, 1], pages: [[0], [1], [2]]) {
            $0.spacing = 12
            $0.pictures = [PairPictures.portrait1, PairPictures.square, PairPictures.portrait2]
        },
        PairCase("a portrait panel (200x320): every picture alone", [0, 1, 1.5], pages: [[0], [1], [2], [3]]) {
            $0.panelWidth = 200
            $0.panelHeight = 320
            $0.spacing = 12
        },
        PairCase("a 320x200 panel at rotation 90 (portrait layout): every picture alone", [1, 1.5], pages: [[0], [1], [2], [3]]) {
            $0.rotation = 90
            $0.spacing = 12
        },
    ]

    @Test("portraits without a portrait partner, or on a portrait layout, stay alone", arguments: aloneCases)
    func alone(_ c: PairCase) throws {
        try c.check()
    }
}
