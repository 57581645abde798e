// The mode text (`ModeText`, one grammar) has two readers: the
// configuration room's `ModeRequest` ([display] mode, render --size,
// --display offscreen:) and the display room's `DisplayModeRequest`
// (drm-test's modes), which cannot see the other. They take the same texts.

import CarouselConfig
import CarouselDaemon
import CarouselDisplay
import Testing

@Suite("Mode texts")
struct ModeTextTests {
    @Test("the display room reads a mode text as [display] mode does")
    func sameGrammar() {
        let texts = ["1920x1080", "1920x1080@60", "1x1", "16384x16384@1000", "16385x100", "100x16385", "0x600",
                     "800x0", "-1x600", "800x600@0", "800x600@1001", "800x600@", "800x600@60@60", "x600", "800x",
                     "800X600", "800x600x1", "", "@60", " 800x600", "+800x600", "800x600@+60", "800x600@60.0"]
        for text in texts {
            #expect(DisplayModeRequest(text) == ModeRequest(text)?.displayModeRequest, "\(text)")
        }
    }
}
