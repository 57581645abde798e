import CPlatform
#if canImport(Glibc)
import Glibc
#endif

/// How a worker thread shares a busy CPU with the event loop.
public enum ThreadPriority {
    /// How much nicer than the loop a background thread is: at nice 10
    /// against 0 the kernel gives the loop about nine tenths of a CPU both want.
    public static let backgroundNice: Int32 = 10

    /// Makes the calling thread nicer by `backgroundNice`, once per thread, so
    /// that on a board with one core a decode gives way to the loop: a frame
    /// of a slide, a touch, the first picture's flip. It takes only the CPU
    /// the loop leaves, which is all of it while the loop sleeps.
    /// Returns false where the kernel refused (the thread runs on as it was).
    @discardableResult
    public static func yieldToTheLoop() -> Bool { cplatform_nice_this_thread(backgroundNice) == 0 }

    /// The calling thread's nice value (for tests and figures).
    public static func currentNice() -> Int32 {
        errno = 0
        let tid = id_t(cplatform_thread_id())
        return getpriority(__priority_which_t(PRIO_PROCESS.rawValue), tid)
    }
}
