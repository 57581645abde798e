// Face regions from XMP (issue 47): MWG's mwg-rs:RegionInfo in JPEG, PNG,
// WebP and HEIF as exiftool writes it, Microsoft's MP:RegionInfo, the
// forms other writers use, what is left out, damaged files; and the crop
// `fit = cover` chooses by them (`FaceFraming`, `ImageScaler.placement`).

import Testing
@testable import CarouselImaging
import CarouselCore

@Suite("Face regions: XMP and the crops they choose") struct FaceRegionTests {
    func close(_ a: FaceRegion, _ b: FaceRegion) -> Bool {
        abs(a.x - b.x) < 1e-9 && abs(a.y - b.y) < 1e-9 && abs(a.width - b.width) < 1e-9 && abs(a.height - b.height) < 1e-9
    }

    /// The fixtures' face: x 2 to 33 and y 40 to 79 of a 240x120 picture
    /// (exiftool's MWG centre 0.075,0.5 and size 0.1333x0.3333).
    func expectTheFixtureFace(_ faces: [FaceRegion], _ label: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(faces.count == 1, "\(label): \(faces)", sourceLocation: sourceLocation)
        guard let f = faces.first else { return }
        #expect(abs(f.x * 240 - 2) < 0.5 && abs(f.maxX * 240 - 34) < 0.5, "\(label): \(f)", sourceLocation: sourceLocation)
        #expect(abs(f.y * 120 - 40) < 0.5 && abs(f.maxY * 120 - 80) < 0.5, "\(label): \(f)", sourceLocation: sourceLocation)
    }

    @Test(arguments: ["faces-mwg.jpg", "faces-mwg.png", "faces-mwg.webp", "faces-mwg.heic", "faces-mp.jpg"])
    func theFaceInEveryFormat(name: String) throws {
        let m = ImageMetadata.read(path: Fixtures.path(name))
        expectTheFixtureFace(m.faces, name)
        // The same from the bytes (the fuzz target's way in).
        let bytes = try Fixtures.bytes(name)
        expectTheFixtureFace(bytes.withUnsafeBytes { ImageMetadata.parse($0) }.faces, name + " (bytes)")
        if name.hasPrefix("faces-mwg") { #expect(m.description == "Ann at the window", "\(name)") }
    }

    @Test func noRegionsNoFaces() {
        #expect(ImageMetadata.read(path: Fixtures.path("faces-none.jpg")).faces.isEmpty)
        #expect(ImageMetadata.read(path: Fixtures.path("meta-xmp.jpg")).faces.isEmpty)
        #expect(ImageMetadata.read(path: Fixtures.path("quadrants.heic")).faces.isEmpty)
    }

    @Test func attributeFormsAndWhatIsLeftOut() {
        // Lightroom's attribute form, with a second face and a region of another type.
        let xmp = """
            <x:xmpmeta><rdf:RDF><rdf:Description>
             <mwg-rs:Regions rdf:parseType="Resource"><mwg-rs:RegionList><rdf:Bag>
              <rdf:li><rdf:Description mwg-rs:Name="Ann" mwg-rs:Type="Face">
                <mwg-rs:Area stArea:x="0.25" stArea:y="0.5" stArea:w="0.1" stArea:h="0.2" stArea:unit="normalized"/>
              </rdf:Description></rdf:li>
              <rdf:li><rdf:Description mwg-rs:Type='Pet'><mwg-rs:Area stArea:x='0.75' stArea:y='0.5' stArea:w='0.1' stArea:h='0.2'/></rdf:Description></rdf:li>
              <rdf:li><rdf:Description mwg-rs:Type="Focus"><mwg-rs:Area stArea:x="0.5" stArea:y="0.5" stArea:w="0.1" stArea:h="0.1"/></rdf:Description></rdf:li>
              <rdf:li><rdf:Description mwg-rs:Type="Face"><mwg-rs:Area stArea:x="10" stArea:y="20" stArea:w="3" stArea:h="4" stArea:unit="pixel"/></rdf:Description></rdf:li>
              <rdf:li><rdf:Description mwg-rs:Type="Face"><mwg-rs:Area stArea:x="nan" stArea:y="0.5" stArea:w="0.1" stArea:h="0.1"/></rdf:Description></rdf:li>
              <rdf:li><rdf:Description mwg-rs:Type="Face"><mwg-rs:Area stArea:x="1.5" stArea:y="0.5" stArea:w="0.2" stArea:h="0.1"/></rdf:Description></rdf:li>
              <rdf:li><rdf:Description mwg-rs:Type="Face"><mwg-rs:Area stArea:x="0.98" stArea:y="0.02" stArea:w="0.1" stArea:h="0.1"/></rdf:Description></rdf:li>
             </rdf:Bag></mwg-rs:RegionList></mwg-rs:Regions>
            </rdf:Description></rdf:RDF></x:xmpmeta>
            """
        let faces = FaceRegions.parse(xmp)
        #expect(faces.count == 3, "\(faces)")
        #expect(faces.first.map { close($0, FaceRegion(x: 0.2, y: 0.4, width: 0.1, height: 0.2)) } == true)
        #expect(faces.dropFirst().first.map { abs($0.x - 0.7) < 1e-9 } == true)
        // A region over the corner is clamped to the picture.
        #expect(faces.last.map { abs($0.x - 0.93) < 1e-9 && $0.maxX == 1 && $0.y == 0 && abs($0.maxY - 0.07) < 1e-9 } == true)
    }

    @Test func microsoftRegionsAndElementFields() {
        let xmp = """
            <MP:RegionInfo><rdf:Description><MPRI:Regions><rdf:Bag>
             <rdf:li><rdf:Description><MPReg:Rectangle>0.1, 0.2, 0.3, 0.4</MPReg:Rectangle><MPReg:PersonDisplayName>Bo</MPReg:PersonDisplayName></rdf:Description></rdf:li>
             <rdf:li MPReg:Rectangle="0.5,0.5,0.5,0.5"/>
             <rdf:li MPReg:Rectangle="0.5,0.5"/>
            </rdf:Bag></MPRI:Regions></rdf:Description></MP:RegionInfo>
            """
        let faces = FaceRegions.parse(xmp)
        let expected = [FaceRegion(x: 0.1, y: 0.2, width: 0.3, height: 0.4), FaceRegion(x: 0.5, y: 0.5, width: 0.5, height: 0.5)]
        #expect(faces.count == 2 && zip(faces, expected).allSatisfy(close), "\(faces)")
    }

    @Test func manyRegionsAreBounded() {
        let one = #"<rdf:li mwg-rs:Type="Face"><mwg-rs:Area stArea:x="0.5" stArea:y="0.5" stArea:w="0.1" stArea:h="0.1"/></rdf:li>"#
        let xmp = "<mwg-rs:RegionList><rdf:Bag>" + String(repeating: one, count: 1000) + "</rdf:Bag></mwg-rs:RegionList>"
        #expect(FaceRegions.parse(xmp).count == FaceRegions.maximumRegions)
    }

    /// Every truncation and many single-byte damages of the files that carry
    /// regions: never a trap, and never a face the file does not hold.
    @Test(arguments: ["faces-mwg.jpg", "faces-mwg.png", "faces-mwg.webp", "faces-mwg.heic"])
    func damagedFilesGiveNothingOrTheFace(name: String) throws {
        let whole = try Fixtures.bytes(name)
        for length in stride(from: 0, to: whole.count, by: max(1, whole.count / 600)) {
            let faces = Array(whole.prefix(length)).withUnsafeBytes { ImageMetadata.parse($0) }.faces
            #expect(faces.count <= 1)
        }
        var damaged = whole
        for i in stride(from: 0, to: min(whole.count, 4096), by: 7) {
            damaged[i] ^= 0xA5
            _ = damaged.withUnsafeBytes { ImageMetadata.parse($0) }
            damaged[i] = whole[i]
        }
    }

    // MARK: - The crop

    @Test func allFacesKeptMovingTheCropAsLittleAsNeeded() {
        // A face at the left edge of a picture scaled to 320 wide, a window of 80.
        let kept = FaceFraming.keep([(start: 0.00835, end: 0.1417)], length: 320, window: 80)!
        #expect(kept.start < 2.7 && kept.end > 45 && kept.end - kept.start <= 80)
        #expect(FaceFraming.cropStart([(0.00835, 0.1417)], scaled: 320, window: 80) == 0)
        // A face near the centre: the centred crop already holds it.
        #expect(FaceFraming.cropStart([(0.45, 0.55)], scaled: 320, window: 80) == 120)
        // One near the right: the crop moves right just enough (with margins).
        let start = FaceFraming.cropStart([(0.7, 0.75)], scaled: 320, window: 80)
        #expect(start > 120 && Double(start) <= 0.7 * 320 && Double(start + 80) >= 0.75 * 320 + 0.25 * 16 - 1)
    }

    @Test func theLargestGroupWhenNotAllFit() {
        // One face at the left, three at the right: the three are kept.
        let faces: [(Double, Double)] = [(0.02, 0.08), (0.80, 0.84), (0.86, 0.90), (0.92, 0.96)]
        let start = FaceFraming.cropStart(faces, scaled: 1000, window: 300)
        #expect(start <= 800 && start + 300 >= 960)
        // Two groups of two: the larger faces win.
        let pairs: [(Double, Double)] = [(0.0, 0.05), (0.06, 0.11), (0.7, 0.8), (0.85, 0.95)]
        let chosen = FaceFraming.cropStart(pairs, scaled: 1000, window: 300)
        #expect(chosen <= 700 && chosen + 300 >= 950)
        // A face wider than the window: its middle.
        #expect(FaceFraming.cropStart([(0.1, 0.6)], scaled: 1000, window: 200) == 250)
    }

    @Test func placementCropsByFacesOnlyForCover() {
        let picture = PixelSize(width: 240, height: 120), portrait = PixelSize(width: 80, height: 160)
        let face = [FaceRegion(x: 2.0 / 240, y: 40.0 / 120, width: 32.0 / 240, height: 40.0 / 120)]
        #expect(ImageScaler.placement(of: picture, in: portrait, fit: .cover) == PixelRect(x: -120, y: 0, width: 320, height: 160))
        #expect(ImageScaler.placement(of: picture, in: portrait, fit: .cover, faces: face) == PixelRect(x: 0, y: 0, width: 320, height: 160))
        for fit in [FitMode.contain, .stretch, .none, .blur] {
            #expect(ImageScaler.placement(of: picture, in: portrait, fit: fit, faces: face)
                    == ImageScaler.placement(of: picture, in: portrait, fit: fit))
        }
        // Cropped top and bottom: a face at the bottom of a portrait on a landscape box.
        let tall = PixelSize(width: 100, height: 400), wide = PixelSize(width: 200, height: 100)
        let low = [FaceRegion(x: 0.4, y: 0.9, width: 0.2, height: 0.08)]
        let placed = ImageScaler.placement(of: tall, in: wide, fit: .cover, faces: low)
        #expect(placed.height == 800 && placed.y == -(800 - 100))
    }
}
