import Foundation
import Testing
import CarouselConfig
import CarouselCore

@Suite struct IniParserTests {
    @Test func sectionsKeysAndComments() throws {
        let text = """
        # a comment
        ; another
        [display]
        background = #102030        # a colour is a value, this is a comment
        connector=HDMI-A-1
          mode   =   1920x1080@60   ; trailing comment
        [input]
        calibration =               # empty, with a comment
        """
        let entries = try IniParser.parse(text, file: "t.ini")
        #expect(entries.map(\.value) == ["#102030", "HDMI-A-1", "1920x1080@60", ""])
        #expect(entries.map(\.line) == [4, 5, 6, 8])
        #expect(entries.map(\.section) == ["display", "display", "display", "input"])
    }

    @Test func crlfAndByteOrderMark() throws {
        let entries = try IniParser.parse("\u{FEFF}[log]\r\nlevel = debug\r\n", file: "t.ini")
        #expect(entries == [IniEntry(section: "log", key: "level", value: "debug", line: 2)])
    }

    @Test(arguments: [
        ("level = info", "t.ini:1: key 'level' before any [section]"),
        ("[log\nlevel = info", "t.ini:1: malformed section header '[log' (expected [name])"),
        ("[log]\njust words", "t.ini:2: expected 'key = value', '[section]' or a comment, got 'just words'"),
        ("[log]\n = info", "t.ini:2: missing key name before '='"),
        ("[log]\nlevel = info\nlevel = debug", "t.ini:3: duplicate key 'level' in [log] (first set on line 2)"),
        ("[a b]", "t.ini:1: malformed section name 'a b'"),
    ])
    func malformedLinesNameFileAndLine(text: String, message: String) {
        #expect(throws: ConfigError.self) { try IniParser.parse(text, file: "t.ini") }
        do {
            _ = try IniParser.parse(text, file: "t.ini")
        } catch {
            #expect(error.description == message)
        }
    }
}

@Suite struct ConfigurationTests {
    static let shipped: String = {
        // The repository's etc/carouseld/carouseld.ini, found from this source file.
        let here = URL(fileURLWithPath: #filePath)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("etc/carouseld/carouseld.ini"), encoding: .utf8)) ?? ""
    }()

    @Test func theShippedFileListsEveryKeyWithItsDefault() throws {
        #expect(!Self.shipped.isEmpty)
        let config = try Configuration.parse(Self.shipped, file: "carouseld.ini")
        #expect(config == Configuration())
        let keys = Set(try IniParser.parse(Self.shipped, file: "carouseld.ini").map { "\($0.section).\($0.key)" })
        let schema = Set(Schema.keys.map { "\($0.section).\($0.name)" })
        #expect(keys == schema)
    }

    @Test func everyKeyTakesAGoodValue() throws {
        let text = """
        [display]
        device = /dev/dri/card1
        connector = DSI-1
        mode = 800x480
        rotation = 270
        api = legacy
        background = #11223344
        zero_copy = false
        [input]
        seat = seat1
        touch_slop = 16
        calibration = 0 1 0 -1 0 1
        pointer = false
        keyboard = no
        [carousel]
        wrap = false
        vertical = true
        paging = false
        items_per_page = 3
        truncate_final_page = true
        alignment = edge
        item_size = 0.8
        spacing = 12
        bounces = false
        scroll_enabled = false
        deceleration_rate = 0.99
        autoscroll = -0.25
        start_index = 4
        [autoplay]
        enabled = false
        interval = 7.5
        transition = 0
        start_delay = 1
        resume_delay = 4
        direction = backward
        at_end = stop
        [images]
        path = /srv/pictures
        files = /a.jpg, /b.png
        order = mtime
        fit = cover
        max_pixels = 24000000
        cache_mb = 32
        [indicator]
        enabled = false
        position = right
        color = #00000080
        current_color = #FF0000
        size = 8
        spacing = 10
        margin = 16
        hides_for_single_page = false
        [control]
        socket = /tmp/c.sock
        mode = 0600
        group = kiosk
        allow_uids = 0, 1000
        allow_gids = 27
        max_clients = 4
        [log]
        level = debug
        """
        let c = try Configuration.parse(text, file: "all.ini")
        #expect(c.display.device == "/dev/dri/card1")
        #expect(c.display.connector == "DSI-1")
        #expect(c.display.mode?.description == "800x480")
        #expect(c.display.rotation == 270)
        #expect(c.display.api == .legacy)
        #expect(c.display.background == PixelColor(red: 0x11, green: 0x22, blue: 0x33, alpha: 0x44))
        #expect(!c.display.zeroCopy && Configuration().display.zeroCopy)
        #expect(c.input.seat == "seat1")
        #expect(c.carousel.touchSlop == 16)
        #expect(c.input.calibration == [0, 1, 0, -1, 0, 1])
        #expect(!c.input.pointer && !c.input.keyboard)
        #expect(!c.carousel.wrap && c.carousel.vertical && !c.carousel.paging)
        #expect(c.carousel.itemsPerPage == 3 && c.carousel.truncateFinalPage)
        #expect(c.carousel.alignment == .edge)
        #expect(c.carousel.itemSize == .fraction(0.8))
        #expect(c.carousel.spacing == 12)
        #expect(!c.carousel.bounces && !c.carousel.scrollEnabled)
        #expect(c.carousel.decelerationRate == 0.99)
        #expect(c.carousel.autoscroll == -0.25)
        #expect(c.carousel.startIndex == 4)
        #expect(!c.autoplay.enabled)
        #expect(c.autoplay.interval == 7.5 && c.autoplay.transition == 0)
        #expect(c.autoplay.startDelay == 1 && c.autoplay.resumeDelay == 4)
        #expect(c.autoplay.direction == .backward && c.autoplay.atEnd == .stop)
        #expect(c.images.path == "/srv/pictures" && c.images.files == ["/a.jpg", "/b.png"])
        #expect(c.images.order == .mtime && c.images.fit == .cover)
        #expect(c.images.maxPixels == 24_000_000 && c.images.cacheMB == 32)
        #expect(!c.indicator.enabled && c.indicator.position == .right)
        #expect(c.indicator.color.description == "#00000080" && c.indicator.currentColor.description == "#FF0000")
        #expect(c.indicator.size == 8 && c.indicator.spacing == 10 && c.indicator.margin == 16)
        #expect(!c.indicator.hidesForSinglePage)
        #expect(c.control.socket == "/tmp/c.sock" && c.control.mode == 0o600 && c.control.group == "kiosk")
        #expect(c.control.allowUIDs == [0, 1000] && c.control.allowGIDs == [27] && c.control.maxClients == 4)
        #expect(c.logLevel == .debug)
    }

    @Test func itemSizeAboveOneIsPixels() throws {
        let c = try Configuration.parse("[carousel]\nitem_size = 640\n", file: "x")
        #expect(c.carousel.itemSize == .pixels(640))
    }

    @Test(arguments: [
        ("[screen]\nx = 1", "c.ini:1: unknown section [screen] (known: [display], [input], [carousel], [autoplay], [zoom], [images], [video], [ken_burns], [web], [indicator], [control], [log], [power], [overlay], [mqtt], [sync])"),
        // A misspelt section is refused even with no key under it.
        ("[autoplay]\nenabled = true\n[imagez]\n", "c.ini:3: unknown section [imagez] (known: [display], [input], [carousel], [autoplay], [zoom], [images], [video], [ken_burns], [web], [indicator], [control], [log], [power], [overlay], [mqtt], [sync])"),
        ("[autoplay]\nintervall = 3", "c.ini:2: unknown key 'intervall' in [autoplay] (known: enabled, interval, transition, start_delay, resume_delay, direction, at_end, effect)"),
        ("[autoplay]\neffect = fade", "c.ini:2: effect = 'fade': expected one of: slide, crossfade, cut"),
        ("[images]\nfit = blurred", "c.ini:2: fit = 'blurred': expected one of: contain, cover, stretch, none, blur"),
        ("[images]\ndim = 1.5", "c.ini:2: dim = '1.5': out of range: allowed 0 to 1"),
        ("[images]\nblur_radius = -3", "c.ini:2: blur_radius = '-3': out of range: allowed 0 to 500 pixels"),
        ("[autoplay]\ninterval = soon", "c.ini:2: interval = 'soon': expected a number (seconds)"),
        ("[autoplay]\ninterval = 0", "c.ini:2: interval = '0': out of range: allowed 0.1 to 86400 seconds"),
        ("[carousel]\nwrap = maybe", "c.ini:2: wrap = 'maybe': expected true or false"),
        ("[carousel]\nalignment = left", "c.ini:2: alignment = 'left': expected one of: center, edge"),
        ("[carousel]\nitems_per_page = 1.5", "c.ini:2: items_per_page = '1.5': expected a whole number"),
        ("[carousel]\nitem_size = 0", "c.ini:2: item_size = '0': out of range: allowed 0.05 to 16384"),
        // Larger items trapped in the scaler (pixman's 16.16 fixed point) at start, on reload and on `set`.
        ("[carousel]\nitem_size = 16385", "c.ini:2: item_size = '16385': out of range: allowed 0.05 to 16384"),
        ("[display]\nrotation = 45", "c.ini:2: rotation = '45': expected 0, 90, 180 or 270"),
        ("[display]\nmode = big", "c.ini:2: mode = 'big': expected auto, WIDTHxHEIGHT or WIDTHxHEIGHT@HZ (e.g. 1920x1080@60)"),
        ("[display]\nbackground = black", "c.ini:2: background = 'black': expected a colour #RRGGBB or #RRGGBBAA"),
        ("[display]\ndevice = card0", "c.ini:2: device = 'card0': expected auto or an absolute path such as /dev/dri/card0"),
        ("[input]\ncalibration = 1 0 0", "c.ini:2: calibration = '1 0 0': expected six numbers (libinput calibration matrix), e.g. 1 0 0 0 1 0"),
        ("[control]\nmode = 0999", "c.ini:2: mode = '0999': expected octal permissions such as 0660"),
        ("[control]\nallow_uids = root", "c.ini:2: allow_uids = 'root': expected comma-separated numeric ids, got 'root'"),
        ("[control]\nsocket = run.sock", "c.ini:2: socket = 'run.sock': expected an absolute path shorter than 108 bytes"),
        ("[images]\nmax_pixels = 10", "c.ini:2: max_pixels = '10': out of range: allowed 1000000 to 1000000000"),
        ("[log]\nlevel = loud", "c.ini:2: level = 'loud': expected one of: error, warning, info, debug"),
    ])
    func badValuesNameFileLineKeyAndWhatIsAllowed(text: String, message: String) {
        do {
            _ = try Configuration.parse(text, file: "c.ini")
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func aHugeRejectedLineIsQuotedShortly() {
        // A 3 MB value used to be echoed whole into the error line (and the log).
        let huge = String(repeating: "9", count: 3_000_000)
        for text in ["[carousel]\nspacing = \(huge)\n", "[carousel]\n\(huge)\n", "[carousel]\n\(huge) = 1\n", "[\(huge)]\n"] {
            do {
                _ = try Configuration.parse(text, file: "c.ini")
                Issue.record("a 3 MB line was accepted")
            } catch {
                #expect(error.description.utf8.count < 400, "\(error.description.prefix(200))")
                #expect(error.description.hasPrefix("c.ini:"))
                #expect(error.description.contains("bytes)") || error.description.contains("unknown section"))
            }
        }
    }

    @Test func setTakesShortNamesWithModelKeysFirst() throws {
        var c = Configuration()
        try c.set("autoplay", "false")
        #expect(!c.autoplay.enabled)
        try c.set("spacing", "30")
        #expect(c.carousel.spacing == 30 && c.indicator.spacing == 12)
        try c.set("indicator.spacing", "5")
        #expect(c.indicator.spacing == 5)
        try c.set("touch_slop", "20")
        #expect(c.carousel.touchSlop == 20)
        #expect(throws: ValueError.self) { try c.set("nonsense", "1") }
        #expect(throws: ValueError.self) { try c.set("interval", "-1") }
    }

    @Test func idleOffIsMinutesFromZeroToAWeek() throws {
        #expect(try Configuration.parse("[power]\nidle_off = 15\n", file: "t.ini").power.idleOff == 15)
        #expect(try Configuration.parse("[power]\nidle_off = 0.5\n", file: "t.ini").power.idleOff == 0.5)
        #expect(Configuration().power.idleOff == 0, "never, unless asked")
        for bad in ["-1", "soon", "10081", "5m"] {
            do {
                _ = try Configuration.parse("[power]\nidle_off = \(bad)\n", file: "t.ini")
                Issue.record("idle_off = \(bad) was taken")
            } catch {
                #expect(error.description.contains("t.ini:2"), "\(error)")
                #expect(error.description.contains("idle_off"), "\(error)")
                #expect(error.description.contains("minutes"), "\(error)")
            }
        }
    }

    @Test func colourRoundTrip() {
        #expect(PixelColor(hex: "#FFFFFF80")?.description == "#FFFFFF80")
        #expect(PixelColor(hex: "#0a0B0c")?.description == "#0A0B0C")
        #expect(PixelColor(hex: "#12345") == nil)
        #expect(PixelColor(hex: "123456") == nil)
        #expect(PixelColor(hex: "#GG0000") == nil)
    }
}

/// `WxH[@Hz]` as the INI file, `--display offscreen:` and `drm-test --mode` read it.
@Suite("Mode requests: WxH[@Hz]")
struct ModeRequestTests {
    @Test("valid requests")
    func valid() {
        #expect(ModeRequest("1920x1080").map { [$0.width, $0.height] } == [1920, 1080])
        #expect(ModeRequest("1920x1080")?.refresh == nil)
        #expect(ModeRequest("1280x800@60").map { [$0.width, $0.height, $0.refresh] } == [1280, 800, 60])
        #expect(ModeRequest("800x480@75")?.description == "800x480@75")
    }

    @Test("invalid requests", arguments: ["", "1920", "1920x", "x1080", "1920x1080@", "1920x1080@0", "0x1080",
                                          "1920X1080", "1920x1080@60@1", "-1x5", "1920x1080@59.94", "auto"])
    func invalid(text: String) {
        #expect(ModeRequest(text) == nil)
    }
}
