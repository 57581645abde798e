// `[power] presence` and its companions: the two kinds of sensor as written,
// the key names as Linux spells them, and what a bad value is told.

import CarouselConfig
import CarouselPresenceWords
import Testing

@Suite("[power] presence") struct PresenceConfigTests {
    @Test func gpioTakesAChipByNamePathOrLabelAndALineByNumberOrName() throws {
        #expect(try PresenceSource.parse("gpio:gpiochip0:17") == .gpio(chip: "gpiochip0", line: .offset(17)))
        #expect(try PresenceSource.parse("gpio:/dev/gpiochip4:GPIO17") == .gpio(chip: "/dev/gpiochip4", line: .named("GPIO17")))
        // A label may hold a colon: the line follows the last one.
        #expect(try PresenceSource.parse("GPIO:pinctrl-bcm2711:a:PIR") == .gpio(chip: "pinctrl-bcm2711:a", line: .named("PIR")))
        #expect(try PresenceSource.parse("  ") == nil)
        #expect(try PresenceSource.parse("gpio:gpiochip0:17")?.description == "gpio:gpiochip0:17")
    }

    @Test func keyTakesLinuxNamesInAnyCase() throws {
        #expect(try PresenceSource.parse("key:KEY_F13") == .key(code: 183, name: "KEY_F13"))
        #expect(try PresenceSource.parse("key:key_f13") == .key(code: 183, name: "KEY_F13"))
        #expect(try PresenceSource.parse("key:BTN_0") == .key(code: 0x100, name: "BTN_0"))
        // An alias resolves to its key's code.
        #expect(try PresenceSource.parse("key:KEY_HANGUEL") == .key(code: 122, name: "KEY_HANGUEL"))
    }

    @Test func theOtherKeysAndTheirDefaults() throws {
        let plain = try Configuration.parse("[power]\n", file: "c.ini")
        #expect(plain[PresenceSettings.self].source == nil && !plain[PresenceSettings.self].activeLow)
        #expect(plain[PresenceSettings.self].debounce == 0.05 && plain[PresenceSettings.self].atNight == .sleep)
        let c = try Configuration.parse("""
            [power]
            presence = gpio:gpiochip0:17
            presence_active_low = true
            presence_debounce = 0
            presence_at_night = wake
            """, file: "c.ini")
        #expect(c[PresenceSettings.self].source == .gpio(chip: "gpiochip0", line: .offset(17)))
        #expect(c[PresenceSettings.self].activeLow && c[PresenceSettings.self].debounce == 0 && c[PresenceSettings.self].atNight == .wake)
    }

    @Test(arguments: [
        ("[power]\npresence = pir", "c.ini:2: presence = 'pir': expected gpio:CHIP:LINE (e.g. gpio:gpiochip0:17) or key:NAME (e.g. key:KEY_F13)"),
        ("[power]\npresence = gpio:17", "c.ini:2: presence = 'gpio:17': expected gpio:CHIP:LINE, e.g. gpio:gpiochip0:17 (the chip, then the line's number or name)"),
        ("[power]\npresence = gpio:gpiochip0:", "c.ini:2: presence = 'gpio:gpiochip0:': expected gpio:CHIP:LINE, e.g. gpio:gpiochip0:17 (the chip, then the line's number or name)"),
        ("[power]\npresence = gpio:/sys/gpiochip0:1", "c.ini:2: presence = 'gpio:/sys/gpiochip0:1': a chip given by path is under /dev (e.g. /dev/gpiochip0)"),
        ("[power]\npresence = key:F13", "c.ini:2: presence = 'key:F13': 'F13' is not a Linux key name (e.g. key:KEY_F13 or key:BTN_0, as in linux/input-event-codes.h)"),
        ("[power]\npresence_debounce = 11", "c.ini:2: presence_debounce = '11': out of range: allowed 0 to 10 seconds"),
        ("[power]\npresence_at_night = on", "c.ini:2: presence_at_night = 'on': expected one of: sleep, wake"),
    ])
    func badValuesSayWhatIsAllowed(text: String, message: String) {
        do {
            _ = try Configuration.parse(text, file: "c.ini")
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.description == message)
        }
    }
}
