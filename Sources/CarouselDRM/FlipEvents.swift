import CDRM
import CarouselDisplay
import CarouselPlatform
#if canImport(Glibc)
import Glibc
#endif

/// Page-flip events as `drmHandleEvent` delivers them. Each flip carries a
/// pointer to this log as its user data; the C handler finds it there (a
/// `@convention(c)` function cannot capture anything). The backend keeps
/// the log alive for as long as a flip can be pending.
final class FlipLog {
    /// Flip-complete events read so far.
    private(set) var completed = 0
    /// When the last flip reached the screen: the kernel's CLOCK_MONOTONIC
    /// timestamp of its vblank, in microseconds.
    private(set) var lastMicroseconds: Int64?
    /// The CRTC's vblank counter at the last flip (0 on drivers without vblank).
    private(set) var lastSequence: UInt32 = 0

    var userData: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    fileprivate func record(sequence: UInt32, seconds: UInt32, microseconds: UInt32) {
        completed += 1
        lastSequence = sequence
        lastMicroseconds = Int64(seconds) * 1_000_000 + Int64(microseconds)
    }

    /// A flip that completed in its commit (no event): shown at `microseconds`
    /// (CLOCK_MONOTONIC), with no vblank counter.
    func recordShown(atMicroseconds microseconds: Int64) {
        completed += 1
        lastSequence = 0
        lastMicroseconds = microseconds
    }

    /// Reads the events waiting on `device` (page flips of this log) and
    /// returns whether there were any: `false` if the descriptor had nothing
    /// (EAGAIN: it is non-blocking).
    /// The corresponding C function is `drmHandleEvent`.
    func read(from device: DRMDevice) throws(DisplayError) -> Bool {
        var context = drmEventContext()
        // Version 2: page_flip_handler without the CRTC id, which the one
        // CRTC we drive does not need.
        context.version = 2
        context.page_flip_handler = { _, sequence, seconds, microseconds, userData in
            guard let userData else { return }
            Unmanaged<FlipLog>.fromOpaque(userData).takeUnretainedValue()
                .record(sequence: sequence, seconds: seconds, microseconds: microseconds)
        }
        let fd = device.fd
        do throws(SystemCallError) {
            return try attemptSystemCall("drmHandleEvent") { drmHandleEvent(fd, &context) } != nil
        } catch {
            throw DRMErrors.failed(error, what: "reading page-flip events", device: device.path)
        }
    }
}

/// Waits up to `milliseconds` for `fd` to become readable: `true` if it did.
/// The corresponding C function is `poll`.
func waitReadable(_ fd: Int32, milliseconds: Int) -> Bool {
    let deadline = MonotonicClock.now() + Int64(milliseconds) * 1000
    while true {
        let remaining = (deadline - MonotonicClock.now() + 999) / 1000
        guard remaining > 0 else { return false }
        var request = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        // poll's EINTR is retried by the helper (with the whole timeout again:
        // the loop above re-checks the deadline only after a wake-up).
        guard let n = try? systemCall("poll", { poll(&request, 1, Int32(clamping: remaining)) }) else { return false }
        if n > 0 { return true }
    }
}

/// Writes a line to standard error, as the daemon's log does (the line
/// carries its own syslog priority prefix).
func writeStandardError(_ line: String) {
    var text = line.hasSuffix("\n") ? line : line + "\n"
    text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            guard let n = try? systemCall("write", { write(2, bytes.baseAddress! + offset, bytes.count - offset) }), n > 0
            else { return }
            offset += n
        }
    }
}
