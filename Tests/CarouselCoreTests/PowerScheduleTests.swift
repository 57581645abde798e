import Testing
import CarouselCore

@Suite struct PowerScheduleTests {
    func minute(_ day: Int, _ h: Int, _ m: Int = 0) -> Int { day * 1440 + h * 60 + m }
    func schedule(_ text: String) throws -> PowerSchedule { try #require(try PowerSchedule.parse(text)) }

    @Test func theIssuesExample() throws {
        let s = try schedule("mon-fri 07:00-22:00, sat,sun 09:00-23:00")
        #expect(!s.isOn(weekMinute: minute(0, 6, 59)))
        #expect(s.isOn(weekMinute: minute(0, 7)))
        #expect(s.isOn(weekMinute: minute(4, 21, 59)))
        #expect(!s.isOn(weekMinute: minute(4, 22)))
        #expect(!s.isOn(weekMinute: minute(5, 8, 59)))
        #expect(s.isOn(weekMinute: minute(6, 22, 59)))
        #expect(!s.isOn(weekMinute: minute(6, 23)))
        // Friday 22:00 off until Saturday 09:00: 11 hours.
        #expect(s.minutesToNextChange(after: minute(4, 22)) == 11 * 60)
        // Sunday 23:00 off until Monday 07:00, across the week's end.
        #expect(s.minutesToNextChange(after: minute(6, 23)) == 8 * 60)
        #expect(s.minutesToNextChange(after: minute(2, 12, 30)) == 9 * 60 + 30)
    }

    @Test func acrossMidnightAndWholeDays() throws {
        // A bar's signage: on from 18:00 until 02:00 the next morning,
        // Sunday night into Monday morning too.
        let bar = try schedule("daily 18:00-02:00")
        #expect(bar.isOn(weekMinute: minute(0, 1, 59)))      // Monday 01:59: Sunday's evening
        #expect(!bar.isOn(weekMinute: minute(0, 2)))
        #expect(bar.isOn(weekMinute: minute(6, 23, 59)))
        #expect(bar.minutesToNextChange(after: minute(6, 23)) == 3 * 60)
        let always = try schedule("daily 00:00-24:00")
        #expect(always.isOn(weekMinute: minute(3, 12)))
        #expect(always.minutesToNextChange(after: 0) == nil)
        // Ranges of days wrap over the weekend; several on-times a day.
        let shop = try schedule("fri-mon 10:00-12:00 14:00-18:00, wed 09:00-09:30")
        #expect(shop.isOn(weekMinute: minute(6, 11)) && shop.isOn(weekMinute: minute(0, 15)))
        #expect(!shop.isOn(weekMinute: minute(1, 11)) && !shop.isOn(weekMinute: minute(0, 13)))
        #expect(shop.minutesToNextChange(after: minute(0, 12)) == 2 * 60)
        #expect(shop.isOn(weekMinute: minute(2, 9, 29)) && !shop.isOn(weekMinute: minute(2, 9, 30)))
        #expect(try PowerSchedule.parse("  ") == nil)
    }

    @Test func everyChangeItReportsIsOneAndNoneIsSkipped() throws {
        for text in ["mon-fri 07:00-22:00, sat,sun 09:00-23:00", "daily 18:00-02:00", "sun 23:00-01:00",
                     "fri-mon 10:00-12:00 14:00-18:00, wed 09:00-09:30"] {
            let s = try schedule(text)
            var m = 0
            var changes = 0
            // The changes in one week (0, 10080]: each interval's two edges,
            // less the two of a seam over the week's end.
            while true {
                let ahead = try #require(s.minutesToNextChange(after: m), "\(text)")
                if m + ahead > PowerSchedule.minutesPerWeek { break }
                // The state holds until the change, and flips there.
                for k in stride(from: 0, to: ahead, by: 7) {
                    #expect(s.isOn(weekMinute: m + k) == s.isOn(weekMinute: m), "\(text) at \(m + k)")
                }
                #expect(s.isOn(weekMinute: m + ahead) != s.isOn(weekMinute: m + ahead - 1), "\(text) at \(m + ahead)")
                m += ahead
                changes += 1
            }
            #expect(changes == 2 * s.intervals.count - (s.intervals.first?.lowerBound == 0
                                                          && s.intervals.last?.upperBound == PowerSchedule.minutesPerWeek ? 2 : 0),
                    "\(text): \(changes) changes for \(s.intervals)")
        }
    }

    @Test(arguments: [
        ("07:00-22:00", "no days before it"),
        ("mon-fri", "needs an on-time"),
        ("mon-fri 7:00-22:00", "not an on-time"),
        ("mon-fri 07:00-25:00", "not an on-time"),
        ("mon-fri 07:00-22:60", "not an on-time"),
        ("mon-fri 07:00", "not an on-time"),
        ("mon-fri 24:00-07:00", "not an on-time"),
        ("mon-fri 07:00-07:00", "same time"),
        ("monday 07:00-22:00", "not a day"),
        ("mon-fri-sat 07:00-22:00", "not a day or a range"),
        ("mon-fri +7:00-22:00", "not an on-time"),
    ])
    func badValuesSayWhy(text: String, why: String) {
        #expect {
            _ = try PowerSchedule.parse(text)
        } throws: { error in
            "\(error)".contains(why)
        }
    }
}
