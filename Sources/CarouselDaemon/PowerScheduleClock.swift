import CarouselCore
import CarouselLoop
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

extension Daemon {
    /// The schedule at `now`: the display is switched off when an on-time
    /// ends and on when one begins (while `display auto` decides), and the
    /// next change is the screen power's deadline. `recompute` looks again
    /// before the deadline (a reload, the wall clock set); `reassert` also
    /// makes the display what the schedule says now (`display auto`). Only
    /// once the first picture is on screen (or there is none to wait for): a
    /// daemon started at night shows it, and tells systemd it is ready,
    /// before it goes dark. A picture that never decodes holds this up 30 s at most.
    func applySchedule(now: Int64, recompute: Bool = false, reassert: Bool = false) {
        guard scheduleMayApply(now: now) else { return }
        guard let schedule = config.power.schedule else {
            if let action = power.scheduleRemoved() { carryOut(action, at: now) }
            return
        }
        // Between changes (or with none to come) there is nothing to look at.
        guard power.scheduleDue(now: now, recompute: recompute || reassert) else { return }
        let minute = localClock.weekMinute(now)
        let next = schedule.minutesToNextChange(after: minute).map { localClock.instant($0, now) }
        if let action = power.schedule(off: !schedule.isOn(weekMinute: minute), nextChange: next, now: now, reassert: reassert) {
            carryOut(action, at: now)
        }
    }

    private func scheduleMayApply(now: Int64) -> Bool {
        frames.firstFrameShown && (frames.pictureShown || album.isEmpty || now - startTime > Self.scheduleWaitMicroseconds)
    }

    /// How long the schedule's first word waits for the start picture.
    static let scheduleWaitMicroseconds: Int64 = 30_000_000

    /// When the schedule is first to be applied (µs), while it has not been:
    /// at once once the start picture is on screen, else when the wait for
    /// it ends; nil before the first frame (each pass looks again).
    func scheduleFirstDue(now: Int64) -> Int64? {
        guard config.power.schedule != nil, !power.scheduleApplied, frames.firstFrameShown else { return nil }
        return scheduleMayApply(now: now) ? now : startTime + Self.scheduleWaitMicroseconds
    }
}
