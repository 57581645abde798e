import CarouselConfig
import CarouselCore
import Foundation
import Testing

@Suite("carouseld.ini, its drop-ins and the frame's settings file, one over the other")
struct LayerTests {
    let main = ConfigurationLayer(text: "[autoplay]\ninterval = 5\n[images]\npath = /srv/pictures\n", file: "c.ini")
    let dropIn = ConfigurationLayer(text: "[autoplay]\ninterval = 7\ntransition = 0.5\n", file: "c.ini.d/10.ini")
    func settings(_ text: String) -> ConfigurationLayer {
        ConfigurationLayer(text: text, file: "settings.ini", allows: [.look, .drive, .tune, .configure], lenient: true)
    }

    @Test func laterFilesWinAndSayWhere() throws {
        let (config, sources) = try Configuration.parse(layers: [main, dropIn, settings("[autoplay]\ninterval = 9\n")])
        #expect(config.autoplay.interval == 9)
        #expect(config.autoplay.transition == 0.5)
        #expect(config.images.path == "/srv/pictures")
        #expect(sources.entries["autoplay.interval"] == .init(value: "9", file: "settings.ini", line: 2))
        #expect(sources.entries["autoplay.transition"] == .init(value: "0.5", file: "c.ini.d/10.ini", line: 3))
        #expect(sources.entries["images.path"] == .init(value: "/srv/pictures", file: "c.ini", line: 4))
        #expect(sources.entries["autoplay.direction"] == nil, "a key at its default comes from no file")
        #expect(sources.ignored.isEmpty)
    }

    @Test func theSettingsFileNeverTakesAnAdministeredKeyNorStopsTheFrame() throws {
        let (config, sources) = try Configuration.parse(layers: [
            main, settings("[images]\npath = /etc\n[autoplay]\nbogus = 1\ninterval = 3\ntransition = nonsense\n"),
        ])
        #expect(config.images.path == "/srv/pictures", "a path from the settings file")
        #expect(config.autoplay.interval == 3)
        #expect(sources.ignored.count == 3)
        #expect(sources.ignored[0].hasPrefix("settings.ini:2: images.path is not taken from this file: it needs administer"))
        #expect(sources.ignored[1].hasPrefix("settings.ini:4: unknown key 'bogus'"))
        #expect(sources.ignored[2].hasPrefix("settings.ini:6: transition = 'nonsense'"))
        let broken = try Configuration.parse(layers: [main, settings("not ini at all\n")])
        #expect(broken.configuration.autoplay.interval == 5)
        #expect(broken.sources.ignored.count == 1)
    }

    @Test func theAdministratorsFilesStayStrict() {
        #expect(throws: ConfigError(file: "c.ini.d/10.ini", line: 2, message:
            "unknown key 'intervall' in [autoplay] (known: enabled, interval, transition, start_delay, resume_delay, direction, at_end, effect)"))
        {
            try Configuration.parse(layers: [main, ConfigurationLayer(text: "[autoplay]\nintervall = 7\n", file: "c.ini.d/10.ini")])
        }
    }

    @Test func aCheckOfSeveralKeysIsReportedInTheLastFileThatTouchedThem() {
        let clock = ConfigurationLayer(text: "[overlay]\nclock = HH:MM\nclock_position = top-right\n", file: "c.ini")
        let caption = ConfigurationLayer(text: "[overlay]\ncaption = name\nposition = top-right\n", file: "c.ini.d/20.ini")
        #expect(throws: ConfigError.self) { try Configuration.parse(layers: [clock, caption]) }
        do {
            _ = try Configuration.parse(layers: [clock, caption])
        } catch {
            #expect(error.file == "c.ini.d/20.ini" && error.line == 3, "\(error)")
        }
    }

    @Test func theSettingsFileIsWrittenWholeInTheSchemasOrder() throws {
        var text = try SettingsFile.updated(nil, file: "s.ini", section: "autoplay", key: "interval", value: "9")
        text = try SettingsFile.updated(text, file: "s.ini", section: "carousel", key: "item_size", value: "0.8")
        text = try SettingsFile.updated(text, file: "s.ini", section: "autoplay", key: "interval", value: "4")
        let entries = try IniParser.parse(text, file: "s.ini")
        #expect(entries.map { "\($0.section).\($0.key)=\($0.value)" } == ["carousel.item_size=0.8", "autoplay.interval=4"])
        text = try SettingsFile.updated(text, file: "s.ini", section: "carousel", key: "item_size", value: nil)
        #expect(try IniParser.parse(text, file: "s.ini").map(\.key) == ["interval"])
        let (config, _) = try Configuration.parse(layers: [settings(text)])
        #expect(config.autoplay.interval == 4)
    }

    @Test func theFilesOnDiskDropInsInNameOrderAndASettingsFileThatCannotBeRead() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("layers-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/c.ini.d", withIntermediateDirectories: true)
        let settings = folder + "/settings.ini"
        try "[autoplay]\ninterval = 5\n[control]\nsettings = \(settings)\n".write(toFile: folder + "/c.ini", atomically: true, encoding: .utf8)
        try "[autoplay]\ninterval = 7\n".write(toFile: folder + "/c.ini.d/20-b.ini", atomically: true, encoding: .utf8)
        try "[autoplay]\ninterval = 6\ntransition = 0.4\n".write(toFile: folder + "/c.ini.d/10-a.ini", atomically: true, encoding: .utf8)
        try "[autoplay]\ninterval = 99\n".write(toFile: folder + "/c.ini.d/30-c.ini.off", atomically: true, encoding: .utf8)
        var (config, sources) = try readConfigurationLayers(folder + "/c.ini")
        #expect(config.autoplay.interval == 7 && config.autoplay.transition == 0.4, "20-b.ini after 10-a.ini; .off ignored")
        #expect(sources.entries["autoplay.interval"]?.file == folder + "/c.ini.d/20-b.ini")
        try "[autoplay]\ninterval = 9\n".write(toFile: settings, atomically: true, encoding: .utf8)
        (config, sources) = try readConfigurationLayers(folder + "/c.ini")
        #expect(config.autoplay.interval == 9 && sources.entries["autoplay.interval"]?.file == settings)
        // A settings file that cannot be read (here a folder) is left out, never fatal.
        try FileManager.default.removeItem(atPath: settings)
        try FileManager.default.createDirectory(atPath: settings, withIntermediateDirectories: true)
        (config, _) = try readConfigurationLayers(folder + "/c.ini")
        #expect(config.autoplay.interval == 7)
    }
}
