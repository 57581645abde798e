import CarouselCore

/// A size in pixels. This room depends on no other carouseld target, so it
/// keeps its own small geometry types.
public struct PixelSize: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// The same size turned a quarter: what a 90 or 270 degree rotation gives.
    public var transposed: PixelSize { PixelSize(width: height, height: width) }

    public var description: String { "\(width)x\(height)" }
}

/// A rectangle in pixels; it may lie partly outside the box it is placed in
/// (`cover` and `none` crop).
public struct PixelRect: Hashable, Sendable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var size: PixelSize { PixelSize(width: width, height: height) }

    /// The overlap with `other`; empty (zero size) when they do not meet.
    public func intersection(_ other: PixelRect) -> PixelRect {
        let left = max(x, other.x)
        let top = max(y, other.y)
        let right = min(x + width, other.x + other.width)
        let bottom = min(y + height, other.y + other.height)
        if right <= left || bottom <= top { return PixelRect(x: left, y: top, width: 0, height: 0) }
        return PixelRect(x: left, y: top, width: right - left, height: bottom - top)
    }

    public var isEmpty: Bool { width <= 0 || height <= 0 }

    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

extension PixelColor {
    /// From a 0xAARRGGBB value, the layout of the pixels in a `DecodedImage`.
    public init(argb: UInt32) {
        self.init(red: UInt8(truncatingIfNeeded: argb >> 16), green: UInt8(truncatingIfNeeded: argb >> 8),
                  blue: UInt8(truncatingIfNeeded: argb), alpha: UInt8(truncatingIfNeeded: argb >> 24))
    }

    /// 0xAARRGGBB with the colour channels premultiplied by alpha, as pixman stores it.
    public var premultipliedARGB: UInt32 {
        func mul(_ c: UInt8) -> UInt32 {
            let t = UInt32(c) * UInt32(alpha) + 128
            return (t + (t >> 8)) >> 8
        }
        return UInt32(alpha) << 24 | mul(red) << 16 | mul(green) << 8 | mul(blue)
    }
}
