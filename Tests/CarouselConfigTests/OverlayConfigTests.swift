// [overlay]: every key read, bad values refused with one clear line, the
// clock format's small language.

import CarouselConfig
import CarouselCore
import Testing
import CarouselPushedTextWords

@Suite("[overlay] keys") struct OverlayConfigTests {
    @Test func defaultsAreNoCaptionNoClockAndDejaVuSansWithAShadow() throws {
        let o = try Configuration.parse("", file: "c.ini").overlay
        #expect(o.caption == .none)
        #expect(o.clock == nil)
        #expect(o.position == .bottomLeft)
        #expect(o.clockPosition == .topRight)
        #expect(o.text.font == "DejaVu Sans")
        #expect(o.text.size == nil)
        #expect(o.text.backdrop == .shadow)
        #expect(o.text.pixelSize(shorterSide: 1080) == 43)
        let pushed = try Configuration.parse("", file: "c.ini")[PushedTextSettings.self]
        #expect(pushed.textFile == nil)
        #expect(pushed.textPosition == .topLeft, "away from the caption's and the clock's corners")
    }

    @Test func everyKeyIsRead() throws {
        let text = """
        [overlay]
        caption = sidecar
        position = top-center
        clock = h:MM am
        clock_position = bottom-right
        font = Noto Sans:bold
        size = 30
        color = #FFEE00CC
        backdrop = scrim
        text_file = /dev/shm/frame-text
        text_position = bottom-right
        """
        let read = try Configuration.parse(text, file: "c.ini")
        let o = read.overlay
        #expect(o.caption == .sidecar)
        #expect(o.position == .topCenter)
        #expect(o.clock?.description == "h:MM am")
        #expect(o.clockPosition == .bottomRight)
        #expect(o.text.font == "Noto Sans:bold")
        #expect(o.text.size == 30)
        #expect(o.text.color == PixelColor(red: 0xFF, green: 0xEE, blue: 0, alpha: 0xCC))
        #expect(o.text.backdrop == .scrim)
        #expect(read[PushedTextSettings.self].textFile == "/dev/shm/frame-text")
        #expect(read[PushedTextSettings.self].textPosition == .bottomRight)
    }

    @Test(arguments: [
        ("[overlay]\ncaption = title", "c.ini:2: caption = 'title': expected one of: none, date, name, exif, sidecar"),
        ("[overlay]\nclock = HH", "c.ini:2: clock = 'HH': expected none or a clock format with one hour field (HH, H, hh or h) and MM (no seconds: it repaints once a minute), e.g. HH:MM or h:MM am"),
        ("[overlay]\nclock = HH:MM:SS", "c.ini:2: clock = 'HH:MM:SS': expected none or a clock format with one hour field (HH, H, hh or h) and MM (no seconds: it repaints once a minute), e.g. HH:MM or h:MM am"),
        ("[overlay]\nposition = middle", "c.ini:2: position = 'middle': expected one of: bottom-left, bottom-center, bottom-right, top-left, top-center, top-right"),
        ("[overlay]\nsize = 4", "c.ini:2: size = '4': out of range: allowed 8 to 400"),
        ("[overlay]\ncolor = white", "c.ini:2: color = 'white': expected a colour #RRGGBB or #RRGGBBAA"),
        ("[overlay]\nfont = ", "c.ini:2: font = '': expected a fontconfig pattern such as DejaVu Sans (fc-list : family lists the fonts)"),
        ("[overlay]\ncaption = date\nclock = HH:MM\nposition = top-right\n",
         "c.ini:4: [overlay] clock_position and position are both top-right: the clock would cover the captions; put one of them elsewhere"),
        ("[overlay]\ntext_file = frame-text", "c.ini:2: text_file = 'frame-text': expected an absolute path to a file, such as /dev/shm/carouseld-text"),
        ("[overlay]\ntext_file = /dev/shm/", "c.ini:2: text_file = '/dev/shm/': expected an absolute path to a file, such as /dev/shm/carouseld-text"),
        ("[overlay]\ntext_position = middle", "c.ini:2: text_position = 'middle': expected one of: bottom-left, bottom-center, bottom-right, top-left, top-center, top-right"),
        ("[overlay]\ncaption = name\ntext_file = /dev/shm/t\ntext_position = bottom-left\n",
         "c.ini:4: [overlay] text_position and position are both bottom-left: the text would cover the captions; put one of them elsewhere"),
    ])
    func badValuesAreOneClearLine(text: String, message: String) {
        #expect(throws: ConfigError.self) { try Configuration.parse(text, file: "c.ini") }
        do {
            _ = try Configuration.parse(text, file: "c.ini")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func theCornersMayBeSetInAnyOrder() throws {
        // Moving the clock away after putting the caption in its default corner is fine.
        let text = "[overlay]\ncaption = date\nclock = HH:MM\nposition = top-right\nclock_position = top-left\n"
        let o = try Configuration.parse(text, file: "c.ini").overlay
        #expect(o.position == .topRight && o.clockPosition == .topLeft)
        // The text may share the clock's corner: it goes beneath the clock.
        let shared = try Configuration.parse("[overlay]\nclock = HH:MM\ntext_file = /dev/shm/t\ntext_position = top-right\n", file: "c.ini")
        #expect(shared[PushedTextSettings.self].textPosition == shared.overlay.clockPosition)
    }

    @Test func clockFormats() throws {
        let f24 = try #require(ClockFormat("HH:MM"))
        #expect(f24.text(hour: 7, minute: 5) == "07:05")
        #expect(f24.text(hour: 23, minute: 59) == "23:59")
        let h = try #require(ClockFormat("H.MM"))
        #expect(h.text(hour: 7, minute: 5) == "7.05")
        let f12 = try #require(ClockFormat("h:MM am"))
        #expect(f12.text(hour: 0, minute: 0) == "12:00 am")
        #expect(f12.text(hour: 12, minute: 30) == "12:30 pm")
        #expect(f12.text(hour: 19, minute: 5) == "7:05 pm")
        let padded = try #require(ClockFormat("hh:MM AM"))
        #expect(padded.text(hour: 9, minute: 41) == "09:41 AM")
        for bad in ["", "MM", "HH:HH:MM", "HH:MM:MM", "nonsense"] { #expect(ClockFormat(bad) == nil, "\(bad)") }
    }
}
