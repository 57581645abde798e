import CarouselConfig
import CarouselCore
import CarouselDisplay
import CarouselImaging
import CarouselPlatform
import CarouselRender
import CarouselSimulation

/// `carouseld simulate` without its command line: a script run on the
/// virtual clock, its JSON lines on standard output, its refusals on
/// standard error, and its `frame` steps painted as the daemon paints (so
/// this lives in the daemon room, beside `Layout.stillPainter`, rather than
/// in the simulation room, which knows no pictures).
public struct SimulationSession {
    let script: SimulationScript
    let base: Configuration
    /// The pages of `frame` steps: the pictures of the configured folder or
    /// list, one a page or with portraits paired.
    let pages: [PageKey]
    let itemCount: Int

    /// The script text at `path`, or standard input for "-".
    /// Throws when the file cannot be read.
    public static func readScript(_ path: String) throws(FileReadError) -> String {
        guard path == "-" else { return try readTextFile(path) }
        var lines: [String] = []
        while let line = readLine(strippingNewline: false) { lines.append(line) }
        return lines.joined()
    }

    /// Parses `text` over `base`; with `listsImages` (a configuration file
    /// was given) its folder or list gives the pictures of `frame` steps,
    /// and the item count unless the script sets one. A folder that cannot
    /// be listed is a warning where the script would have used it.
    /// Throws the script's first bad line ("line N: ...").
    public init(script text: String, base: Configuration, listsImages: Bool) throws(ScriptError) {
        script = try SimulationScript.parse(text, configuration: base)
        self.base = base
        var pages: [PageKey] = []
        var count = script.itemCount
        if listsImages {
            do {
                let paths = try base.listedImagePaths()
                // With pair_portraits on a landscape layout, an item is a page of one or two pictures.
                let effective = script.configuration(base: base)
                if Self.layout(effective, script).pairsPortraits(effective) {
                    pages = PortraitPairs.keys(paths, isPortrait: Layout.isPortrait(path:))
                } else {
                    pages = paths.map(PageKey.init)
                }
                if !script.itemCountGiven { count = pages.count }
            } catch {
                if script.hasFrames || !script.itemCountGiven {
                    log(.warning, "\(error); simulating \(count) items without pictures")
                }
            }
        }
        self.pages = pages
        itemCount = count
    }

    /// Runs the script to its end: JSON lines to standard output (written
    /// in 64 KiB pieces), refusals to standard error, `frame` steps to PNGs.
    public func run() {
        let effective = script.configuration(base: base)
        var painter: FramePainter? = nil
        var out = ""
        out.reserveCapacity(1 << 16)
        func flush() {
            writeAll(1, out)
            out.removeAll(keepingCapacity: true)
        }
        SimulationRunner.run(script, base: base, itemCount: itemCount, emit: { line in
            out += line
            out += "\n"
            if out.utf8.count > 1 << 16 { flush() }
        }, diagnostic: { printError("carouseld: \($0)") }, frame: { request in
            if painter == nil { painter = makePainter(effective) }
            return paint(request, with: painter!)
        })
        flush()
    }

    /// The panel of the script's size, turned as configured: the script's
    /// size is the layout; the PNG is what the panel shows.
    private static func panel(_ effective: Configuration, _ script: SimulationScript) -> PixelSize {
        let rotation = effective.rotation
        let w = Int(script.viewport.width), h = Int(script.viewport.height)
        return rotation == .clockwise90 || rotation == .clockwise270 ? PixelSize(width: h, height: w) : PixelSize(width: w, height: h)
    }

    private static func layout(_ effective: Configuration, _ script: SimulationScript) -> Layout {
        Layout(config: effective, backend: OffscreenBackend(size: panel(effective, script)))
    }

    /// The daemon's painter for the script's size, turned as configured.
    private func makePainter(_ effective: Configuration) -> FramePainter {
        // Captions as the daemon draws them; no clock (scripts run on a virtual clock).
        Layout.stillPainter(effective, panel: Self.panel(effective, script), pages: pages)
    }

    /// One `frame` step's PNG; the error's text when it cannot be written.
    private func paint(_ request: SimulationRunner.FrameRequest, with painter: FramePainter) -> String? {
        let (frame, failures) = painter.paint(offset: request.offset, count: request.model.numberOfItems,
                                              page: request.snapshot.page, pageCount: request.model.numberOfPages,
                                              crossfade: request.model.crossfade(at: request.time),
                                              zoom: request.model.zoomView(at: request.time))
        for failure in failures { log(.warning, "cannot show \(failure.message)") }
        do {
            try frame.writePNG(to: request.path)
        } catch {
            return "\(error)"
        }
        return nil
    }
}
