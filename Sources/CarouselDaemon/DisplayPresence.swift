import CarouselDisplay
import CarouselPlatform

/// The display coming and going: set up anew, plugged or unplugged, its
/// device gone under the daemon and back.
extension Daemon {
    /// The display was set up anew (a hotplug, a new mode): a flip in flight
    /// was completed or dropped by the backend, so no flip event will come
    /// for it; draw a whole new frame.
    func displayWasRemodeset() {
        frames.displayReset(remodeset: true)
    }

    /// A display was plugged or unplugged: look again; a new mode of the same
    /// size is simply drawn into, a different size is laid out again.
    func displayChanged() {
        let before = backend.panelSize
        do {
            guard try backend.reprobe() else { return }
        } catch {
            log(.warning, "display hotplug: \(error)")
            return
        }
        log(.info, "display re-modeset: \(backend.summary)")
        displayWasRemodeset()
        if backend.panelSize != before {
            log(.info, "display is now \(backend.panelSize) (was \(before)); laying out again")
            relayout()
        }
    }

    /// Whether the display's device is away (`AbsentDisplay` stands in).
    public var displayIsAway: Bool { !backend.isPresent }

    /// The display's device went away under us (a `remove` event for its
    /// card, or ENODEV from presenting): one line, the stand-in takes its
    /// place, and the carousel runs on (autoplay, commands, input) without
    /// drawing until `displayMayBeBack` finds a display again.
    public func displayWentAway(_ why: String) {
        guard !displayIsAway else { return }
        let gone = backend
        backend = AbsentDisplay(replacing: gone)
        gone.abandon()
        log(.warning, "display: \(gone.summary) went away (\(why)); "
            + (reopenDisplay == nil ? "nothing will be drawn" : "the carousel runs on and draws again when it is back"))
        frames.displayReset(remodeset: false)
    }

    /// A card appeared (or a connector changed) while the display was away:
    /// open it again; once it opens, draw a whole frame there (laid out
    /// anew if its size or orientation differs). Not there yet: wait for
    /// the next event, quietly.
    public func displayMayBeBack() {
        guard displayIsAway, let reopen = reopenDisplay else { return }
        let fresh: DisplayBackend
        do {
            fresh = try reopen(config)
        } catch {
            log(.debug, "display not back yet: \(error)")
            return
        }
        let before = backend
        backend = fresh
        log(.info, "display is back: \(fresh.summary)")
        if power.isOff {
            // It came back lit; it was switched off.
            do { try fresh.setPower(on: false) } catch { log(.error, "display: cannot switch \(fresh.summary) off again: \(error)") }
        }
        displayWasRemodeset()
        if fresh.panelSize != before.panelSize || fresh.panelRotation != before.panelRotation
            || fresh.physicalSize != before.physicalSize {
            relayout()
        }
    }
}
