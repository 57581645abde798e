import CarouselCore
import CarouselImaging

/// Text ready to be drawn over a picture: a small premultiplied ARGB
/// picture of the letters in their colour over their backdrop (a soft
/// shadow or a translucent box), made once (a caption when its item is
/// decoded, the clock once a minute) and blended with OVER where it goes.
public enum TextSprite {
    /// The sprite of `mask` in `style`'s colour over its backdrop. `size` is
    /// the em size, from which the shadow's softness and the box's padding follow.
    public static func make(_ mask: TextMask, style: TextStyle, size: Int) throws(ImageError) -> DecodedImage {
        let pad: Int
        switch style.backdrop {
        case .none: pad = 0
        case .shadow: pad = max(2, size / 10)
        case .scrim: pad = max(4, size * 3 / 10)
        }
        let width = mask.width + 2 * pad, height = mask.height + 2 * pad
        var alpha = [UInt8](repeating: 0, count: width * height)   // backdrop alpha
        switch style.backdrop {
        case .none:
            break
        case .scrim:
            // A box of 55 % black: white text on white sky still reads.
            alpha = [UInt8](repeating: 140, count: width * height)
        case .shadow:
            // The letters moved down-right by a 16th of the em, spread by a
            // box blur twice (close to a Gaussian), at 80 %.
            let shift = max(1, size / 16)
            for y in 0..<mask.height {
                for x in 0..<mask.width {
                    let tx = x + pad + shift - 1, ty = y + pad + shift - 1
                    guard tx < width, ty < height else { continue }
                    alpha[ty * width + tx] = mask[x, y]
                }
            }
            let radius = max(1, size / 20)
            for _ in 0..<2 { boxBlur(&alpha, width: width, height: height, radius: radius) }
            for i in alpha.indices { alpha[i] = UInt8((Int(alpha[i]) * 204 + 127) / 255) }
        }
        let c = style.color
        let textAlpha = Int(c.alpha)
        return try DecodedImage(width: width, height: height, format: .argb8888Premultiplied) { raw, stride in
            for y in 0..<height {
                let row = (raw.baseAddress! + y * stride).assumingMemoryBound(to: UInt32.self)
                for x in 0..<width {
                    let mx = x - pad, my = y - pad
                    let cover = mx >= 0 && my >= 0 && mx < mask.width && my < mask.height ? Int(mask[mx, my]) : 0
                    // Text (premultiplied) OVER black backdrop, both as coverage.
                    let ta = (cover * textAlpha + 127) / 255
                    let ba = Int(alpha[y * width + x])
                    let a = ta + (ba * (255 - ta) + 127) / 255
                    func channel(_ v: UInt8) -> UInt32 { UInt32((Int(v) * ta + 127) / 255) }
                    row[x] = UInt32(a) << 24 | channel(c.red) << 16 | channel(c.green) << 8 | channel(c.blue)
                }
            }
        }
    }

    /// Two passes (rows, then columns) of a running-sum box blur.
    static func boxBlur(_ values: inout [UInt8], width: Int, height: Int, radius: Int) {
        var line = [Int](repeating: 0, count: max(width, height))
        let span = 2 * radius + 1
        func pass(count: Int, lines: Int, index: (Int, Int) -> Int) {
            for l in 0..<lines {
                for i in 0..<count { line[i] = Int(values[index(l, i)]) }
                var sum = 0
                for i in -radius...radius where i >= 0 && i < count { sum += line[i] }
                for i in 0..<count {
                    values[index(l, i)] = UInt8(sum / span)
                    let out = i - radius, into = i + radius + 1
                    if out >= 0 { sum -= line[out] }
                    if into < count { sum += line[into] }
                }
            }
        }
        pass(count: width, lines: height) { y, x in y * width + x }
        pass(count: height, lines: width) { x, y in y * width + x }
    }

    /// Where a sprite of `sprite` size goes in a `box` at `position`, a
    /// `margin` from the edges (top-left corner).
    public static func origin(of sprite: PixelSize, in box: PixelSize, at position: OverlayPosition,
                              margin: Int) -> (x: Int, y: Int) {
        let x: Int
        switch position.horizontal {
        case ..<0: x = margin
        case 0: x = (box.width - sprite.width) / 2
        default: x = box.width - margin - sprite.width
        }
        let y = position.isTop ? margin : box.height - margin - sprite.height
        return (max(0, min(x, box.width - sprite.width)), max(0, min(y, box.height - sprite.height)))
    }

    /// The margin between text and the screen's edge for an em size.
    public static func margin(size: Int) -> Int { max(4, size * 3 / 4) }
}
