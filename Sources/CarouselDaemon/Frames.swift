import CarouselAlbum
import CarouselConfig
import CarouselCore
import CarouselDisplay
import CarouselImaging
import CarouselLoop
import CarouselPlatform
import CarouselRender

/// The frame path: what the screen shows at an instant, asked of the
/// decode cache, laid out, written into the display's buffer (only what
/// changed) and presented, paced by `FramePacer`. It owns everything a
/// frame needs between frames (the writer and its scene, the pacing, the
/// window room, the hold); what it shows it reads from the daemon (the
/// model, the album, the cache, the layout, the display).
public final class FramePath {
    private unowned let daemon: Daemon
    /// Paces frames to the display (flip events, or the timer without them).
    public internal(set) var pacer: FramePacer
    /// Writes frames into the display's buffers (only what changed) and
    /// keeps the scene on screen, which `screenshot` composes again.
    private(set) var writer: ScreenWriter
    /// The items on screen at the last frame (storage reused: a frame allocates nothing).
    private var placements: [Compositor.Placement] = []
    /// The writer whose scene is on screen (until a frame after a relayout
    /// is presented, the one from before it): what `screenshot` composes.
    private(set) var shown: ScreenWriter?
    /// How far the display lets the scan-out window move along the panel
    /// axis (pixels of room in its buffers; 0: every frame is written).
    private(set) var windowRoom = 0
    /// Whether the log has said how slides reach the screen.
    private var windowRoomSaid = false
    /// The room is to be asked for at the next frame.
    private var windowRoomDue = false
    /// Screens of room asked for: two, so that each slide but every other
    /// one lays its picture out beside the one at rest, in the buffer on
    /// screen; one after the display refused a window of such buffers.
    private var roomScreens = 2
    /// What the last list of wanted pictures was made of (`requestPictures`).
    private var wantedKey: WantedKey?
    /// The carousel moved since the start (a slide, a drag): from then on
    /// the picture behind the current one is decoded too. Before, it is the
    /// one page nothing shows unless a finger drags back, and autoplay's
    /// first slide makes the first picture the one behind (decoded): not
    /// decoding it at start is a decode less beside the first two on a
    /// board's one core, and a picture less in memory.
    private var movedYet = false
    /// The first frame was drawn (into the buffer on screen, where the
    /// display offers it): tried once, presented or not.
    private var firstFrameTried = false
    /// Until then (µs), a frame whose pictures are not decoded yet is not
    /// presented: after a reload that changed how pictures are scaled, the
    /// old frame stays on screen rather than empty slots.
    var holdUntil: Int64 = 0
    /// What is on screen is stale (the model said so, a decode finished,
    /// the album or the layout changed): draw one frame.
    var needsFrame = true
    /// The pushed text's stamp (the pushed text's service asks for it, and for a frame).
    private(set) var textStamp: SceneStamp?
    /// The clock's stamp (`[overlay] clock`: ClockOverlay asks for it at each minute).
    private(set) var clockStamp: SceneStamp?
    /// A pairing code, drawn where pushed text is, over it while it lasts.
    private(set) var pairingStamp: SceneStamp?
    /// A pairing code is meant for the screen (`LoopAsk.secret`), drawn yet or not.
    var secretMeant = false
    /// A picture shown for a page instead of its decoded one: a playing
    /// clip's frame (the clip's service asks for it).
    var framed: (key: PageKey, picture: DecodedImage)?
    /// Pages whose pictures are shown framed (Ken Burns), and the largest
    /// scale each will be framed at (see `LoopAsk.framing`).
    private(set) var framings: [PageKey: (framing: Framing, largestScale: Double)] = [:]
    /// The content moves with time (a settle, momentum, an animation, a
    /// drift), as the model's effects said: draw every frame until it stops.
    private(set) var moving = false
    /// The items where the motion in flight comes to rest (the model's
    /// prefetch effect): decoded ahead of the frames that will show them.
    private var prefetchTarget: [Int] = []
    /// Presenting failed this many times in a row (logged once, then now and then).
    private var presentFailures = 0
    /// Which way the content last moved, as the model's effects say: +1
    /// forward, -1 back (prefetch looks ahead that way); the autoplay
    /// direction until something moved.
    public private(set) var travel: Int
    public private(set) var firstFrameShown = false
    /// The first complete picture was presented.
    private(set) var pictureShown = false
    /// The first complete picture was presented; its line is logged when
    /// the display took it (`frameOnScreen`), after the first frame's.
    private var firstPictureInFlight = false

    init(daemon: Daemon) {
        self.daemon = daemon
        writer = ScreenWriter(compositor: daemon.layout.compositor)
        pacer = FramePacer(period: daemon.backend.framePeriodMicroseconds)
        travel = daemon.config.autoplay.direction == .forward ? 1 : -1
    }

    /// What the model's effects say of frames: one is due, the content
    /// moves (or stopped), which way, and where a motion comes to rest.
    func apply(_ effects: CarouselEffects, now: Int64) {
        if effects.needsFrame { needsFrame = true }
        if let heading = effects.heading { travel = heading }
        if let started = effects.moving {
            moving = started
            if started { movedYet = true }
            if !started { prefetchTarget = [] }
        }
        if !effects.prefetch.isEmpty {
            prefetchTarget = effects.prefetch
            // Ask now: the frame that would ask may wait for the panel.
            requestPictures(at: daemon.model.offset(at: Timestamp(microseconds: now)))
        }
    }

    /// When the frame path wants the loop awake: the end of a hold while
    /// waiting for pictures (`nil` from `holdEnd` otherwise), and while
    /// something moves or a frame is due on a display that shows, the
    /// pacer's next frame.
    func holdEnd(now: Int64) -> Int64? { holding(now) && !moving ? holdUntil : nil }

    func nextFrame(now: Int64) -> Int64? {
        guard moving || needsFrame, daemon.screenIsShowing else { return nil }
        return pacer.nextFrame(after: now)
    }

    /// The layout changed (a reload, a new panel): a writer for it; the
    /// window room is asked for again.
    func laidOut() {
        writer = ScreenWriter(compositor: daemon.layout.compositor)
        reserveWindowRoom()
        needsFrame = true
    }

    /// The display was set up anew or is a new one: no flip is in flight,
    /// and what its buffers hold is unknown: a whole new frame.
    func displayReset(remodeset: Bool) {
        pacer.displayReset()
        if remodeset {
            writer.invalidate()
            reserveWindowRoom()
        }
        needsFrame = true
    }

    /// A stamp a service asked for.
    func setStamp(_ slot: StampSlot, _ stamp: SceneStamp?) {
        switch slot {
        case .text: textStamp = stamp
        case .clock: clockStamp = stamp
        case .pairing: pairingStamp = stamp
        }
    }

    /// The display took the frame presented last (its flip event).
    func flipCompleted() {
        pacer.flipCompleted()
        frameOnScreen()
    }

    /// Draws a frame if the model's effects asked for one (or for every
    /// frame while moving) and the panel can take one now. The last frame of
    /// a motion is drawn where it came to rest: the model says `moving` is
    /// over, with `needsFrame`, at the instant a settle ends on its page.
    func drawIfNeeded(now: Int64) {
        let d = daemon
        guard moving || needsFrame, !d.power.isOff, pacer.mayDraw(at: now) else { return }
        let began = d.realTime ? MonotonicClock.now() : 0
        if windowRoomDue, !d.displayIsAway { applyWindowRoom() }
        let model = d.model, album = d.album, compositor = d.compositor
        let x = model.offset(at: Timestamp(microseconds: now))
        // A crossfade shows the pictures at both ends: those it fades out
        // are asked for with the ones it fades in (the motion's heading).
        let crossfade = model.crossfade(at: Timestamp(microseconds: now))
        let placed = requestPictures(at: crossfade?.from ?? x)
        if holding(now), !moving,
           !placed.allSatisfy({ album.key($0.index).flatMap(d.picture(for:)) != nil }) {
            return  // the old frame stays until the pictures are ready (or the hold ends)
        }
        guard var buffer = d.backend.acquire() else { return }
        holdUntil = 0
        let page = model.lattice.cyclePage(model.lattice.nearestPage(to: x))
        let zoom = zoomLayer(at: Timestamp(microseconds: now))
        // Framings at rest are drawn each frame (the move); while the carousel
        // moves they are still, drawn once (`baked`) and moved as pictures.
        let framed: [ZoomLayer]
        let onScreen = Set(placed.map(\.index))
        if zoom == nil, !moving, model.motionState == .idle {
            // At rest the pages on screen move (drawn each frame); those
            // beside them are drawn once where their moves start.
            let count = max(album.count, 1)
            bake(Set(onScreen.flatMap { [($0 + count - 1) % count, ($0 + 1) % count] }).subtracting(onScreen))
            framed = framedLayers(placed, current: model.lattice.itemIndex(at: x))
        } else {
            framed = []
            let incoming = crossfade.map { compositor.placements(offset: $0.to, count: album.count, wrap: d.config.carousel.wrap) } ?? []
            if zoom == nil {
                bake(Set((placed + incoming).flatMap { [$0.index - 1, $0.index, $0.index + 1] }))
                // A pinch's decode goes with the pinch (a framing's stays for its page).
                if framings.isEmpty { d.cache.wantZoom(nil, scale: 1) }
            }
        }
        // While the content moves, what comes next along the way is laid out
        // too where the buffers have room: the slide moves the window over it.
        // (A crossfade moves nothing: its frames are written whole. Nor while
        // a picture is zoomed: its pixels change with every frame.)
        // One screen at most, and no further than where the motion comes to
        // rest: more room lets the next slide lay out beside this one.
        var aheadPixels = min(windowRoom, compositor.axisExtent)
        if let rest = model.restingOffset {
            aheadPixels = min(aheadPixels, Int((abs(rest - x) * model.geometry.pitch - 0.001).rounded(.up)))
        }
        let ahead = moving && windowRoom > 0 && crossfade == nil && zoom == nil && framed.isEmpty ? travel * aheadPixels : 0
        let wrap = d.config.carousel.wrap
        compositor.layOut(&writer.scene, offset: crossfade?.from ?? x, count: album.count, wrap: wrap,
                          page: page, pageCount: model.numberOfPages, ahead: ahead, zoom: zoom, framed: framed) { i in
            album.key(i).flatMap(d.picture(for:))
        }
        writer.fade = crossfade?.fraction
        if let crossfade {
            compositor.layOut(&writer.incoming, offset: crossfade.to, count: album.count, wrap: wrap,
                              page: page, pageCount: model.numberOfPages) { i in
                album.key(i).flatMap(d.picture(for:))
            }
        }
        writer.scene.stamp = clockStamp
        writer.scene.textStamp = pairingStamp ?? textStamp
        let complete = !placed.isEmpty && writer.scene.complete
        // With room in the buffers and nothing drawn over the pictures, the
        // buffer on screen takes what comes beside what it shows: a slide
        // writes its pictures once, and moves the window over one buffer.
        let window: PixelPoint
        if !firstFrameTried, let shown = d.backend.acquireShown() {
            // The daemon's first frame goes into the buffer on screen, which
            // shows the display's black (its modeset): what tears is black
            // giving way to the first picture, and no flip waits for a
            // buffer the driver has not shown yet (bochs moves one into
            // video memory first: 160 ms of a TCG vCPU before the picture).
            buffer = shown.buffer
            window = writer.draw(into: buffer)
        } else if windowRoom > 0, let shown = d.backend.acquireShown(),
           let beside = writer.drawBeside(into: shown.buffer, shown: shown.window) {
            buffer = shown.buffer
            window = beside
        } else {
            window = writer.draw(into: buffer)
        }
        firstFrameTried = true
        do {
            try d.backend.present(buffer, window: window)
        } catch where error.reason == .windowRefused {
            // The driver will not show a window of a buffer: whole frames from
            // now on, or first one screen of room where more was refused.
            let retry = windowRoom > compositor.axisExtent
            log(.warning, "display: \(error); \(retry ? "asking for one screen of room" : "sliding by writing every frame instead")")
            windowRoom = 0
            writer.invalidate()
            if retry {
                roomScreens = 1
                reserveWindowRoom()
            }
            return
        } catch where error.reason == .gone {
            d.displayWentAway("\(error)")
            return
        } catch {
            // The frame stays due; try again a while later rather than on
            // every pass of the loop (which would spin and flood the log).
            presentFailures += 1
            if presentFailures == 1 || presentFailures % 60 == 0 {
                log(.error, "display: \(error)\(presentFailures > 1 ? " (\(presentFailures) times in a row)" : "")")
            }
            pacer.presentFailed(at: now)
            return
        }
        if presentFailures > 0 {
            log(.info, "display: presenting works again after \(presentFailures) failure\(presentFailures == 1 ? "" : "s")")
            presentFailures = 0
        }
        needsFrame = false
        if d.realTime, !framed.isEmpty {
            // What a frame that draws framings costs this board, smoothed.
            let cost = MonotonicClock.now() - began
            framedFrameCost = framedFrameCost == 0 ? cost : (3 * framedFrameCost + cost) / 4
        }
        shown = writer
        pacer.presented(at: now, onScreenLater: d.backend.presentsAsynchronously)
        if complete, !pictureShown {
            pictureShown = true
            firstPictureInFlight = true
            // Only now (taken once this frame is on screen): longer buffers
            // cost a reallocation the first picture should not wait for.
            reserveWindowRoom()
        }
        // Input opens with the first frame handed to the display, before
        // "first frame on screen" (and READY=1) is said: that line means
        // touch works too, also where the frame is on screen at once.
        if pacer.framesPresented == 1 { d.tell(.firstFramePresented) }
        // Without flip events a presented frame is on screen at once.
        if !d.backend.presentsAsynchronously { frameOnScreen() }
    }

    /// Ken Burns's framings of the items `placed` on screen, as zoom layers;
    /// the item `current` (the page at rest) is drawn from a decode sharp
    /// enough for its move, asked of the cache (the zoom's decode: one
    /// page's at a time; with `current` nil the cache is not asked).
    private func framedLayers(_ placed: [Compositor.Placement], current: Int?) -> [ZoomLayer] {
        let cache = daemon.cache, album = daemon.album
        guard !framings.isEmpty else {
            if current != nil { cache.wantZoom(nil, scale: 1) }
            return []
        }
        // The item's layout size (what the cache scales pictures to), read
        // from the compositor: not the cache's settings made anew each frame.
        let box = daemon.compositor.itemPixelSize
        var layers: [ZoomLayer] = []
        var sharpened = false
        for index in Set(placed.map(\.index)) {
            guard let key = album.key(index), let entry = framings[key] else { continue }
            var picture: DecodedImage?
            if index == current {
                // Decoded at the move's largest scale exactly, and drawn from
                // only where that is within bilinear's reduction: past it pixman
                // convolves, some 25 times dearer a frame (measured), and the
                // screen's picture scaled up is as sharp there.
                cache.wantZoom(key, scale: entry.largestScale, exact: true)
                if let sharp = cache.zoomImage(for: key), let item = daemon.picture(for: key), item.width > 0 {
                    let factor = Double(max(sharp.width, sharp.height)) / Double(max(item.width, item.height))
                    if factor / entry.framing.scale <= ImageScaler.bilinearReductionLimit { picture = sharp }
                }
                sharpened = true
            }
            layers.append(ZoomLayer(view: entry.framing.zoomView(item: index, width: Double(box.width), height: Double(box.height)),
                                    picture: picture))
        }
        if !sharpened, current != nil { cache.wantZoom(nil, scale: 1) }
        return layers
    }

    /// How long a frame that draws framings (Ken Burns at rest) takes on
    /// this board, µs, smoothed over the last few; 0 on a manual clock.
    private(set) var framedFrameCost: Int64 = 0

    /// Framed pages' pictures drawn once at their framing, for the frames
    /// of a motion (a slide, a drag, a crossfade): the frozen framing moves
    /// as a picture does, at a slide's cost, not a scaled copy's a frame.
    private(set) var baked: [PageKey: (framing: Framing, picture: DecodedImage)] = [:]

    /// Draws the framed pages of items `wanted` once at their framings
    /// (again when a framing changed), and lets go of the others. At rest
    /// these are the pages beside the one on screen, drawn where their moves
    /// start before a finger lands; while moving, those on screen and beside
    /// them: the page that was at rest is drawn once, with the motion's first
    /// frame, and a finger's move then waits for no scaled copy.
    private func bake(_ wanted: Set<Int>) {
        guard !framings.isEmpty || !baked.isEmpty else { return }
        let d = daemon, compositor = d.compositor
        let box = compositor.itemPixelSize
        let count = d.album.count
        var keep = Set<PageKey>()
        let indices = Set(wanted.map { count > 0 ? (($0 % count) + count) % count : $0 })
        for index in indices {
            guard let key = d.album.key(index), let entry = framings[key] else { continue }
            keep.insert(key)
            if baked[key]?.framing == entry.framing { continue }
            guard let item = d.cache.image(for: key) ?? (framed?.key == key ? framed?.picture : nil) else { continue }
            let view = entry.framing.zoomView(item: index, width: Double(box.width), height: Double(box.height))
            let sharp = d.cache.zoomImage(for: key)
            if let picture = compositor.framedPicture(view, picture: sharp ?? item, itemPicture: item) {
                baked[key] = (entry.framing, picture)
            }
        }
        for key in Array(baked.keys) where !keep.contains(key) { baked[key] = nil }
    }

    /// Ken Burns frames page `key`'s picture so (nil: whole again).
    func setFraming(_ key: PageKey, _ framing: Framing?, largestScale: Double) {
        framings[key] = framing.map { ($0, largestScale) }
        needsFrame = true
    }

    /// The zoomed picture at `time`, if one is: asks the cache for a decode
    /// at the resolution the zoom is heading for (made off the loop; until
    /// then the screen-size picture is scaled up), and lets it go after.
    private func zoomLayer(at time: Timestamp) -> ZoomLayer? {
        let model = daemon.model, cache = daemon.cache
        // (No zoom: the decode for one is let go by `framedLayers`, unless a framing wants it.)
        guard let view = model.zoomView(at: time), let key = daemon.album.key(view.item) else { return nil }
        cache.wantZoom(key, scale: max(view.scale, model.zoomTarget))
        return ZoomLayer(view: view, picture: cache.zoomImage(for: key))
    }

    /// Asks the decode cache for what the screen shows at offset `x`, then
    /// where the motion in flight comes to rest, then the neighbours (see
    /// `AlbumState.wanted`); returns the placements of the items on screen.
    /// The wanted list is built only when what it is made of changed (the
    /// items on screen, the target, the current item, the direction, the
    /// album): while the content moves that is a few times a slide, not every frame.
    @discardableResult
    func requestPictures(at x: Double) -> [Compositor.Placement] {
        let album = daemon.album
        let wrap = daemon.config.carousel.wrap
        daemon.compositor.placements(offset: x, count: album.count, wrap: wrap, into: &placements)
        let placed = placements
        // Placements are consecutive slots: the first index and the count name them all.
        // A clip whose frames show needs no first frame meanwhile: a
        // screen's worth of memory less while it plays.
        let playing = framed?.key
        let key = WantedKey(album: album.generation, firstOnScreen: placed.first?.index ?? -1, onScreen: placed.count,
                            heading: prefetchTarget, current: daemon.model.lattice.itemIndex(at: x), direction: travel,
                            wrap: wrap, playing: playing, behind: movedYet)
        if key != wantedKey {
            wantedKey = key
            var wanted = album.wanted(onScreen: placed.map(\.index), heading: prefetchTarget,
                                      current: key.current, direction: travel, wrap: wrap, behind: movedYet)
            if let playing { wanted.removeAll { $0 == playing } }
            daemon.cache.want(wanted)
        }
        return placed
    }

    /// What the last wanted list was made of (see `requestPictures`).
    private struct WantedKey: Equatable {
        var album: Int
        var firstOnScreen: Int
        var onScreen: Int
        var heading: [Int]
        var current: Int
        var direction: Int
        var wrap: Bool
        var playing: PageKey?
        var behind: Bool
    }

    /// Asks the display for buffers two screens longer along the panel axis
    /// (`roomScreens`), so that a slide moves the scan-out window rather
    /// than the pixels, and lays the next picture out beside the one at rest:
    /// once the first picture is on screen (it must not wait for them), and
    /// only when no flip is in flight: when a frame reached the screen, or
    /// before the next one is drawn (a backend remaking its buffers must not
    /// swallow the flip event the pacer waits for).
    private func reserveWindowRoom() {
        guard pictureShown else { return }
        windowRoomDue = true
    }

    private func applyWindowRoom() {
        windowRoomDue = false
        // `[display] zero_copy = false`: panel-sized buffers (a driver that shows the wrong window).
        let extent = daemon.config.display.zeroCopy ? roomScreens * daemon.compositor.axisExtent : 0
        let granted = daemon.backend.reserveWindowRoom(extent, along: writer.axis)
        if granted != windowRoom || !windowRoomSaid {
            let written = extent == 0 ? "[display] zero_copy = false" : "no room for a moving window"
            log(.info, granted > 0
                ? "display: slides move the scan-out window over buffers \(granted) px longer \(writer.axis == .horizontal ? "across" : "down") (zero copy)"
                : "display: slides are written frame by frame (\(written))")
            windowRoomSaid = true
        }
        windowRoom = granted
    }

    func holding(_ now: Int64) -> Bool { now < holdUntil && needsFrame }

    /// A presented frame reached the screen.
    private func frameOnScreen() {
        let d = daemon
        defer {
            // After the start lines: what they time is the screen, not this.
            if windowRoomDue, d.backend.isPresent { applyWindowRoom() }
        }
        d.noteFrameAfterWake()
        if !firstFrameShown {
            firstFrameShown = true
            log(.info, "first frame on screen \((d.clock() - d.startedAt) / 1000) ms after start")
            d.notifier.ready(status: d.statusLine)
        }
        if firstPictureInFlight {
            firstPictureInFlight = false
            let beforeMain = d.enteredMain.map { "; \(($0 - d.startedAt) / 1000) ms of it before main (exec, libraries, runtime)" } ?? ""
            log(.info, "first picture on screen \((d.clock() - d.startedAt) / 1000) ms after start\(beforeMain)")
        }
    }
}
