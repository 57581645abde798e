// Caption metadata from fixtures exiftool wrote (scripts/make-fixtures.sh):
// EXIF DateTimeOriginal and ImageDescription, XMP dc:description in JPEG,
// PNG and WebP; damaged blocks give nothing, never a trap.

import Testing
@testable import CarouselImaging

@Suite("Caption metadata: EXIF and XMP") struct MetadataTests {
    typealias Date = ImageMetadata.DateTaken

    @Test func jpegDateTakenAndImageDescription() {
        let m = ImageMetadata.read(path: Fixtures.path("meta-date.jpg"))
        #expect(m.dateTaken == Date(year: 2024, month: 3, day: 12, hour: 14, minute: 30, second: 0))
        #expect(m.dateTaken?.text == "12 March 2024")
        #expect(m.description == "A day at the lake")
    }

    @Test func xmpDescriptionWinsOverImageDescriptionAndKeepsItsUnicode() {
        let m = ImageMetadata.read(path: Fixtures.path("meta-xmp.jpg"))
        #expect(m.description == "Café au lac, 東京 & שלום")
        #expect(m.dateTaken == nil)
    }

    @Test func pngEXifAndITXt() {
        let m = ImageMetadata.read(path: Fixtures.path("meta-xmp.png"))
        #expect(m.dateTaken?.text == "31 December 2023")
        #expect(m.description == "A PNG <described>", "XML entities decoded")
    }

    @Test func webpExifAndXMPChunks() {
        let m = ImageMetadata.read(path: Fixtures.path("meta-date.webp"))
        #expect(m.dateTaken?.text == "4 July 2021")
        #expect(m.description == "WebP caption")
    }

    @Test func aCameraWithoutAClockSetGivesNoDate() {
        #expect(ImageMetadata.read(path: Fixtures.path("meta-no-date.jpg")).dateTaken == nil)
    }

    @Test func noMetadataIsEmptyNotAnError() {
        #expect(ImageMetadata.read(path: Fixtures.path("quadrants.jpg")) == ImageMetadata())
        #expect(ImageMetadata.read(path: Fixtures.path("text.jpg")) == ImageMetadata())
        #expect(ImageMetadata.read(path: "/nonexistent/photo.jpg") == ImageMetadata())
    }

    @Test func damagedOffsetsGiveNothing() throws {
        // Every prefix of the fixtures and every byte of their EXIF block
        // overwritten: parsing must neither trap nor loop.
        for name in ["meta-date.jpg", "meta-xmp.jpg", "meta-xmp.png", "meta-date.webp"] {
            let bytes = try Fixtures.bytes(name)
            for cut in stride(from: 0, to: bytes.count, by: 7) {
                _ = Array(bytes.prefix(cut)).withUnsafeBytes { ImageMetadata.parse($0) }
            }
            for i in stride(from: 0, to: min(bytes.count, 400), by: 3) {
                var damaged = bytes
                damaged[i] = 0xFF
                _ = damaged.withUnsafeBytes { ImageMetadata.parse($0) }
            }
        }
    }

    @Test func xmpForms() {
        #expect(ImageMetadata.xmpDescription(
            #"<dc:description><rdf:Alt><rdf:li xml:lang="de">Haus</rdf:li><rdf:li xml:lang="x-default">House</rdf:li></rdf:Alt></dc:description>"#)
            == "House")
        #expect(ImageMetadata.xmpDescription(#"<rdf:Description dc:description="Tom &amp; Jerry &#x263A;"/>"#) == "Tom & Jerry ☺")
        #expect(ImageMetadata.xmpDescription("<x:xmpmeta></x:xmpmeta>") == nil)
    }

    @Test func exifDateForms() {
        #expect(Date(exif: "2024:03:12 14:30:00")?.text == "12 March 2024")
        #expect(Date(exif: "2024:13:12 14:30:00") == nil)
        #expect(Date(exif: "    :  :     :  :  ") == nil)
        #expect(Date(exif: "") == nil)
    }
}
