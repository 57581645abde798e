import CarouselCore
extension DecodedImage {
    /// This image turned upright for `orientation`: a new image, or `self`
    /// for `.identity`.
    ///
    /// A plain copy loop: each stored pixel goes to one destination word, whose
    /// index is linear in (x, y), so the loop only adds two steps. It walks in
    /// 64 x 64 tiles so that the quarter turns (which write a destination
    /// column per source row) stay within the cache.
    func oriented(_ orientation: ExifOrientation, path: String) throws(ImageError) -> DecodedImage {
        if orientation == .identity { return self }
        let upright = orientation.uprightSize(of: size)
        let result = try DecodedImage(width: upright.width, height: upright.height,
                                      format: format, hasAlpha: hasAlpha, path: path)
        let rowWords = result.stride / 4
        func index(_ p: (x: Int, y: Int)) -> Int { p.y * rowWords + p.x }
        // destination() is affine in (x, y); its steps for x+1 and y+1 are
        // constant, even where (1, 0) or (0, 1) fall outside a 1-pixel image.
        let origin = index(orientation.destination(x: 0, y: 0, width: width, height: height))
        let stepX = index(orientation.destination(x: 1, y: 0, width: width, height: height)) - origin
        let stepY = index(orientation.destination(x: 0, y: 1, width: width, height: height)) - origin
        let destination = result.row(0)
        let tile = 64
        for tileY in Swift.stride(from: 0, to: height, by: tile) {
            for tileX in Swift.stride(from: 0, to: width, by: tile) {
                let endX = min(tileX + tile, width)
                for y in tileY..<min(tileY + tile, height) {
                    let source = row(y)
                    var d = origin + y * stepY + tileX * stepX
                    for x in tileX..<endX {
                        destination[d] = source[x]
                        d += stepX
                    }
                }
            }
        }
        withExtendedLifetime(self) {}
        return result
    }
}

extension DecodedImage {
    /// This image turned as `rotation` turns the logical picture onto the
    /// panel (`Rotation.panel`): items are prepared in panel orientation once,
    /// at decode time, so that every frame is row copies.
    public func turned(_ rotation: Rotation) throws(ImageError) -> DecodedImage {
        switch rotation {
        case .none: self
        case .clockwise90: try oriented(.rotate90, path: "<turned>")
        case .upsideDown: try oriented(.rotate180, path: "<turned>")
        case .clockwise270: try oriented(.rotate270, path: "<turned>")
        }
    }
}
