import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// `hide` and `unhide`: pictures this frame leaves out of its album (the
/// file stays where it is, for the other frames that show the same folder),
/// kept in the state directory (`hidden`, one path a line) so that a
/// restart keeps them out.
enum HiddenPictures {
    static let fileName = "hidden"

    static func read(_ directory: String) -> Set<String> {
        guard let text = try? readTextFile(directory + "/" + fileName) else { return [] }
        return Set(text.split(whereSeparator: \.isNewline).map(String.init).filter { !$0.isEmpty })
    }

    static func write(_ hidden: Set<String>, to directory: String) -> String? {
        writeFileAtomically(Array(hidden.sorted().map { $0 + "\n" }.joined().utf8), to: directory + "/" + fileName, mode: 0o640)
    }
}

extension Daemon {
    /// `hide [NAME]`: the picture named (its path, or its name in the album),
    /// or the one on screen, leaves the album.
    func hide(_ name: String?) -> ControlReply {
        let now = Timestamp(microseconds: clock())
        let path: String
        if let name {
            guard let found = album.paths.first(where: { $0 == name || $0.hasSuffix("/" + name) }) else {
                return .error("hide: no picture named '\(name)' in the album")
            }
            path = found
        } else {
            guard let onScreen = album.pictures(model.currentItemIndex(at: now)).first else {
                return .error("hide: the album is empty")
            }
            path = onScreen
        }
        var hidden = album.hidden
        hidden.insert(path)
        if let problem = keepHidden(hidden) { return .error("hide: \(problem)") }
        album.hidden = hidden
        log(.info, "hid \(path) on this frame")
        rescanAlbum()
        return .ok(["hidden": .string(path), "count": .int(album.pictureCount)])
    }

    /// `unhide NAME`: a hidden picture (its path, or its name) comes back.
    func unhide(_ name: String) -> ControlReply {
        guard let path = album.hidden.first(where: { $0 == name || $0.hasSuffix("/" + name) }) else {
            return .error("unhide: no hidden picture named '\(name)'")
        }
        var hidden = album.hidden
        hidden.remove(path)
        if let problem = keepHidden(hidden) { return .error("unhide: \(problem)") }
        album.hidden = hidden
        log(.info, "unhid \(path)")
        rescanAlbum()
        return .ok(["unhidden": .string(path), "count": .int(album.pictureCount)])
    }

    /// Writes the list into the state directory; why not, or nil.
    private func keepHidden(_ hidden: Set<String>) -> String? {
        guard let directory = stateDirectory else { return "no state directory to keep it in" }
        return HiddenPictures.write(hidden, to: directory)
    }
}
