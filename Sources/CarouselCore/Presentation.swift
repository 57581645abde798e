/// How an item's picture fills its box (the `[images] fit` key). One type
/// for the configuration, the decoder and the renderer.
public enum FitMode: String, Sendable, CaseIterable {
    /// Aspect fit: the whole image shows, letterboxed in the background colour.
    case contain
    /// Aspect fill: the box is covered, the overflow cropped evenly on both sides.
    case cover
    /// Both axes scaled to the box independently; the aspect ratio is lost.
    case stretch
    /// Unscaled and centred; cropped if larger than the box.
    case none
    /// Aspect fit over a blurred, dimmed aspect fill of the same picture
    /// (no bars): the `[images] blur_radius` and `dim` keys.
    case blur
}

/// Which screen edge the page dots sit at (the `[indicator] position` key).
public enum IndicatorPosition: String, Sendable, CaseIterable {
    case bottom, top, left, right
}

/// A colour with straight (not premultiplied) 8-bit channels: the
/// configuration's colours (`#RRGGBB` or `#RRGGBBAA`) and the renderer's.
public struct PixelColor: Hashable, Sendable, CustomStringConvertible {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8
    public var alpha: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    public static let black = PixelColor(red: 0, green: 0, blue: 0)

    /// From `#RRGGBB` or `#RRGGBBAA` (either case); nil for anything else.
    public init?(hex: String) {
        guard hex.hasPrefix("#"), hex.count == 7 || hex.count == 9 else { return nil }
        var bytes: [UInt8] = []
        var s = hex.dropFirst()
        while !s.isEmpty {
            guard let b = UInt8(s.prefix(2), radix: 16) else { return nil }
            bytes.append(b)
            s = s.dropFirst(2)
        }
        self.init(red: bytes[0], green: bytes[1], blue: bytes[2], alpha: bytes.count == 4 ? bytes[3] : 255)
    }

    /// `#RRGGBB`, or `#RRGGBBAA` when not opaque.
    public var description: String {
        let digits = [red, green, blue] + (alpha == 255 ? [] : [alpha])
        return "#" + digits.map { b in
            let h = String(b, radix: 16, uppercase: true)
            return h.count == 1 ? "0" + h : h
        }.joined()
    }
}

/// Page-dot settings (UIPageControl): the `[indicator]` section and what
/// the renderer draws.
public struct IndicatorStyle: Equatable, Sendable {
    public typealias Position = IndicatorPosition
    public var enabled = true
    public var position = Position.bottom
    public var color = PixelColor(red: 255, green: 255, blue: 255, alpha: 0x80)
    public var currentColor = PixelColor(red: 255, green: 255, blue: 255)
    /// Dot diameter, the gap between two dots, and the distance from the screen edge, pixels.
    public var size = 10.0
    public var spacing = 12.0
    public var margin = 24.0
    public var hidesForSinglePage = true
    public init() {}
}
