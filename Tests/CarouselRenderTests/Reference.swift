// The reference generator: SPEC.md's layout rules written out again here,
// independently of Sources/ (nothing below calls CarouselCore or
// CarouselRender), and the expected frame drawn by ImageMagick from them.
//
// Rules used (SPEC.md sections 2, 5 and 8; pixel rounding as the renderer
// documents it, since the spec leaves it open):
//   * E = item_size × axis extent when item_size ≤ 1, else item_size pixels;
//     pitch = E + spacing; lead = (axis − E) / 2 for center, 0 for edge.
//   * Slot k at offset x starts at lead + (k − x)·pitch, drawn from pixel
//     floor(start + 0.5), round(E) pixels long, the full cross extent; with
//     wrap slot k shows item k mod n, without wrap only slots 0..<n exist.
//   * Each item box shows its picture per `fit` (contain: aspect fit,
//     letterboxed; cover: aspect fill, centre-cropped; stretch; none:
//     unscaled, centred), the scaled side rounded to the nearest pixel, an odd
//     leftover going right/below; background everywhere else.
//   * Dots: `size` wide, `spacing` apart, centred along the edge `margin`
//     from it; the current page is the page nearest the offset, ties forward.
//   * rotation R turns the laid-out picture R degrees clockwise onto the panel.
//   * Portrait pairs (`[images] pair_portraits = true`, issue 28), only where
//     the item box is wider than tall: the items are pages. A picture is a
//     portrait when its upright size (EXIF orientation applied) is taller
//     than wide. In the listed order, a portrait and the portrait right after
//     it share a page, pairing from the first of each run of consecutive
//     portraits (a run of three: a pair, then a single); a portrait with no
//     portrait partner, and every other picture, is a page alone. The last
//     picture and the first never pair (the wrap seam is no neighbourhood).
//     The count of items and of dots is the count of pages.
//   * A pair's page in a W × H item box: gap = `[carousel] spacing` rounded
//     to the nearest pixel (halves away from zero); the left half is
//     floor((W − gap) / 2) × H at x = 0, then gap pixels of background, then
//     the right half, the rest of the width (W − gap − left) × H. The first
//     picture goes left, the second right, each fitted into its half by
//     `fit` exactly as a picture alone is fitted into an item box (and cut to
//     its half, as a picture is cut to its box).

import Foundation
import Testing

// MARK: - Source pictures

/// What a test image shows: a 2 × 2 grid of flat colours (after EXIF
/// orientation), so that the centre of every quadrant is an exact probe
/// whatever filter scales it, and any mirror, turn or shift shows.
struct Picture: Sendable {
    var path: String
    /// Upright size.
    var width: Int
    var height: Int
    /// Upright quadrant colours: top-left, top-right, bottom-left, bottom-right.
    var quadrants: [RGB]
    /// Per-channel tolerance for exact probes: 0 for PNG, more for JPEG's loss.
    var tolerance: Int
    /// Whether ImageMagick must apply the file's EXIF orientation (-auto-orient).
    var autoOrient: Bool
    /// Quadrant opacities (0-255), same order; a translucent quadrant shows
    /// its colour over the background.
    var alphas: [Int] = [255, 255, 255, 255]
    /// What ImageMagick reads for the reference, when not `path` (it does
    /// not apply the EXIF orientation of PNG and WebP files).
    var referencePath: String? = nil
}

enum PictureSpec: Sendable {
    /// A PNG of `width × height` (even) in the colours of `Palette.sets[palette]`.
    case quadrants(width: Int, height: Int, palette: Int)
    /// The same as a JPEG (quality 95).
    case jpegQuadrants(width: Int, height: Int, palette: Int)
    /// A PNG with an alpha channel, quadrant opacities `alphas`.
    case translucent(width: Int, height: Int, palette: Int, alphas: [Int])
    /// The committed EXIF fixture `orientation-N.jpg`: 64 × 32 stored quadrants
    /// red, green / blue, yellow, tagged with orientation N.
    case exif(Int)
    /// `orientation-N.png` (eXIf chunk) or `.webp` (EXIF chunk), the same
    /// picture; ImageMagick draws the reference from `upright-N.png`, its own
    /// -auto-orient of the JPEG.
    case exifIn(String, Int)
    /// A committed fixture of red/green/blue/yellow quadrants: `large.jpg`
    /// (800x600), `large-rotated.jpg` (the same, tagged orientation 6), `large.webp`.
    case large(String)
}

enum Palette {
    /// Distinct, saturated colours: none is the black background, the white
    /// dots or close to another set's, so a probe names the item it sees.
    static let sets: [[RGB]] = [
        ["#D03030", "#30A050", "#3050D0", "#D0B030"],
        ["#8040C0", "#40C0C0", "#C06020", "#607010"],
        ["#E070A0", "#207020", "#602080", "#80D040"],
        ["#20A0E0", "#A02060", "#E0A060", "#106060"],
        ["#C0C040", "#4040A0", "#A06040", "#40E090"],
        ["#F05010", "#1010A0", "#90B0F0", "#703030"],
    ].map { $0.map { RGB(hex: $0) } }
}

/// The committed imaging fixtures (made with ImageMagick and exiftool by scripts/make-fixtures.sh).
enum ImagingFixtures {
    static let directory: String = {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(2)
        return parts.joined(separator: "/") + "/CarouselImagingTests/Fixtures"
    }()

    static func path(_ name: String) -> String { directory + "/" + name }
}

/// EXIF orientation (TIFF tag 274) on a 2 × 2 grid, from the tag's
/// definition: where each stored quadrant ends up in the upright picture.
func uprightQuadrants(_ stored: [RGB], orientation: Int) -> [RGB] {
    let (tl, tr, bl, br) = (stored[0], stored[1], stored[2], stored[3])
    switch orientation {
    case 1: return [tl, tr, bl, br]  // as stored
    case 2: return [tr, tl, br, bl]  // mirrored left-right
    case 3: return [br, bl, tr, tl]  // turned 180°
    case 4: return [bl, br, tl, tr]  // mirrored top-bottom
    case 5: return [tl, bl, tr, br]  // transposed
    case 6: return [bl, tl, br, tr]  // stored turned 90° anticlockwise: show it turned 90° clockwise
    case 7: return [br, tr, bl, tl]  // transversed
    case 8: return [tr, br, tl, bl]  // turned 270° clockwise
    default: fatalError("orientation \(orientation)")
    }
}

extension PictureSpec {
    /// Writes the picture (or points at the fixture) and describes it.
    func make(in scratch: Scratch, name: String) throws -> Picture {
        switch self {
        case let .quadrants(w, h, palette), let .jpegQuadrants(w, h, palette), let .translucent(w, h, palette, _):
            let c = Palette.sets[palette]
            var alphas = [255, 255, 255, 255]
            if case let .translucent(_, _, _, a) = self { alphas = a }
            let jpeg: Bool
            if case .jpegQuadrants = self { jpeg = true } else { jpeg = false }
            let path = scratch.file(name + (jpeg ? ".jpg" : ".png"))
            let q = "\(w / 2)x\(h / 2)"
            func tile(_ i: Int) -> String { "xc:rgba(\(c[i].r),\(c[i].g),\(c[i].b),\(Double(alphas[i]) / 255))" }
            let output = jpeg ? ["-quality", "95", path]
                : ["-define", "png:color-type=\(alphas == [255, 255, 255, 255] ? 2 : 6)", path]
            try Tools.magick([
                "(", "-size", q, tile(0), "-size", q, tile(1), "+append", ")",
                "(", "-size", q, tile(2), "-size", q, tile(3), "+append", ")",
                "-append",
            ] + output)
            // JPEG at quality 95 keeps the middle of a flat area within a few levels.
            return Picture(path: path, width: w, height: h, quadrants: c, tolerance: jpeg ? 8 : 0, autoOrient: false,
                           alphas: alphas)
        case let .exif(n):
            let stored = [RGB(255, 0, 0), RGB(0, 255, 0), RGB(0, 0, 255), RGB(255, 255, 0)]
            // JPEG's loss at a quadrant's centre stays within a few levels
            // (the imaging tests measure 4 on the same files).
            return Picture(path: ImagingFixtures.path("orientation-\(n).jpg"),
                           width: n >= 5 ? 32 : 64, height: n >= 5 ? 64 : 32,
                           quadrants: uprightQuadrants(stored, orientation: n), tolerance: 8, autoOrient: true)
        case let .exifIn(ext, n):
            let stored = [RGB(255, 0, 0), RGB(0, 255, 0), RGB(0, 0, 255), RGB(255, 255, 0)]
            // Lossy WebP's chroma is coarser than JPEG's at 4:4:4.
            return Picture(path: ImagingFixtures.path("orientation-\(n).\(ext)"),
                           width: n >= 5 ? 32 : 64, height: n >= 5 ? 64 : 32,
                           quadrants: uprightQuadrants(stored, orientation: n), tolerance: ext == "webp" ? 16 : 0,
                           autoOrient: false, referencePath: ImagingFixtures.path("upright-\(n).png"))
        case let .large(name):
            let stored = [RGB(255, 0, 0), RGB(0, 255, 0), RGB(0, 0, 255), RGB(255, 255, 0)]
            let rotated = name == "large-rotated.jpg"
            return Picture(path: ImagingFixtures.path(name), width: rotated ? 600 : 800, height: rotated ? 800 : 600,
                           quadrants: rotated ? uprightQuadrants(stored, orientation: 6) : stored,
                           tolerance: name.hasSuffix(".webp") ? 16 : 8, autoOrient: name.hasSuffix(".jpg"),
                           referencePath: name.hasSuffix(".webp") ? ImagingFixtures.path("large.jpg") : nil)
        }
    }
}

// MARK: - Scenes

struct IndicatorSpec: Sendable {
    var enabled = true
    var position = "bottom"
    var size = 10.0
    var spacing = 12.0
    var margin = 24.0
    var hidesForSinglePage = true
    var color = RGB(255, 255, 255)
    var alpha = 0x80
    var currentColor = RGB(255, 255, 255)
    var currentAlpha = 0xFF
}

/// One configuration of the carousel, written as an INI file for the binary
/// and laid out by `Layout` for the reference.
struct Scene: Sendable {
    var panelWidth = 320
    var panelHeight = 200
    var rotation = 0
    var itemSize = 1.0
    var spacing = 0.0
    var alignment = "center"
    var vertical = false
    var wrap = true
    var fit = "contain"
    var background = RGB(0, 0, 0)
    var indicator = IndicatorSpec()
    /// `[images] pair_portraits`.
    var pairPortraits = false
    var pictures: [PictureSpec] = [
        .quadrants(width: 160, height: 100, palette: 0),
        .quadrants(width: 160, height: 100, palette: 1),
        .quadrants(width: 160, height: 100, palette: 2),
    ]

    var size: String { "\(panelWidth)x\(panelHeight)" }

    /// The INI text. `images` is either a folder (`path`) or a file list.
    func ini(files: [String]? = nil, folder: String? = nil) -> String {
        func hexAlpha(_ c: RGB, _ a: Int) -> String { c.hex + String(format: "%02X", a) }
        var s = """
        [display]
        rotation = \(rotation)
        background = \(background.hex)

        [carousel]
        wrap = \(wrap)
        vertical = \(vertical)
        alignment = \(alignment)
        item_size = \(itemSize)
        spacing = \(spacing)

        [autoplay]
        enabled = false

        [images]
        fit = \(fit)
        pair_portraits = \(pairPortraits)

        """
        if let folder { s += "path = \(folder)\n" }
        if let files { s += "files = \(files.joined(separator: ", "))\n" }
        s += """

        [indicator]
        enabled = \(indicator.enabled)
        position = \(indicator.position)
        size = \(indicator.size)
        spacing = \(indicator.spacing)
        margin = \(indicator.margin)
        hides_for_single_page = \(indicator.hidesForSinglePage)
        color = \(hexAlpha(indicator.color, indicator.alpha))
        current_color = \(hexAlpha(indicator.currentColor, indicator.currentAlpha))

        """
        return s
    }

    /// The laid-out (logical) size: rotation 90 and 270 swap the panel's sides.
    var logicalWidth: Int { rotation % 180 == 0 ? panelWidth : panelHeight }
    var logicalHeight: Int { rotation % 180 == 0 ? panelHeight : panelWidth }
}

// MARK: - Layout (SPEC.md section 2, re-implemented)

struct Rect: CustomStringConvertible {
    var x: Int, y: Int, width: Int, height: Int
    var maxX: Int { x + width }
    var maxY: Int { y + height }
    func contains(_ px: Int, _ py: Int) -> Bool { px >= x && px < maxX && py >= y && py < maxY }
    var description: String { "\(width)x\(height)\(String(format: "%+d%+d", x, y))" }
}

/// Where `fit` puts an `image`-sized picture in a `box`, in box pixels.
func fitPlacement(image: (w: Int, h: Int), box: (w: Int, h: Int), fit: String) -> Rect {
    func rounded(_ a: Int, _ b: Int, _ c: Int) -> Int { max(1, Int((Double(a) * Double(b) / Double(c)).rounded())) }
    var w = image.w, h = image.h
    switch fit {
    case "stretch":
        (w, h) = box
    case "none":
        break
    case "contain", "cover":
        // Aspect ratios compared exactly, in integers.
        let wider = image.w * box.h > box.w * image.h
        if wider == (fit == "contain") {
            (w, h) = (box.w, rounded(image.h, box.w, image.w))
        } else {
            (w, h) = (rounded(image.w, box.h, image.h), box.h)
        }
    default:
        fatalError("fit \(fit)")
    }
    // Centred; an odd leftover goes right/below (floor division, also when negative).
    func half(_ v: Int) -> Int { Int((Double(v) / 2).rounded(.down)) }
    return Rect(x: half(box.w - w), y: half(box.h - h), width: w, height: h)
}

struct Layout {
    let width: Int, height: Int  // logical frame
    let vertical: Bool
    let axis: Double, cross: Double
    let extent: Double  // E
    let itemPixels: Int  // round(E)
    let lead: Double
    let pitch: Double

    init(_ s: Scene) {
        width = s.logicalWidth
        height = s.logicalHeight
        vertical = s.vertical
        axis = Double(vertical ? height : width)
        cross = Double(vertical ? width : height)
        extent = s.itemSize <= 1 ? s.itemSize * axis : s.itemSize
        itemPixels = Int(extent.rounded())
        pitch = extent + s.spacing
        lead = s.alignment == "center" ? (axis - extent) / 2 : 0
    }

    /// Item boxes drawn at `offset`: which item, and its rectangle in the logical frame.
    func boxes(offset: Double, count: Int, wrap: Bool) -> [(item: Int, rect: Rect)] {
        guard count > 0 else { return [] }
        var result: [(Int, Rect)] = []
        let first = Int((offset - (lead + extent) / pitch).rounded(.down)) - 2
        let last = Int((offset + (axis - lead) / pitch).rounded(.up)) + 2
        for k in first...last {
            let start = Int((lead + (Double(k) - offset) * pitch + 0.5).rounded(.down))
            guard start < Int(axis), start + itemPixels > 0 else { continue }
            let item: Int
            if wrap {
                item = ((k % count) + count) % count
            } else {
                guard (0..<count).contains(k) else { continue }
                item = k
            }
            let rect = vertical ? Rect(x: 0, y: start, width: width, height: itemPixels)
                : Rect(x: start, y: 0, width: itemPixels, height: height)
            result.append((item, rect))
        }
        return result
    }

    var itemBox: (w: Int, h: Int) { vertical ? (width, itemPixels) : (itemPixels, height) }
}

/// The pages of `pictures` (indices into it, in order): one picture each,
/// or with portrait pairs two consecutive portraits sharing one (the rule
/// in the header).
func pages(_ s: Scene, pictures: [Picture]) -> [[Int]] {
    let box = Layout(s).itemBox
    guard s.pairPortraits, box.w > box.h else { return pictures.indices.map { [$0] } }
    func portrait(_ i: Int) -> Bool { pictures[i].height > pictures[i].width }
    var result: [[Int]] = []
    var i = 0
    while i < pictures.count {
        if portrait(i), i + 1 < pictures.count, portrait(i + 1) {
            result.append([i, i + 1])
            i += 2
        } else {
            result.append([i])
            i += 1
        }
    }
    return result
}

/// Where in a `box` each picture of a page of `count` pictures is fitted:
/// the whole box for one, the two halves of the rule in the header for a pair.
func pageAreas(count: Int, box: (w: Int, h: Int), spacing: Double) -> [Rect] {
    guard count == 2 else { return [Rect(x: 0, y: 0, width: box.w, height: box.h)] }
    let gap = max(0, Int(spacing.rounded()))
    precondition(box.w - gap >= 2, "a scene whose pair halves would vanish")
    let left = (box.w - gap) / 2
    return [Rect(x: 0, y: 0, width: left, height: box.h),
            Rect(x: left + gap, y: 0, width: box.w - gap - left, height: box.h)]
}

struct Dot {
    var x: Double, y: Double  // centre, continuous coordinates (pixel i covers [i, i+1))
    var current: Bool
}

/// The page dots at `offset` for `count` single-item pages, or none.
func dots(_ s: Scene, offset: Double, count: Int) -> [Dot] {
    let ind = s.indicator
    guard ind.enabled, count > 0, !(count == 1 && ind.hidesForSinglePage) else { return [] }
    let w = Double(s.logicalWidth), h = Double(s.logicalHeight)
    let horizontal = ind.position == "bottom" || ind.position == "top"
    let along = horizontal ? w : h
    let length = Double(count) * ind.size + Double(count - 1) * ind.spacing
    let first = (along - length) / 2 + ind.size / 2
    let across: Double
    switch ind.position {
    case "bottom": across = h - ind.margin - ind.size / 2
    case "right": across = w - ind.margin - ind.size / 2
    default: across = ind.margin + ind.size / 2
    }
    // Nearest page, ties forward; wrapped into 0..<count, or clamped without wrap.
    var page = Int((offset + 0.5).rounded(.down))
    page = s.wrap ? ((page % count) + count) % count : min(max(page, 0), count - 1)
    return (0..<count).map { i in
        let a = first + Double(i) * (ind.size + ind.spacing)
        return Dot(x: horizontal ? a : across, y: horizontal ? across : a, current: i == page)
    }
}

/// Logical pixel (x, y) on the panel, for `rotation` degrees clockwise.
func panelPoint(_ x: Int, _ y: Int, _ s: Scene) -> (x: Int, y: Int) {
    let lw = s.logicalWidth, lh = s.logicalHeight
    switch s.rotation {
    case 90: return (lh - 1 - y, x)
    case 180: return (lw - 1 - x, lh - 1 - y)
    case 270: return (y, lw - 1 - x)
    default: return (x, y)
    }
}

// MARK: - The expected frame

/// A pixel whose value is known exactly from the layout alone.
struct Probe {
    var x: Int, y: Int  // panel coordinates
    var expected: RGB
    var tolerance: Int
    var what: String
}

struct Reference {
    var image: RGBImage
    var png: String
    var probes: [Probe]
}

/// Draws the expected panel picture with ImageMagick and lists exact probes.
func reference(_ s: Scene, pictures: [Picture], offset: Double, png: String) throws -> Reference {
    let layout = Layout(s)
    let pageList = pages(s, pictures: pictures)
    let boxes = layout.boxes(offset: offset, count: pageList.count, wrap: s.wrap)
    let dotList = dots(s, offset: offset, count: pageList.count)
    let box = layout.itemBox
    func geometry(_ x: Int, _ y: Int) -> String { String(format: "%+d%+d", x, y) }
    /// What page `page` shows: each picture (its index) and the part of the item box it is fitted into.
    func parts(_ page: Int) -> [(picture: Int, area: Rect)] {
        Array(zip(pageList[page], pageAreas(count: pageList[page].count, box: box, spacing: s.spacing)))
    }

    var args = ["-size", "\(layout.width)x\(layout.height)", "xc:\(s.background.hex)"]
    for (page, rect) in boxes {
        args += ["(", "-size", "\(box.w)x\(box.h)", "xc:\(s.background.hex)"]
        for (picture, area) in parts(page) {
            let p = pictures[picture]
            let place = fitPlacement(image: (p.width, p.height), box: (area.width, area.height), fit: s.fit)
            args += ["(", "-size", "\(area.width)x\(area.height)", "xc:\(s.background.hex)", "(", p.referencePath ?? p.path]
            if p.autoOrient { args += ["-auto-orient"] }
            if place.width != p.width || place.height != p.height {
                // A tent filter: bilinear for enlargements, a smooth average for
                // reductions; only the few pixels at colour edges depend on it.
                args += ["-filter", "Triangle", "-resize", "\(place.width)x\(place.height)!"]
            }
            args += [")", "-geometry", geometry(place.x, place.y), "-composite", ")",
                     "-geometry", geometry(area.x, area.y), "-composite"]
        }
        args += [")", "-geometry", geometry(rect.x, rect.y), "-composite"]
    }
    for d in dotList {
        let (c, a) = d.current ? (s.indicator.currentColor, s.indicator.currentAlpha) : (s.indicator.color, s.indicator.alpha)
        // ImageMagick puts pixel centres on integer coordinates and fills a
        // circle up to the pixels whose centres lie on it: shift by half a
        // pixel and draw half a pixel smaller to cover what a disc of
        // diameter `size` covers.
        let r = s.indicator.size / 2 - 0.5
        args += ["-fill", "rgba(\(c.r),\(c.g),\(c.b),\(Double(a) / 255))",
                 "-draw", String(format: "circle %.3f,%.3f %.3f,%.3f", d.x - 0.5, d.y - 0.5, d.x - 0.5 + r, d.y - 0.5)]
    }
    if s.rotation != 0 { args += ["-rotate", "\(s.rotation)"] }
    args += ["-write", png, "-depth", "8", "ppm:-"]
    let image = try RGBImage(ppm: [UInt8](try Tools.magick(args)))

    // Exact probes from the layout alone: an 8-pixel grid over the frame,
    // plus both sides of every item box's ends and of every picture's edges
    // (letterbox), which a one-pixel misplacement changes.
    var probes: [Probe] = []
    let dotReach = s.indicator.size / 2 + 3
    func nearDot(_ x: Int, _ y: Int) -> Bool {
        dotList.contains { d in
            let dx = Double(x) + 0.5 - d.x, dy = Double(y) + 0.5 - d.y
            return (dx * dx + dy * dy).squareRoot() < dotReach
        }
    }
    /// What the frame shows at logical (x, y) before the dots, if known exactly.
    func known(_ x: Int, _ y: Int) -> (RGB, Int, String)? {
        guard let (page, rect) = boxes.first(where: { $0.rect.contains(x, y) }) else {
            return (s.background, 0, "background outside items")
        }
        guard let (item, area) = parts(page).first(where: { $0.area.contains(x - rect.x, y - rect.y) }) else {
            return (s.background, 0, "gap between the pair on page \(page)")
        }
        let p = pictures[item]
        let place = fitPlacement(image: (p.width, p.height), box: (area.width, area.height), fit: s.fit)
        let bx = x - rect.x - area.x, by = y - rect.y - area.y
        if !place.contains(bx, by) { return (s.background, 0, "letterbox of item \(item)") }
        // Inside the picture: a quadrant. Scaling filters blend across the
        // colour edges between quadrants, so keep 3 pixels from those; at the
        // picture's outer edges the edge pixels repeat (no blending with the
        // letterbox), so a PNG's colour is exact right up to its last pixel.
        // JPEG's loss is larger along its edges: keep 2 pixels there.
        let fx = Double(bx - place.x) + 0.5, fy = Double(by - place.y) + 0.5
        let midX = Double(place.width) / 2, midY = Double(place.height) / 2
        let m = 3.0, outer = p.tolerance > 0 ? 2.0 : 0.0
        guard abs(fx - midX) >= m, abs(fy - midY) >= m,
              fx >= outer, Double(place.width) - fx >= outer, fy >= outer, Double(place.height) - fy >= outer
        else { return nil }
        let q = (fy < midY ? 0 : 2) + (fx < midX ? 0 : 1)
        if p.alphas[q] < 255 {
            // Straight alpha over the background; one level of rounding either way.
            return (s.background.under(p.quadrants[q], alpha: Double(p.alphas[q]) / 255), p.tolerance + 1,
                    "item \(item) quadrant \(q) (opacity \(p.alphas[q]))")
        }
        return (p.quadrants[q], p.tolerance, "item \(item) quadrant \(q)")
    }
    var points: [(Int, Int)] = []
    for y in stride(from: 3, to: layout.height, by: 8) {
        for x in stride(from: 3, to: layout.width, by: 8) { points.append((x, y)) }
    }
    for (page, rect) in boxes {
        for (item, area) in parts(page) {
            let p = pictures[item]
            var place = fitPlacement(image: (p.width, p.height), box: (area.width, area.height), fit: s.fit)
            place.x += area.x
            place.y += area.y
            // Box-relative lines across x (at the rows of the quadrant centres) and across y.
            let rows = [place.y + place.height / 4, place.y + 3 * place.height / 4]
            let columns = [place.x + place.width / 4, place.x + 3 * place.width / 4]
            var xs = [place.x - 1, place.x, place.maxX - 1, place.maxX]
            var ys = [place.y - 1, place.y, place.maxY - 1, place.maxY]
            if layout.vertical { ys += [-1, 0, box.h - 1, box.h] } else { xs += [-1, 0, box.w - 1, box.w] }
            // Both sides of each half's ends: the gap between a pair.
            if pageList[page].count > 1 { xs += [area.x - 1, area.x, area.maxX - 1, area.maxX] }
            for bx in xs { for by in rows { points.append((rect.x + bx, rect.y + min(max(by, area.y), area.maxY - 1))) } }
            for by in ys { for bx in columns { points.append((rect.x + min(max(bx, area.x), area.maxX - 1), rect.y + by)) } }
        }
    }
    var seen = Set<Int>()
    for (x, y) in points where x >= 0 && x < layout.width && y >= 0 && y < layout.height && !nearDot(x, y) {
        guard seen.insert(y * layout.width + x).inserted, let (color, tolerance, what) = known(x, y) else { continue }
        let pp = panelPoint(x, y, s)
        probes.append(Probe(x: pp.x, y: pp.y, expected: color, tolerance: tolerance,
                            what: "\(what) at logical (\(x), \(y))"))
    }
    // Dot centres: fully covered, so the dot's colour at its opacity over
    // what is under it; the current page's dot is the one that differs.
    for (i, d) in dotList.enumerated() {
        let x = Int(d.x.rounded(.down)), y = Int(d.y.rounded(.down))
        guard let (under, tolerance, what) = known(x, y) else { continue }
        let (c, a) = d.current ? (s.indicator.currentColor, s.indicator.currentAlpha) : (s.indicator.color, s.indicator.alpha)
        let pp = panelPoint(x, y, s)
        probes.append(Probe(x: pp.x, y: pp.y, expected: under.under(c, alpha: Double(a) / 255),
                            tolerance: tolerance + 1,
                            what: "\(d.current ? "current" : "other") dot \(i) over \(what)"))
    }
    return Reference(image: image, png: png, probes: probes)
}

// MARK: - Running the renderer and comparing

/// PSNR a frame must reach against its ImageMagick reference.
///
/// Why 30 dB: flat areas, background, gaps and letterbox match exactly (the
/// probes check that), so the whole difference sits on the colour edges of
/// the test pictures and on the dots' anti-aliased rims, where pixman's
/// bilinear/box filters and ImageMagick's tent filter and circle rasteriser
/// legitimately disagree by a pixel's worth of blending. Measured on correct
/// frames: 42-58 dB for PNG sources (infinite for flat ones), 38.6 dB at
/// worst for large JPEG/WebP sources reduced 4-8x. Wrong frames measured
/// against a correct reference (`ComparisonTests`): items shifted 3 pixels
/// 28.5 dB, two items swapped 13.5 dB, an item mirrored 9.0 dB, an item
/// missing 8.8 dB. A 1-pixel shift stays above 30 dB: the probes on both
/// sides of every item and picture edge catch that instead.
let minimumPSNR = 30.0

/// `carouseld render` at `offset`; the PNG it wrote, read back by ImageMagick.
func render(_ s: Scene, iniPath: String, offset: Double, out: String) throws -> (image: RGBImage, run: Tools.Result) {
    let binary = try Tools.requireCarouseld()
    // `--offset=X`: a negative offset must not look like an option.
    let run = try Tools.run(binary, ["render", "--config", iniPath, "--size", s.size,
                                     "--offset=\(offset)", "--out", out])
    guard run.status == 0 else {
        throw ToolError(message: "carouseld render --offset=\(offset) exited \(run.status): \(run.stderr)")
    }
    return (try RGBImage(file: out), run)
}

/// Checks `actual` against `ref`: size, PSNR and every exact probe. Keeps the
/// scratch folder (and names it) when something is off.
func expectMatch(_ actual: RGBImage, _ ref: Reference, _ label: String, scratch: Scratch,
                 minimum: Double = minimumPSNR, sourceLocation: SourceLocation = #_sourceLocation) {
    guard actual.width == ref.image.width, actual.height == ref.image.height else {
        Issue.record("\(label): frame is \(actual.width)x\(actual.height), expected \(ref.image.width)x\(ref.image.height)",
                     sourceLocation: sourceLocation)
        return
    }
    var ok = true
    let psnr = actual.psnr(against: ref.image)
    if ProcessInfo.processInfo.environment["CAROUSEL_RENDER_REPORT"] != nil {
        print("PSNR \(String(format: "%.2f", psnr)) dB, \(ref.probes.count) probes: \(label)")
    }
    if psnr < minimum {
        ok = false
        Issue.record("\(label): PSNR \(String(format: "%.1f", psnr)) dB against the reference, below \(minimum) dB",
                     sourceLocation: sourceLocation)
    }
    var failed: [String] = []
    for p in ref.probes {
        let got = actual.pixel(p.x, p.y)
        if got.distance(to: p.expected) > p.tolerance {
            failed.append("(\(p.x), \(p.y)) \(p.what): got \(got), expected \(p.expected) ± \(p.tolerance)")
        }
    }
    if !failed.isEmpty {
        ok = false
        let examples = failed.prefix(6).joined(separator: "\n  ")
        Issue.record("\(label): \(failed.count) of \(ref.probes.count) exact probes differ, e.g.\n  \(examples)",
                     sourceLocation: sourceLocation)
    }
    if !ok {
        scratch.keep()
        Issue.record("\(label): frames kept in \(scratch.path) (reference: \(ref.png))", sourceLocation: sourceLocation)
    }
}

/// Renders `scene` at each offset and compares with its reference. The
/// pictures are given as a `files` list, or with `folder` copied into a
/// folder (`path`) under names that sort in the scene's order.
func checkScene(_ scene: Scene, offsets: [Double], label: String, folder: Bool = false,
                sourceLocation: SourceLocation = #_sourceLocation) throws {
    let scratch = try Scratch("frame")
    var pictures = try scene.pictures.enumerated().map { i, spec in
        try spec.make(in: scratch, name: "item\(i)")
    }
    let ini: String
    if folder {
        let album = scratch.file("album")
        try FileManager.default.createDirectory(atPath: album, withIntermediateDirectories: true)
        for i in pictures.indices {
            let copy = album + String(format: "/%02d-", i) + (pictures[i].path as NSString).lastPathComponent
            try FileManager.default.copyItem(atPath: pictures[i].path, toPath: copy)
            pictures[i].path = copy
        }
        ini = try scratch.write("carouseld.ini", scene.ini(folder: album))
    } else {
        ini = try scratch.write("carouseld.ini", scene.ini(files: pictures.map(\.path)))
    }
    for offset in offsets {
        let tag = String(format: "%g", offset)
        let (actual, _) = try render(scene, iniPath: ini, offset: offset, out: scratch.file("render-\(tag).png"))
        let ref = try reference(scene, pictures: pictures, offset: offset, png: scratch.file("reference-\(tag).png"))
        #expect(ref.probes.count > 20, "\(label): too few probes to mean anything", sourceLocation: sourceLocation)
        expectMatch(actual, ref, "\(label) at offset \(tag)", scratch: scratch, sourceLocation: sourceLocation)
    }
}
