import CarouselImaging

/// Face regions (`FaceRegions`, through `ImageMetadata`). The first input
/// byte picks a mode:
///
/// * 0 to 3: the rest is a whole JPEG, PNG, WebP or HEIF file. Its faces
///   are the same on every reading, at most `FaceRegions.maximumRegions`,
///   each a non-empty rectangle inside the picture.
/// * 4 to 7: the rest is XMP text. The same holds for its regions, and the
///   text in a JPEG's XMP segment (when it fits one) gives the same faces.
enum FaceProperties {
    static func check(_ input: [UInt8]) throws(PropertyFailure) {
        guard let mode = input.first else { return }
        let rest = Array(input.dropFirst())
        let faces: [FaceRegion]
        if mode % 8 < 4 {
            faces = metadata(rest).faces
            try require(faces == metadata(rest).faces, "two readings of one file give different faces")
        } else {
            let text = String(decoding: rest, as: UTF8.self)
            faces = FaceRegions.parse(text)
            try require(faces == FaceRegions.parse(text), "two readings of one XMP text give different faces")
            let header = Array("http://ns.adobe.com/xap/1.0/\0".utf8)
            let payload = header + rest
            if payload.count + 2 <= 0xFFFF {
                let jpeg = [0xFF, 0xD8, 0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)]
                    + payload + [0xFF, 0xD9]
                try require(metadata(jpeg).faces == faces, "the same XMP in a JPEG gives other faces")
            }
        }
        try require(faces.count <= FaceRegions.maximumRegions, "\(faces.count) faces")
        for f in faces {
            try require(f.x >= 0 && f.y >= 0 && f.width > 0 && f.height > 0 && f.maxX <= 1 && f.maxY <= 1,
                        "face \(f) is not a rectangle inside the picture")
        }
    }

    static func metadata(_ bytes: [UInt8]) -> ImageMetadata {
        bytes.withUnsafeBytes { ImageMetadata.parse($0) }
    }
}
