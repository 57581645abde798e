import CarouselConfig
import CarouselImaging
import Testing

/// The refusal line's "raise max_pixels to N" never names a value the key refuses.
@Test("[images] max_pixels ends where the decoder's refusal line says it ends")
func maxPixelsCeilingIsTheKeys() throws {
    let key = try #require(Schema.keys.first { $0.section == "images" && $0.name == "max_pixels" })
    #expect(key.domain == .integer(1_000_000...ImageDecoder.maxPixelsCeiling))
    #expect(ImageDecoder.defaultMaxPixels == Int(key.defaultValue))
}
