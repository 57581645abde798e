import CarouselAlbum
import CarouselConfig
import CarouselCore
import CarouselDisplay
import CarouselImaging
import CarouselPlatform
import CarouselRender

/// The frame path: what the screen shows at an instant, asked of the
/// decode cache, laid out, written into the display's buffer (only what
/// changed) and presented, paced by `FramePacer`.
extension Daemon {
    /// Draws a frame if the model's effects asked for one (or for every
    /// frame while moving) and the panel can take one now. The last frame of
    /// a motion is drawn where it came to rest: the model says `moving` is
    /// over, with `needsFrame`, at the instant a settle ends on its page.
    func drawIfNeeded(now: Int64) {
        guard moving || needsFrame, !power.isOff, pacer.mayDraw(at: now) else { return }
        if windowRoomDue, !displayIsAway { applyWindowRoom() }
        let x = model.offset(at: Timestamp(microseconds: now))
        // A crossfade shows the pictures at both ends: those it fades out
        // are asked for with the ones it fades in (the motion's heading).
        let crossfade = model.crossfade(at: Timestamp(microseconds: now))
        let placed = requestPictures(at: crossfade?.from ?? x)
        if holding(now), !moving,
           !placed.allSatisfy({ album.path($0.index).flatMap(cache.image(for:)) != nil }) {
            return  // the old frame stays until the pictures are ready (or the hold ends)
        }
        guard let buffer = backend.acquire() else { return }
        holdUntil = 0
        let page = model.lattice.cyclePage(model.lattice.nearestPage(to: x))
        let zoom = zoomLayer(at: Timestamp(microseconds: now))
        // While the content moves, what comes next along the way is laid out
        // too where the buffers have room: the slide moves the window over it.
        // (A crossfade moves nothing: its frames are written whole. Nor while
        // a picture is zoomed: its pixels change with every frame.)
        let ahead = moving && windowRoom > 0 && crossfade == nil && zoom == nil ? travel * windowRoom : 0
        compositor.layOut(&writer.scene, offset: crossfade?.from ?? x, count: album.count, wrap: config.carousel.wrap,
                          page: page, pageCount: model.numberOfPages, ahead: ahead, zoom: zoom) { i in
            self.album.path(i).flatMap(self.cache.image(for:))
        }
        writer.fade = crossfade?.fraction
        if let crossfade {
            compositor.layOut(&writer.incoming, offset: crossfade.to, count: album.count, wrap: config.carousel.wrap,
                              page: page, pageCount: model.numberOfPages) { i in
                self.album.path(i).flatMap(self.cache.image(for:))
            }
        }
        writer.scene.stamp = clockOverlay.stamp
        let complete = !placed.isEmpty && writer.scene.complete
        let window = writer.draw(into: buffer)
        do {
            try backend.present(buffer, window: window)
        } catch where error.reason == .windowRefused {
            // The driver will not show a window of a buffer: whole frames from now on.
            log(.warning, "display: \(error); sliding by writing every frame instead")
            windowRoom = 0
            writer.invalidate()
            return
        } catch where error.reason == .gone {
            displayWentAway("\(error)")
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
        shown = writer
        pacer.presented(at: now, onScreenLater: backend.presentsAsynchronously)
        if complete, !pictureShown {
            pictureShown = true
            firstPictureInFlight = true
            // Only now (taken once this frame is on screen): longer buffers
            // cost a reallocation the first picture should not wait for.
            reserveWindowRoom()
        }
        // Without flip events a presented frame is on screen at once.
        if !backend.presentsAsynchronously { frameOnScreen() }
        if pacer.framesPresented == 1 { tell(.firstFramePresented) }
    }

    /// The zoomed picture at `time`, if one is: asks the cache for a decode
    /// at the resolution the zoom is heading for (made off the loop; until
    /// then the screen-size picture is scaled up), and lets it go after.
    func zoomLayer(at time: Timestamp) -> ZoomLayer? {
        guard let view = model.zoomView(at: time), let path = album.path(view.item) else {
            cache.wantZoom(path: nil, scale: 1)
            return nil
        }
        cache.wantZoom(path: path, scale: max(view.scale, model.zoomTarget))
        return ZoomLayer(view: view, picture: cache.zoomImage(for: path))
    }

    /// Asks the decode cache for what the screen shows at offset `x`, then
    /// where the motion in flight comes to rest, then the neighbours (see
    /// `AlbumState.wanted`); returns the placements of the items on screen.
    /// The wanted list is built only when what it is made of changed (the
    /// items on screen, the target, the current item, the direction, the
    /// album): while the content moves that is a few times a slide, not every frame.
    @discardableResult
    func requestPictures(at x: Double) -> [Compositor.Placement] {
        let wrap = config.carousel.wrap
        compositor.placements(offset: x, count: album.count, wrap: wrap, into: &placements)
        let placed = placements
        // Placements are consecutive slots: the first index and the count name them all.
        let key = WantedKey(album: album.generation, firstOnScreen: placed.first?.index ?? -1, onScreen: placed.count,
                            heading: prefetchTarget, current: model.lattice.itemIndex(at: x), direction: travel, wrap: wrap)
        if key != wantedKey {
            wantedKey = key
            cache.want(album.wanted(onScreen: placed.map(\.index), heading: prefetchTarget,
                                    current: key.current, direction: travel, wrap: wrap))
        }
        return placed
    }

    /// What the last wanted list was made of (see `requestPictures`).
    struct WantedKey: Equatable {
        var album: Int
        var firstOnScreen: Int
        var onScreen: Int
        var heading: [Int]
        var current: Int
        var direction: Int
        var wrap: Bool
    }


    /// Asks the display for buffers one screen longer along the panel axis,
    /// so that a slide moves the scan-out window rather than the pixels:
    /// once the first picture is on screen (it must not wait for them), and
    /// only when no flip is in flight: when a frame reached the screen, or
    /// before the next one is drawn (a backend remaking its buffers must not
    /// swallow the flip event the pacer waits for).
    func reserveWindowRoom() {
        guard pictureShown else { return }
        windowRoomDue = true
    }

    func applyWindowRoom() {
        windowRoomDue = false
        // `[display] zero_copy = false`: panel-sized buffers (a driver that shows the wrong window).
        let granted = backend.reserveWindowRoom(config.display.zeroCopy ? compositor.axisExtent : 0, along: writer.axis)
        if granted != windowRoom {
            log(.info, granted > 0
                ? "display: slides move the scan-out window over buffers \(granted) px longer \(writer.axis == .horizontal ? "across" : "down") (zero copy)"
                : "display: slides are written frame by frame (no room for a moving window)")
        }
        windowRoom = granted
    }

    func holding(_ now: Int64) -> Bool { now < holdUntil && needsFrame }

    /// A presented frame reached the screen.
    func frameOnScreen() {
        defer {
            // After the start lines: what they time is the screen, not this.
            if windowRoomDue, backend.isPresent { applyWindowRoom() }
        }
        noteFrameAfterWake()
        if !firstFrameShown {
            firstFrameShown = true
            log(.info, "first frame on screen \((clock() - startedAt) / 1000) ms after start")
            notifier.ready(status: statusLine)
        }
        if firstPictureInFlight {
            firstPictureInFlight = false
            let beforeMain = enteredMain.map { "; \(($0 - startedAt) / 1000) ms of it before main (exec, libraries, runtime)" } ?? ""
            log(.info, "first picture on screen \((clock() - startedAt) / 1000) ms after start\(beforeMain)")
        }
    }
}
