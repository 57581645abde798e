import CarouselImaging

/// Which names in the image folder are images to show, decided on the name's
/// bytes alone so that neither the scan nor the watcher needs a `String` or a
/// `stat` for the many names it rejects.
enum ImageName {
    /// The extensions of the formats the decoders read, as the decoders
    /// declare them (`ImageFormat.fileExtensions`): a new format is added in
    /// one place. Lower case; compared case-insensitively (cameras write
    /// `IMG_0001.JPG`).
    /// Clips (`ClipName`) are items too; `[video] enabled = false` leaves them out of a listing.
    static let extensions: [[UInt8]] = (ImageFormat.allCases.flatMap(\.fileExtensions) + ClipName.fileExtensions)
        .map { Array($0.utf8) }

    /// Suffixes of files still being written or left behind by editors,
    /// downloaders and sync tools (`photo.jpg.part`, `photo.jpg.tmp`, vim's
    /// `.photo.jpg.swp`). Most of them already fail the extension test; they
    /// are listed so that the rule reads as documented.
    static let temporarySuffixes: [[UInt8]] = [".part", ".partial", ".tmp", ".swp", ".crdownload"].map { Array($0.utf8) }

    static func isCandidate(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = name.first, let last = name.last else { return false }
        // Hidden files (and `.`, `..`), emacs's `#autosave#` and backups `name~`.
        if first == UInt8(ascii: ".") || first == UInt8(ascii: "#") || last == UInt8(ascii: "~") { return false }
        for suffix in temporarySuffixes where hasSuffixIgnoringCase(name, suffix) { return false }
        guard let dot = name.lastIndex(of: UInt8(ascii: ".")), dot > 0 else { return false }
        let ext = UnsafeBufferPointer(rebasing: name[(dot + 1)...])
        return extensions.contains { equalIgnoringCase(ext, $0[...]) }
    }

    static func isCandidate(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { isCandidate($0) }
    }

    private static func hasSuffixIgnoringCase(_ name: UnsafeBufferPointer<UInt8>, _ suffix: [UInt8]) -> Bool {
        name.count >= suffix.count && equalIgnoringCase(UnsafeBufferPointer(rebasing: name.suffix(suffix.count)), suffix[...])
    }

    /// ASCII case folding: `lowercase` is lower-case ASCII.
    private static func equalIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: ArraySlice<UInt8>) -> Bool {
        guard bytes.count == lowercase.count else { return false }
        for (byte, expected) in zip(bytes, lowercase) {
            let folded = (byte >= 0x41 && byte <= 0x5A) ? byte + 0x20 : byte
            if folded != expected { return false }
        }
        return true
    }
}
