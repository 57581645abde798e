import CarouselConfig
import CarouselControl
import CarouselCore
import CarouselImaging
import CarouselLoop
import CarouselPlatform
import CarouselPushedTextWords
import CarouselRender
import CarouselText
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// How pushed text looks on this screen: what a drawn text depends on
/// besides its lines (a reload or a display change makes a new one).
public struct TextLook: Equatable, Sendable {
    var position: OverlayPosition
    var style: TextStyle
    var size: Int
    var rotation: Rotation
    /// The layout's (upright) size and the panel's.
    var logical: PixelSize
    var panel: PixelSize
    /// How far the text moves away from its edge (logical pixels): the
    /// clock's height when it shares the clock's corner, so that it goes
    /// beneath the clock (above it at the bottom), as PictureFrame's does.
    var clockHeight: Int
}

extension TextLook {
    /// The same look at another place and size (a pairing code: centred, larger).
    public func moved(to position: OverlayPosition, size: Int) -> TextLook {
        TextLook(position: position, style: style, size: size, rotation: rotation, logical: logical, panel: panel,
                 clockHeight: 0)
    }

    /// The pushed text's look for `config` on `screen`.
    public init(_ config: Configuration, on screen: ScreenFacts) {
        var clockHeight = 0
        let settings = config[PushedTextSettings.self]
        if let clock = screen.clock, clock.position == settings.textPosition { clockHeight = clock.height }
        self.init(position: settings.textPosition, style: config.overlay.text, size: screen.textSize,
                  rotation: screen.rotation, logical: screen.logical, panel: screen.panel, clockHeight: clockHeight)
    }
}

/// Text the house pushes onto the screen: the lines of `[overlay]
/// text_file`, followed with inotify on its folder (a script writes a
/// temporary file and renames it over the name), and `overlay text` over
/// the socket or MQTT, which shows over the file's text until `overlay
/// clear`. Drawn as the clock is, a stamp that stays put while pictures
/// slide under it, off the loop (through `LoopExecutor`), and handed to
/// the frame path when it is ready; a change asks for one frame, in which
/// only its rectangle is written. No deadline: at rest it costs nothing.
///
/// The pushed text lives as long as the process (a reload keeps it, a
/// restart does not); the file's is read again at start and whenever it
/// changes. A file that cannot be shown is one line per change of what
/// is wrong with it, never one per frame or per event.
public final class PushedTextService: LoopService {
    public let name = "pushed text"
    public let subscriptions: LoopHappening.Kinds = [.configured, .laidOut]
    private let context: ServiceContext

    /// Where the text on screen comes from.
    public enum Source: String {
        case pushed, file
    }
    /// What the file says now (nil: no file, none there, or one not shown).
    public private(set) var fileLines: PushedText.Lines?
    /// What `overlay text` pushed (nil: nothing, or cleared).
    public private(set) var pushedLines: PushedText.Lines?
    public private(set) var look: TextLook?
    /// The stamp on screen and what it shows.
    public private(set) var stamp: SceneStamp?
    public private(set) var drawn: (look: TextLook, lines: [String])?
    /// Counts the drawings asked for: a result that comes back after a
    /// newer one was asked for is dropped.
    private var drawing: UInt64 = 0
    public private(set) var drawings = 0
    private static let worker = DispatchQueue(label: "carouseld.text", qos: .utility)

    private var watch: TextFileWatch?
    /// Bumped for every watch, so that its descriptor is told from an old one's.
    private var serial: UInt64 = 0
    private var watchedPath: String?
    /// The last thing said about the file (said again only when it changes).
    private var said: String?

    public init(context: ServiceContext) {
        self.context = context
        look = TextLook(context.view.config, on: context.view.screen)
        follow(context.view.config[PushedTextSettings.self].textFile)
    }

    /// What shows now, and where it comes from.
    public var shown: (lines: PushedText.Lines, source: Source)? {
        if let pushed = pushedLines, !pushed.isEmpty { return (pushed, .pushed) }
        if let file = fileLines, !file.isEmpty { return (file, .file) }
        return nil
    }

    /// `status`'s `overlay` field.
    public func status(now: Int64) -> [String: JSONValue] {
        ["overlay": .object(["text": shown.map { .string($0.lines.text) } ?? .null,
                             "source": shown.map { .string($0.source.rawValue) } ?? .null,
                             "text_file": context.view.config[PushedTextSettings.self].textFile.map { .string($0) } ?? .null])]
    }

    /// `overlay text` and `overlay clear` (PushedTextWords reads them).
    public func handle(_ request: ControlRequest, now: Int64) -> RequestOutcome? {
        guard case let .declared(declared) = request else { return nil }
        switch declared {
        case PushedTextWords.clear: clear()
        case _ where declared.name == PushedTextWords.textName: push(declared.argument ?? "")
        default: return nil
        }
        return .done
    }

    /// `overlay text TEXT`: shows over the file's text (an empty text is `clear`).
    func push(_ text: String) {
        let lines = PushedText.lines(pushed: text)
        if lines.cut { log(.info, "overlay: the pushed text has more than \(PushedText.maxLines) lines; the first \(PushedText.maxLines) are shown") }
        pushedLines = lines.isEmpty ? nil : lines
        redraw()
    }

    /// `overlay clear`: back to the file's text, if any.
    func clear() {
        pushedLines = nil
        redraw()
    }

    // MARK: - The file

    /// Watches `path`'s folder (nil: no file) and reads the file.
    private func follow(_ path: String?) {
        watch?.close()
        watch = nil
        serial += 1
        watchedPath = path
        said = nil
        fileLines = nil
        guard let path else { return }
        do {
            watch = try TextFileWatch(path: path)
        } catch {
            // Not fatal: the carousel runs, without the file's text until a reload.
            log(.warning, "overlay: cannot follow text_file \(path): \(error) (does its folder exist?); its text is not shown")
            said = "unwatched"
            return
        }
        readFile()
    }

    /// Reads the file again and says what changed about it.
    private func readFile() {
        guard let path = watchedPath else { return }
        let lines: PushedText.Lines?
        let note: String
        switch PushedText.read(path: path) {
        case .missing:
            lines = nil
            note = "missing"
            if said != nil, said != note { log(.info, "overlay: \(path) is gone; its text is taken away") }
            if said == nil { log(.info, "overlay: \(path) does not exist yet; its text shows once it does") }
        case let .problem(problem):
            lines = nil
            note = problem.message
            if said != note { log(.warning, problem.message) }
        case let .text(read):
            // An empty file is no text (a script's file created, not yet written).
            lines = read.isEmpty ? nil : read
            note = read.cut ? "cut" : "text"
            if read.cut, said != note {
                log(.info, "overlay: \(path) has more than \(PushedText.maxLines) lines; the first \(PushedText.maxLines) are shown")
            }
        }
        said = note
        guard lines != fileLines else { return }
        fileLines = lines
        context.ask(.stateChanged)
        if Log.enabled(.debug) { log(.debug, "overlay: \(path) says \(lines?.lines.count ?? 0) lines") }
        redraw()
    }

    public var interests: [EpollInterest] {
        guard let watch else { return [] }
        return [EpollInterest(fd: watch.fileDescriptor, serial: serial)]
    }

    public func ready(_ fd: Int32, events: UInt32, now: Int64) {
        guard let watch, let path = watchedPath else { return }
        let seen = watch.drain()
        if seen.folderGone {
            log(.warning, "overlay: the folder of \(path) was removed or moved; its text is taken away and not followed until a reload")
            self.watch?.close()
            self.watch = nil
            serial += 1
            said = "unwatched"
            if fileLines != nil {
                fileLines = nil
                context.ask(.stateChanged)
                redraw()
            }
            return
        }
        if seen.touched { readFile() }
    }

    // MARK: - Drawing

    /// Draws what shows now off the loop; the frame path gets it when it is back.
    private func redraw() {
        guard let look else { return }
        let lines = shown?.lines.lines ?? []
        if let drawn, drawn.look == look, drawn.lines == lines { return }
        drawing += 1
        let ticket = drawing
        guard !lines.isEmpty else {
            // Nothing was on screen either: no frame to ask for.
            if stamp == nil { drawn = (look, lines); return }
            take(nil, look: look, lines: lines, ticket: ticket)
            return
        }
        context.run(on: Self.worker, { Self.draw(lines, look) }, then: { [weak self] stamp in
            self?.take(stamp, look: look, lines: lines, ticket: ticket)
        })
    }

    private func take(_ stamp: SceneStamp?, look: TextLook, lines: [String], ticket: UInt64) {
        guard ticket == drawing else { return }
        drawings += 1
        self.stamp = stamp
        drawn = (look, lines)
        context.ask(.stamp(.text, stamp))
        context.ask(.frame)
    }

    /// The stamp of `lines`: each cut to its share of the screen (half of
    /// it in a corner, all of it centred), rendered aligned to its side,
    /// turned to the panel and placed; nil when there is no font (logged
    /// once) or nothing to draw.
    public static func draw(_ lines: [String], _ look: TextLook) -> SceneStamp? {
        let (result, isNew) = TextRenderer.shared(pattern: look.style.font, pixelSize: look.size)
        guard case let .success(renderer) = result else {
            if isNew, case let .failure(error) = result { log(.warning, "overlay: \(error); captions, the clock and pushed text are not drawn") }
            return nil
        }
        let margin = TextSprite.margin(size: look.size)
        let share = look.position.horizontal == 0 ? look.logical.width - 2 * margin : look.logical.width / 2 - margin
        let fitted = lines.map { renderer.fitted($0, maxWidth: Double(max(share - look.size / 2, 1))) }
        guard let mask = renderer.render(lines: fitted, alignment: look.position.horizontal),
              let sprite = try? TextSprite.make(mask, style: look.style, size: look.size),
              let turned = try? sprite.turned(look.rotation) else { return nil }
        var o = TextSprite.origin(of: sprite.size, in: look.logical, at: look.position, margin: margin)
        o.y = look.position.isTop ? o.y + look.clockHeight : o.y - look.clockHeight
        o.y = max(0, min(o.y, look.logical.height - sprite.height))
        // The logical rectangle's corners on the panel.
        let p = look.rotation.panel(x: o.x, y: o.y, panelWidth: look.panel.width, panelHeight: look.panel.height)
        let q = look.rotation.panel(x: o.x + sprite.width - 1, y: o.y + sprite.height - 1,
                                    panelWidth: look.panel.width, panelHeight: look.panel.height)
        return SceneStamp(image: turned, x: min(p.x, q.x), y: min(p.y, q.y))
    }

    // MARK: - A still frame

    /// The text of `config`'s `text_file` as a frame of this layout draws
    /// it on `screen` (`carouseld render`); nil without a file, text or font. A file
    /// that cannot be shown is one warning line.
    public static func fileStamp(_ config: Configuration, on screen: ScreenFacts) -> SceneStamp? {
        guard let path = config[PushedTextSettings.self].textFile else { return nil }
        switch PushedText.read(path: path) {
        case .missing:
            log(.warning, "overlay: text_file \(path) does not exist; no text drawn")
            return nil
        case let .problem(problem):
            log(.warning, problem.message)
            return nil
        case let .text(lines):
            if lines.cut { log(.info, "overlay: \(path) has more than \(PushedText.maxLines) lines; the first \(PushedText.maxLines) are shown") }
            return draw(lines.lines, TextLook(config, on: screen))
        }
    }

    // MARK: - On the loop

    public func observe(_ happening: LoopHappening, now: Int64) {
        switch happening {
        case .configured:
            // A reload keeps the pushed text; a new file is followed from scratch.
            let path = context.view.config[PushedTextSettings.self].textFile
            if path != watchedPath || (path != nil && watch == nil) {
                follow(path)
                if path == nil { redraw() }
            }
        case .laidOut:
            look = TextLook(context.view.config, on: context.view.screen)
            redraw()
        default:
            break
        }
    }

    public func stop() {
        watch?.close()
        watch = nil
    }
}

/// An inotify watch on a file's folder, for the file's name: a write
/// closed, a rename over it or away, a creation, a deletion. The folder
/// is watched rather than the file, since a script that replaces the file
/// by renaming a new one over it leaves a watch on the old file behind.
/// Owns the inotify descriptor and closes it once.
final class TextFileWatch {
    private(set) var fileDescriptor: Int32
    private let name: [UInt8]
    private let folderWatch: Int32
    private static let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM
                                     | IN_DELETE_SELF | IN_MOVE_SELF | IN_ATTRIB) | UInt32(IN_ONLYDIR)
    private static let bufferSize = 16 * 1024

    /// The corresponding C functions are `inotify_init1` and `inotify_add_watch`.
    init(path: String) throws(SystemCallError) {
        var bytes = Array(path.utf8)
        let slash = bytes.lastIndex(of: UInt8(ascii: "/")) ?? 0
        name = Array(bytes[(slash + 1)...])
        bytes.removeSubrange(slash...)
        let folder = bytes.isEmpty ? "/" : String(decoding: bytes, as: UTF8.self)
        let fd = try systemCall("inotify_init1") { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }
        do {
            folderWatch = try systemCall("inotify_add_watch") { inotify_add_watch(fd, folder, Self.mask) }
        } catch {
            Glibc.close(fd)
            throw error
        }
        fileDescriptor = fd
    }

    /// Reads every queued event: whether one was about the file (or
    /// overflowed: look again), and whether the folder itself went away.
    ///
    /// The corresponding C function is `read` on the inotify descriptor.
    func drain() -> (touched: Bool, folderGone: Bool) {
        var touched = false, gone = false
        guard fileDescriptor >= 0 else { return (false, false) }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: Self.bufferSize, alignment: MemoryLayout<inotify_event>.alignment)
        defer { buffer.deallocate() }
        let header = MemoryLayout<inotify_event>.size
        for _ in 0..<64 {
            guard let count = try? attemptSystemCall("read", { read(fileDescriptor, buffer, Self.bufferSize) }),
                  count > 0 else { break }
            let events = UnsafeRawBufferPointer(start: buffer, count: count)
            var offset = 0
            while offset + header <= events.count {
                // struct inotify_event { int wd; uint32_t mask; uint32_t cookie; uint32_t len; char name[]; }
                let mask = events.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                let length = Int(events.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                let start = offset + header
                offset = start + length
                guard offset <= events.count else { break }
                if mask & UInt32(IN_Q_OVERFLOW) != 0 { touched = true; continue }
                if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT) != 0 { gone = true; continue }
                // The name is NUL-padded to `length`.
                var end = start
                while end < start + length, events[end] != 0 { end += 1 }
                if events[start..<end].elementsEqual(name) { touched = true }
            }
        }
        return (touched, gone)
    }

    func close() {
        guard fileDescriptor >= 0 else { return }
        Glibc.close(fileDescriptor)
        fileDescriptor = -1
    }

    deinit { close() }
}
