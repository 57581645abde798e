/// When the display is on: `[power] schedule`, e.g.
/// `mon-fri 07:00-22:00, sat,sun 09:00-23:00`.
///
/// A list of days followed by one or more on-times; a new list of days
/// starts after an on-time. Days are `mon` ... `sun`, ranges of them
/// (`mon-fri`, `fri-mon`), or `daily`. An on-time `HH:MM-HH:MM` may end at
/// `24:00`, and may cross midnight (`18:00-02:00`: the hours after midnight
/// belong to the next day). Outside every on-time the display is off.
///
/// Pure: it works on local wall-clock times (weekday and minute of the
/// day); turning them into instants, with the time zone and its daylight
/// saving changes, is the daemon's job (`LocalClock`).
public struct PowerSchedule: Equatable, Sendable {
    /// On-minutes of the week: minute 0 is Monday 00:00.
    public static let minutesPerWeek = 7 * 24 * 60
    /// Half-open intervals within one week, sorted, not overlapping, not
    /// touching (an on-time across Sunday midnight is split in two).
    public private(set) var intervals: [Range<Int>]

    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    static let dayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

    /// Parses the key's value; an empty value is no schedule (`nil`).
    public static func parse(_ text: String) throws(ParseError) -> PowerSchedule? {
        let tokens = text.lowercased().split { $0 == "," || $0 == " " || $0 == "\t" }.map(String.init)
        guard !tokens.isEmpty else { return nil }
        var minutes: [Range<Int>] = []
        var days: Set<Int> = []
        var daysUsed = false
        for token in tokens {
            if let range = try timeRange(token) {
                guard !days.isEmpty else {
                    throw ParseError(message: "'\(token)' has no days before it (e.g. mon-fri \(token))")
                }
                daysUsed = true
                for day in days {
                    let start = day * 24 * 60 + range.start
                    let end = day * 24 * 60 + range.end + (range.end <= range.start ? 24 * 60 : 0)
                    minutes.append(start..<end)
                }
            } else {
                if daysUsed {
                    days = []
                    daysUsed = false
                }
                days.formUnion(try Self.days(token))
            }
        }
        guard daysUsed else {
            throw ParseError(message: "'\(tokens.last!)' needs an on-time after it (e.g. \(tokens.last!) 07:00-22:00)")
        }
        return PowerSchedule(weekMinutes: minutes)
    }

    /// From on-times in minutes since Monday 00:00 (an end past the week's
    /// end wraps to its start).
    public init(weekMinutes: [Range<Int>]) {
        let week = Self.minutesPerWeek
        var pieces: [Range<Int>] = []
        for r in weekMinutes where !r.isEmpty {
            if r.count >= week {
                pieces = [0..<week]
                break
            }
            let start = ((r.lowerBound % week) + week) % week
            let end = start + r.count
            if end <= week {
                pieces.append(start..<end)
            } else {
                pieces.append(start..<week)
                pieces.append(0..<(end - week))
            }
        }
        pieces.sort { $0.lowerBound < $1.lowerBound }
        var merged: [Range<Int>] = []
        for p in pieces {
            if let last = merged.last, p.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, p.upperBound)
            } else {
                merged.append(p)
            }
        }
        intervals = merged
    }

    /// Whether the display is on at minute `minute` of the week (0 = Monday 00:00).
    public func isOn(weekMinute minute: Int) -> Bool {
        let m = ((minute % Self.minutesPerWeek) + Self.minutesPerWeek) % Self.minutesPerWeek
        return intervals.contains { $0.contains(m) }
    }

    /// The next minute of the week after `minute` at which the state
    /// changes, as a number of minutes ahead (1 ... one week); nil when it
    /// never changes (always on or never on).
    public func minutesToNextChange(after minute: Int) -> Int? {
        let week = Self.minutesPerWeek
        guard !intervals.isEmpty, intervals != [0..<week] else { return nil }
        let m = ((minute % week) + week) % week
        var best: Int?
        for r in intervals {
            for edge in [r.lowerBound, r.upperBound] {
                var ahead = (edge - m + week) % week
                if ahead == 0 { ahead = week }
                // An edge where the state does not change (Sunday 24:00 into
                // Monday 00:00 both on) is not a change.
                if isOn(weekMinute: edge - 1) == isOn(weekMinute: edge) { continue }
                if best == nil || ahead < best! { best = ahead }
            }
        }
        return best
    }

    private static func days(_ token: String) throws(ParseError) -> Set<Int> {
        if token == "daily" { return Set(0..<7) }
        let parts = token.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        func day(_ s: String) throws(ParseError) -> Int {
            guard let i = dayNames.firstIndex(of: s) else {
                throw ParseError(message: "'\(token)' is not a day: use mon tue wed thu fri sat sun, ranges like mon-fri, or daily")
            }
            return i
        }
        switch parts.count {
        case 1:
            return [try day(parts[0])]
        case 2:
            let a = try day(parts[0]), b = try day(parts[1])
            var out: Set<Int> = [a]
            var d = a
            while d != b {
                d = (d + 1) % 7
                out.insert(d)
            }
            return out
        default:
            throw ParseError(message: "'\(token)' is not a day or a range of days (e.g. mon-fri)")
        }
    }

    /// `HH:MM-HH:MM` in minutes of the day, nil when the token is not one
    /// (a day); an error when it looks like one but is not valid.
    private static func timeRange(_ token: String) throws(ParseError) -> (start: Int, end: Int)? {
        guard token.contains(":") else { return nil }
        let parts = token.split(separator: "-", omittingEmptySubsequences: false)
        func time(_ s: Substring) -> Int? {
            let hm = s.split(separator: ":", omittingEmptySubsequences: false)
            let digits = { (part: Substring) in part.count == 2 && part.allSatisfy { $0.isASCII && $0.isNumber } }
            guard hm.count == 2, digits(hm[0]), digits(hm[1]), let h = Int(hm[0]), let m = Int(hm[1]),
                  (0...24).contains(h), (0..<60).contains(m), h < 24 || m == 0 else { return nil }
            return h * 60 + m
        }
        guard parts.count == 2, let start = time(parts[0]), let end = time(parts[1]), start < 24 * 60 else {
            throw ParseError(message: "'\(token)' is not an on-time: use HH:MM-HH:MM, e.g. 07:00-22:00 (24:00 ends at midnight)")
        }
        guard start != end else {
            throw ParseError(message: "'\(token)' starts and ends at the same time: for all day use 00:00-24:00")
        }
        return (start, end)
    }
}
