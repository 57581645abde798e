#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Local wall-clock time, through the C library's time zone (`TZ`, else
/// /etc/localtime): what `[power] schedule` is written in.
public enum LocalTime {
    /// The minute of the week at `epoch` (seconds since 1970, UTC): 0 is
    /// Monday 00:00 local time; and the seconds into that minute.
    public static func weekMinute(at epoch: Int) -> (minute: Int, second: Int) {
        var t = time_t(epoch)
        var parts = tm()
        tzset()
        guard localtime_r(&t, &parts) != nil else { return (0, 0) }
        let weekday = (Int(parts.tm_wday) + 6) % 7   // tm_wday: 0 is Sunday
        return (weekday * 1440 + Int(parts.tm_hour) * 60 + Int(parts.tm_min), Int(parts.tm_sec))
    }

    /// The instant (seconds since 1970) at which the local clock shows the
    /// start of the minute `minutes` after the one it shows at `epoch`.
    /// Counted on the wall clock, not in seconds: across a daylight-saving
    /// change "22:00 to 07:00" is nine clock hours, eight or ten real ones.
    /// A clock time that does not exist that night (02:30 when the clock
    /// jumps from 02:00 to 03:00) is the moment after the jump.
    public static func instant(minutes: Int, afterMinuteOf epoch: Int) -> Int {
        var t = time_t(epoch)
        var parts = tm()
        tzset()
        guard localtime_r(&t, &parts) != nil else { return epoch + 60 * minutes }
        let wanted = (hour: Int(parts.tm_hour), minute: Int(parts.tm_min) + minutes)
        parts.tm_sec = 0
        parts.tm_min = Int32(wanted.minute)
        parts.tm_hour = Int32(wanted.hour)
        parts.tm_isdst = -1   // let mktime decide whether that moment is summer time
        let result = mktime(&parts)
        guard result != -1 else { return epoch + 60 * minutes }
        return Int(result)
    }
}
