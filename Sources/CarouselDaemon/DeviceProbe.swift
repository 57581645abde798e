import CarouselDRM
import CarouselFBDev
import CarouselInput

/// `carouseld probe`: what carouseld could use, printed readably on
/// standard output without changing anything.
public enum DeviceProbe {
    /// Every DRM card with its connectors and modes, the framebuffer
    /// devices (for `[display] backend = fbdev`), then `seat`'s input devices.
    public static func printReport(seat: String) {
        print("Displays (DRM/KMS):")
        print(DRMProbe.report(), terminator: "")
        let framebuffers = FBDevBackend.probe()
        print("Framebuffers (fbdev):")
        if framebuffers.isEmpty { print("  none (an SPI panel's fbtft driver, or vfb, makes one)") }
        for line in framebuffers { print("  \(line)") }
        for line in InputProbe.report(seat: seat) { print(line) }
    }
}
