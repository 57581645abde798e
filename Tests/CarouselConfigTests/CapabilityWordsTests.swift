// What the capabilities declare in their rooms (CapabilityWords) reaching
// the house: their keys in the schema with their sections, places and
// grants, their settings in the configuration under their own types, their
// checks at parse and at `set`, their requests and entities without clashes.

import CarouselCapabilities
import CarouselClipsWords
import CarouselConfig
import CarouselPresenceWords
import CarouselPushedTextWords
import Testing

@Suite("capabilities' words in the house") struct CapabilityWordsTests {
    @Test func settingsNeverSetReadAsTheirDefaultsAndCompareSo() throws {
        let empty = try Configuration.parse("", file: "c.ini")
        #expect(empty[VideoSettings.self] == VideoSettings())
        let spelled = try Configuration.parse("[video]\nenabled = true\nloop = false\nmax_seconds = 120\n", file: "c.ini")
        #expect(spelled == empty, "every key at its default: the same configuration")
        var looped = empty
        try looped.set("video.loop", "true")
        #expect(looped != empty, "a capability's setting is part of what a reload compares")
        #expect(looped[VideoSettings.self].loop)
        #expect(looped[PresenceSettings.self] == PresenceSettings(), "one capability's change leaves the others'")
    }

    @Test func everyDeclaredKeyIsInTheSchemaWithItsGrant() throws {
        let keys = Capabilities.all.flatMap(\.keys)
        #expect(keys.count == 5 + 4 + 2 + 7 + 7,
                "video's five, the presence sensor's four, pushed text's two, Ken Burns's seven, the web page's seven")
        for key in keys {
            let spec = try #require(Schema.lookup("\(key.section).\(key.name)"), "\(key.section).\(key.name)")
            #expect(spec.accepts == key.accepts && spec.defaultValue == key.defaultValue && spec.help == key.help)
            #expect(Schema.capability(ofKey: "\(key.section).\(key.name)") == key.capability)
        }
        // Placed where their `after` says, in the house's sections.
        let overlay = Schema.keys.filter { $0.section == "overlay" }.map(\.name)
        let clock = try #require(overlay.firstIndex(of: "clock_position"))
        #expect(Array(overlay[clock...].prefix(3)) == ["clock_position", "text_file", "text_position"])
        // A capability's own section follows [images].
        let sections = Schema.sectionNames
        #expect(sections.firstIndex(of: "video") == sections.firstIndex(of: "images").map { $0 + 1 })
    }

    @Test func aCapabilitysCheckHoldsAtParseAndAtSet() throws {
        let text = "[overlay]\ncaption = name\ntext_file = /dev/shm/t\ntext_position = bottom-left\n"
        let error = #expect(throws: ConfigError.self) { try Configuration.parse(text, file: "c.ini") }
        #expect(error?.description.hasPrefix("c.ini:4: [overlay] text_position and position are both bottom-left") == true)
        // `set` of the house's key that makes the conflict is refused by the capability's check.
        var config = try Configuration.parse("[overlay]\ntext_file = /dev/shm/t\ntext_position = bottom-left\n", file: "c.ini")
        #expect(throws: ValueError.self) { try config.set("overlay.caption", "name") }
        #expect(config.overlay.caption == .none, "a refused set changes nothing")
    }

    @Test func requestsAndEntitiesDoNotClash() {
        let requests = Capabilities.all.flatMap(\.requests).map(\.name)
        #expect(Set(requests).count == requests.count)
        let entities = Capabilities.all.flatMap(\.entities).map(\.object)
        #expect(Set(entities).count == entities.count)
        let status = Capabilities.all.flatMap(\.status).map(\.name)
        #expect(Set(status).count == status.count)
        let events = Capabilities.all.flatMap(\.events).map(\.name)
        #expect(Set(events).count == events.count)
        #expect(events.contains(ClipsWords.didStartVideo) && events.contains(PresenceWords.didLosePresence))
    }

    @Test func entitiesAreShownByTheSettings() throws {
        #expect(Capabilities.entities(shownWith: Configuration()).map(\.object) == ["text"])
        let sensed = try Configuration.parse("[power]\npresence = gpio:gpiochip0:17\n", file: "c.ini")
        #expect(Capabilities.entities(shownWith: sensed).map(\.object) == ["presence", "text"])
    }
}

@Suite("capabilities' words in the README") struct CapabilityWordsDocsTests {
    @Test func theReadmeTablesEveryRequestFieldEventAndEntity() {
        let readme = SchemaDocsTests.committed(SchemaDocs.readmePath)
        #expect(readme.contains(SchemaDocs.wordsBegin) && readme.contains(SchemaDocs.wordsEnd),
                "README.md lacks the capabilities' table's marker lines")
        for words in Capabilities.all {
            for request in words.requests { #expect(readme.contains("| \(words.name) | `\(request.usage)` | request: ")) }
            for field in words.status { #expect(readme.contains("| \(words.name) | `\(field.name)` | field of `status`")) }
            for event in words.events { #expect(readme.contains("| \(words.name) | `\(event.name)` | event ")) }
            for entity in words.entities { #expect(readme.contains("| \(words.name) | \(entity.name) | Home Assistant \(entity.component)")) }
        }
    }
}
