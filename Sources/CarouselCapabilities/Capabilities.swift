import CarouselClipsWords
import CarouselKenBurnsWords
import CarouselPairingWords
import CarouselPresenceWords
import CarouselPushedTextWords
import CarouselWebWords
import CarouselWords

/// Every capability that declares its words (`CapabilityWords`): a new
/// capability is its room plus one line here, and one where the daemon
/// registers its service. The schema, `help`, MQTT discovery and the
/// documents read this list; nothing else names a capability's words.
public enum Capabilities {
    public static let all: [CapabilityWords] = [
        ClipsWords.words,
        PresenceWords.words,
        PushedTextWords.words,
        KenBurnsWords.words,
        WebWords.words,
        PairingWords.words,
    ]

    /// The entities MQTT discovery announces for `settings`.
    public static func entities(shownWith settings: any SettingsReading) -> [EntityWords] {
        all.flatMap(\.entities).filter { $0.shown?(settings) ?? true }
    }
}
